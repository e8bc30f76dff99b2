package redact

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// onlyRule returns a pipeline running rule r alone (no PII, no home).
func onlyRule(r rule) *Pipeline {
	p := NewPipeline(Options{NoPII: true})
	p.table = func() []rule { return []rule{r} }
	return p
}

// TestRules checks every rule's own samples: each true positive is redacted
// by the rule alone, each false positive passes the whole pipeline intact.
func TestRules(t *testing.T) {
	full := NewPipeline(Options{})
	seen := map[string]bool{}
	for _, r := range rules() {
		t.Run(r.id, func(t *testing.T) {
			if seen[r.id] {
				t.Fatalf("duplicate rule id")
			}
			seen[r.id] = true
			if (r.pattern == "") == (r.scan == nil) {
				t.Fatalf("a rule has either a pattern or a scanner")
			}
			for _, pat := range []string{r.pattern, r.inner} {
				if _, err := syntax.Parse(pat, syntax.Perl); pat != "" && err != nil {
					t.Fatalf("pattern %q: %v", pat, err)
				}
			}
			if len(r.keywords) == 0 || len(ruleSamples[r.id].tp) == 0 || len(ruleSamples[r.id].fp) == 0 {
				t.Fatalf("a rule needs keywords and both kinds of samples")
			}
			for _, kw := range r.keywords {
				if kw != strings.ToLower(kw) && !r.exact {
					t.Errorf("keyword %q not lower case", kw)
				}
			}
			p := onlyRule(r)
			for _, s := range ruleSamples[r.id].tp {
				got := p.Text(s)
				if !strings.Contains(got, secretMark) {
					t.Errorf("true positive not redacted: %q -> %q", s, got)
				}
			}
			for _, s := range ruleSamples[r.id].fp {
				if got := full.Text(s); got != s {
					t.Errorf("false positive redacted: %q -> %q", s, got)
				}
			}
		})
	}
}

func TestTextPipeline(t *testing.T) {
	env := map[string]string{"MY_TOKEN": "s3cr3t-v4lue", "SHORT": "ab"}
	p := NewPipeline(Options{
		Home:      "/srv/op",
		SecretEnv: []string{"MY_TOKEN", "SHORT", "UNSET"},
		Getenv:    func(k string) string { return env[k] },
	})
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"floor password", "password=hunter2", "password=" + secretMark},
		{"floor token colon", "token: abc", "token: " + secretMark},
		{"floor api_key", "api_key = xyz", "api_key = " + secretMark},
		{"floor aws", "key AKIAIOSFODNN7EXAMPLE.", "key " + secretMark + "."},
		{"floor bearer", "Authorization: Bearer abc123def456", "Authorization: Bearer " + secretMark},
		{"floor jwt", "t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln end", "t " + secretMark + " end"},
		{"floor pem", "-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\nok", secretMark + "\nok"},
		{"pem json escaped", `"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"`, `"` + secretMark + `\n"`},
		{"quoted json", `{"password": "a b c", "user": "x"}`, `{"password": "` + secretMark + `", "user": "x"}`},
		{"escaped json", `{\"client_secret\": \"abc\"}`, `{\"client_secret\": \"` + secretMark + `\"}`},
		{"x-api-key header", "X-Api-Key: k-123", "X-Api-Key: " + secretMark},
		{"auth token scheme", "Authorization: token abc123", "Authorization: token " + secretMark},
		{"url creds", "git clone https://bob:pa55@example.com/r.git", "git clone https://bob:" + secretMark + "@example.com/r.git"},
		{"conn string", "Server=db;Password=Pa55;Database=x", "Server=db;Password=" + secretMark + ";Database=x"},
		{"query token", "https://x.io/cb?access_token=abc123&state=ok", "https://x.io/cb?access_token=" + secretMark + "&state=ok"},
		{"env value", "echo s3cr3t-v4lue done", "echo " + secretMark + " done"},
		{"env short ignored", "ab ab", "ab ab"},
		{"home configured", "/srv/op/code and /srv/opx", "~/code and /srv/opx"},
		{"home only the user's own", "/home/alice/a /Users/bob/b /srv/op/x", "/home/alice/a /Users/bob/b ~/x"},
		{"home inside another path", "/mnt/backup/srv/op/a x/srv/op y=/srv/op:/srv/op/b", "/mnt/backup/srv/op/a x/srv/op y=~:~/b"},
		{"home in a file url", "file:///srv/op/a.txt", "file://~/a.txt"},
		{"email", "mail a.b+c@mail.example.org.", "mail " + piiMark + "."},
		{"phone e164", "call +442079460958 now", "call " + piiMark + " now"},
		{"phone nanp", "call 415-555-0123 or (415) 555 0123 or 1 415 555 0123", "call " + piiMark + " or " + piiMark + " or " + piiMark},
		{"order secrets before pii", "password=bob@example.com", "password=" + secretMark},
		{"prose", "the bearer of good news is the secret to fast builds", "the bearer of good news is the secret to fast builds"},
		{"versions and times", "v1.2.3 go1.26.0 at 2026-07-03T10:15:04.221Z epoch 1720000000 1720000000000", "v1.2.3 go1.26.0 at 2026-07-03T10:15:04.221Z epoch 1720000000 1720000000000"},
		{"ids", "commit 3f786850e387550fdab836ed7e6dc881de23001b uuid 550e8400-e29b-41d4-a716-446655440000 ulid 01JX9YB3P4T9ZK3V8Q2W6E5R7T sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "commit 3f786850e387550fdab836ed7e6dc881de23001b uuid 550e8400-e29b-41d4-a716-446655440000 ulid 01JX9YB3P4T9ZK3V8Q2W6E5R7T sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"model params", "max_tokens: 4096, tokenizer=cl100k_base, token_count=12", "max_tokens: 4096, tokenizer=cl100k_base, token_count=12"},
		{"ip and port", "listen 192.168.1.10:8080 and 10.0.0.1", "listen 192.168.1.10:8080 and 10.0.0.1"},
		{"npm scope and version", "npm i @scope/pkg lodash@4.17.21", "npm i @scope/pkg lodash@4.17.21"},
		{"pin prompt", "Permission requested: shell — rm -rf build (clean build dir)", "Permission requested: shell — rm -rf build (clean build dir)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Text(tt.in); got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
	if got := NewPipeline(Options{NoPII: true}).Text("a@example.com 415-555-0123"); got != "a@example.com 415-555-0123" {
		t.Errorf("NoPII: got %q", got)
	}
}

func TestCredentialKey(t *testing.T) {
	yes := []string{"password", "PASSWORD", "passwd", "aws_secret_access_key", "X-Api-Key", "client_secret",
		"refreshToken", "access_token", "GITHUB_TOKEN", "apiKey", "api-key", "private_key", "db_pass",
		"Authorization", "credentials", "signing.key", "AccountKey"}
	no := []string{"max_tokens", "tokenizer", "token_type", "token_count", "secret_name", "key", "keys",
		"password_file", "bypass", "compass", "author", "monkey", "input_tokens", "pwd", "cwd", ""}
	for _, k := range yes {
		if !CredentialKey(k) {
			t.Errorf("CredentialKey(%q) = false", k)
		}
	}
	for _, k := range no {
		if CredentialKey(k) {
			t.Errorf("CredentialKey(%q) = true", k)
		}
	}
}

func TestValueWalker(t *testing.T) {
	p := NewPipeline(Options{Home: "/home/op"})
	in := map[string]any{
		"command":  "cat /home/op/.netrc && echo password=hunter2",
		"password": "plain words",
		"Api-Key":  float64(12345),
		"tokens":   float64(4096),
		"nested": map[string]any{
			"client_secret": "x",
			"list":          []any{"mail me@example.com", true, nil, float64(1.5)},
			"credentials":   []any{"a1", map[string]any{"note": "ok"}},
		},
		"empty_token": "",
	}
	got := p.Value(in).(map[string]any)
	want := map[string]any{
		"command":  "cat ~/.netrc && echo password=" + secretMark,
		"password": secretMark,
		"Api-Key":  secretMark,
		"tokens":   float64(4096),
		"nested": map[string]any{
			"client_secret": secretMark,
			"list":          []any{"mail me" + piiMark[0:0] + piiMark, true, nil, float64(1.5)},
			"credentials":   []any{secretMark, map[string]any{"note": "ok"}},
		},
		"empty_token": "",
	}
	want["nested"].(map[string]any)["list"].([]any)[0] = "mail " + piiMark
	if string(Canonical(got)) != string(Canonical(want)) {
		t.Errorf("Value:\n got %s\nwant %s", Canonical(got), Canonical(want))
	}
	if in["password"] != "plain words" {
		t.Errorf("Value modified its input")
	}
}

// TestValueFormWords: keys a form or a record names a secret by (a PIN, an
// OTP, a CVV) hide their scalar values, and a {name, value} pair whose name
// may hold a credential hides a value that looks like one; booleans, words,
// versions and descriptive pairs stay.
func TestValueFormWords(t *testing.T) {
	p := NewPipeline(Options{NoPII: true})
	tests := []struct{ in, want map[string]any }{
		{map[string]any{"pin": "0420", "cvv": float64(123), "card_number": "4111 1111 1111 1111"},
			map[string]any{"pin": secretMark, "cvv": secretMark, "card_number": secretMark}},
		{map[string]any{"mfa": "required", "pin": "v1.2.0", "pin_length": float64(6)},
			map[string]any{"mfa": "required", "pin": "v1.2.0", "pin_length": float64(6)}},
		{map[string]any{"field": "license", "value": "QX7F2-K9M4T-P3W8R-L6B1Z"},
			map[string]any{"field": "license", "value": secretMark}},
		{map[string]any{"field": "license", "value": "MIT"}, map[string]any{"field": "license", "value": "MIT"}},
		{map[string]any{"name": "session", "value": "default"}, map[string]any{"name": "session", "value": "default"}},
	}
	for _, tt := range tests {
		if got := p.Value(tt.in); string(Canonical(got)) != string(Canonical(tt.want)) {
			t.Errorf("Value(%s)\n got %s\nwant %s", Canonical(tt.in), Canonical(got), Canonical(tt.want))
		}
	}
}

// TestHomePaths holds rule (c) to its one promise: the user's own home,
// exactly, as a whole prefix at a path boundary, and no other path.
func TestHomePaths(t *testing.T) {
	tests := []struct{ home, in, want string }{
		{"/home/alice", "/mnt/backup/home/projects/report.txt", "/mnt/backup/home/projects/report.txt"},
		{"/home/alice", "/srv/home/www/index.html", "/srv/home/www/index.html"},
		{"/home/alice", "/home/bob/notes.txt", "/home/bob/notes.txt"},
		{"/home/alice", "cat /home/alice/notes.txt", "cat ~/notes.txt"},
		{"/home/alice/", `{"cwd":"/home/alice","file":"/home/alice/src/a.go"}`, `{"cwd":"~","file":"~/src/a.go"}`},
		{"/home/alice", "/home/alicex/a /home/alice.bak/b /backup/home/alice/c", "/home/alicex/a /home/alice.bak/b /backup/home/alice/c"},
		{"/tmp/x/home", "/tmp/x/home/foo/bar.txt", "~/foo/bar.txt"},
		{"/tmp/x/home", "/tmp/x/homework/a /tmp/x/home/home/b", "/tmp/x/homework/a ~/home/b"},
		{"/Users/carol", "PATH=/usr/bin:/Users/carol/bin:/Users/dave/bin", "PATH=/usr/bin:~/bin:/Users/dave/bin"},
		{`C:\Users\carol`, `C:\Users\carol\d c:\users\carol\x C:\\Users\\carol\\e C:/Users/carol/f D:\Users\carol\g`, `~\d ~\x ~\\e ~/f D:\Users\carol\g`},
		{"/home/alice", "the build ran in /home/alice. Then /home/alice, and (/home/alice/x.go)", "the build ran in ~. Then ~, and (~/x.go)"},
		{"", "/home/alice/a", "/home/alice/a"},
	}
	for _, tt := range tests {
		p := NewPipeline(Options{Home: tt.home, NoPII: true})
		if got := p.Text(tt.in); got != tt.want {
			t.Errorf("home %q: Text(%q)\n got %q\nwant %q", tt.home, tt.in, got, tt.want)
		}
	}
}

// TestWordSets keeps every word set's words within maxSetWord, the bound
// wordSet.has answers longer words by.
func TestWordSets(t *testing.T) {
	for _, ws := range []wordSet{typeWords, strongLastAlone, strongLastAfter, strongWords, weakWords, descriptors,
		fileExts, formWords, secretFormats, proseStop, codeQualifiers, phraseQualifiers, pinQualifiers, proseVerbs,
		proseBreaks, cookieAttrs, placeholderExact, pairNames, pairValues, setVerbs, codeWords, mnemonicAbsent} {
		for _, w := range strings.Fields(string(ws)) {
			if len(w) > maxSetWord {
				t.Errorf("word %q is longer than maxSetWord", w)
			}
		}
	}
}
