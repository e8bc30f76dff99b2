package redact

import "strings"

// rule is one secret detector, as data (after gitleaks): a regular
// expression (RE2: linear time) that only runs in windows around a cheap
// keyword hit, with true- and false-positive samples checked by
// TestRules.
type rule struct {
	id string
	// keywords are lower-case literals; the pattern runs only within
	// [hit-back, hit+fwd] of a case-insensitive occurrence, extended to the
	// end of the token there.
	keywords  []string
	pattern   string
	back, fwd int
	// groups lists the submatches to redact; the first that participated
	// is replaced. Empty means the whole match.
	groups []int
	// scan, instead of a pattern, recognizes an assignment around a keyword
	// hit at i (keyword length k) by a linear scan: it returns the key
	// name, where the value starts, and whether the value may not start
	// with '-'. The value (quoted or bare) is then parsed by hand.
	scan func(s string, i, k int) (key string, value int, noDash, ok bool)
	// check, when set, vets the redacted text.
	check  func(string) bool
	tp, fp []string
}

const (
	secretMark = "[REDACTED:secret]"
	piiMark    = "[REDACTED:pii]"
)

// rules returns the secret rules in a fixed order. The table is built per
// call; a Pipeline keeps its own copy with lazily compiled patterns.
func rules() []rule {
	return []rule{
		{
			id:       "pem-block",
			keywords: []string{"-----begin"},
			// A whole block, or a truncated one up to the end of its body,
			// also with JSON-escaped newlines.
			pattern: `-----BEGIN[A-Z0-9 ]{0,64}-----(?:[\s\S]*?-----END[A-Z0-9 ]{0,64}-----|(?:[A-Za-z0-9+/=:,.\-\s]|\\[nrt])*)`,
			back:    1, fwd: 16384,
			tp: []string{
				"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
				`{"key":"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"}`,
				"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
			},
			fp: []string{"----- begin here -----", "the BEGIN marker"},
		},
		{
			id:       "aws-access-key-id",
			keywords: []string{"akia", "asia", "abia", "acca", "a3t"},
			pattern:  `(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`,
			back:     1, fwd: 24,
			tp: []string{"AKIAIOSFODNN7EXAMPLE", "id=ASIAY34FZKBOKMUTVV7A;"},
			fp: []string{"AKIA-short", "akiaiosfodnn7example"},
		},
		{
			id:       "github-token",
			keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			pattern:  `\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`,
			back:     1, fwd: 300,
			tp: []string{"ghp_0123456789abcdefghijABCDEFGHIJ012345", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV"},
			fp: []string{"ghp_short", "the ghs_ prefix"},
		},
		{
			id:       "gitlab-token",
			keywords: []string{"glpat-", "glptt-", "glrt-", "gldt-", "glft-", "glsoat-"},
			pattern:  `\bgl(?:pat|ptt|rt|dt|ft|soat)-[A-Za-z0-9_\-]{20,}`,
			back:     1, fwd: 100,
			tp: []string{"glpat-xxxxXXXX1234567890ab", "GITLAB_TOKEN=glrt-AbCdEfGhIjKlMnOpQrSt12"},
			fp: []string{"glpat-short"},
		},
		{
			id:       "slack-token",
			keywords: []string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxe", "xapp-"},
			pattern:  `\bx(?:ox[baprse](?:\.xox[bp])?|app)-[A-Za-z0-9\-]{10,}`,
			back:     1, fwd: 300,
			tp: []string{"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xapp-1-A0123456789-0123456789012-abcdef"},
			fp: []string{"xoxb-1"},
		},
		{
			id:       "slack-webhook",
			keywords: []string{"hooks.slack.com/"},
			pattern:  `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}`,
			back:     1, fwd: 200,
			tp: []string{"https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
			fp: []string{"https://hooks.slack.com/"},
		},
		{
			id:       "discord-webhook",
			keywords: []string{"/api/webhooks/"},
			pattern:  `discord(?:app)?\.com/api/webhooks/[0-9]{10,20}/[A-Za-z0-9_\-]{30,}`,
			back:     20, fwd: 200,
			tp: []string{"https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789ABCD"},
			fp: []string{"https://example.com/api/webhooks/12"},
		},
		{
			id: "sk-token",
			// OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-api03-,
			// sk-ant-admin01-), DeepSeek and other sk- keys.
			keywords: []string{"sk-"},
			pattern:  `\bsk-[A-Za-z0-9_\-]{20,}`,
			back:     1, fwd: 300,
			check: hasDigit,
			tp: []string{
				"OPENAI_API_KEY sk-proj-AbCdEf0123456789AbCdEf0123456789AbCd",
				"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ-abcdefghij_0123456789AA",
				"sk-0123456789abcdefghijT3BlbkFJ0123456789abcdefghij",
			},
			fp: []string{"task-list-is-long-enough-here", "the sk-learning-rate-scheduler-option"},
		},
		{
			id:       "prefixed-api-key",
			keywords: []string{"hf_", "api_org_", "npm_", "gsk_", "xai-", "pplx-", "r8_", "dop_v1_", "doo_v1_", "dor_v1_", "lin_api_", "sntrys_", "sntryu_", "glc_", "glsa_", "pmak-", "ops_", "fo1_", "shpat_", "shpss_", "shpca_", "shppa_", "dapi", "pul-", "sq0atp-", "sq0csp-", "hvs.", "hvb.", "rk_live_", "sk_live_", "rk_test_", "sk_test_", "whsec_", "gocspx-", "ya29.", "aiza", "sg.", "age-secret-key-1", "atatt3", "dp.pt.", "nfp_", "tfp_", "rubygems_", "oy2", "key-", "figd_", "pscale_", "ntn_", "secret_"},
			pattern:  `\b(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|do[opr]_v1_[a-f0-9]{64}|lin_api_[A-Za-z0-9]{40}|sntr[ys][su]?_[A-Za-z0-9+/=_]{40,}|glc_[A-Za-z0-9+/=]{30,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}|ops_eyJ[A-Za-z0-9+/=_\-]{40,}|fo1_[A-Za-z0-9_\-]{40,}|shp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}|dapi[a-f0-9]{32}(?:-\d)?|pul-[a-f0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}|hv[sb]\.[A-Za-z0-9_\-]{24,}|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{24,}|GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[A-Za-z0-9_\-]{20,}|AIza[A-Za-z0-9_\-]{35}|SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}|AGE-SECRET-KEY-1[A-Z0-9]{58}|ATATT3[A-Za-z0-9_\-=]{100,}|dp\.pt\.[A-Za-z0-9]{40,}|nfp_[A-Za-z0-9]{36}|tfp_[A-Za-z0-9_]{40,}|rubygems_[a-f0-9]{48}|oy2[a-z0-9]{43}|key-[a-f0-9]{32}|figd_[A-Za-z0-9_\-]{40}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}|ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b`,
			back:     1, fwd: 300,
			tp: []string{
				"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
				"npm_abcdefghijklmnopqrstuvwxyz0123456789",
				"AIzaSyA0123456789abcdefghijklmnopqrstuv",
				"sk_live_0123456789abcdefABCDEF",
				"rk_test_abcdefghij0123456789",
				"SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
				"hvs.CAESIAbcdefghijklmnopqrstuvwxyz012",
				"ya29.a0AfH6SMBabcdefghijklmnop",
				"dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			},
			fp: []string{"hf_short", "npm_config_cache", "key-value store", "secret_name", "the sk_live_ prefix"},
		},
		{
			id:       "pypi-token",
			keywords: []string{"pypi-ageichlwas5vcmc"},
			pattern:  `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}`,
			back:     1, fwd: 300,
			tp: []string{"pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0NTY3ODkw"},
			fp: []string{"pypi-AgEIcHlwaS5vcmc"},
		},
		{
			id:       "jwt",
			keywords: []string{"eyj"},
			pattern:  `\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`,
			back:     1, fwd: 8192,
			tp: []string{
				"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
				"token=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
			},
			fp: []string{"eyJhbGciOiJIUzI1NiJ9 alone", "eyJ.x.y"},
		},
		{
			id:       "bearer",
			keywords: []string{"bearer"},
			pattern:  `(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)`,
			back:     1, fwd: 32,
			groups: []int{1},
			check:  tokenLike,
			tp:     []string{"Authorization: Bearer abc123def456ghi789", "curl -H 'authorization: bearer 0123456789abcdefghij'"},
			fp:     []string{"the bearer of good news", "Bearer authentication is described in RFC 6750"},
		},
		{
			id:       "basic-auth",
			keywords: []string{"basic"},
			pattern:  `(?i)authorization\\?["']?\s*[:=]\s*\\?["']?basic\s+([A-Za-z0-9+/]{4,}=*)`,
			back:     40, fwd: 32,
			groups: []int{1},
			tp:     []string{"Authorization: Basic dXNlcjpwYXNzd29yZA=="},
			fp:     []string{"basic authentication works", "a basic example"},
		},
		{
			id:       "url-credentials",
			keywords: []string{"://"},
			pattern:  `(?i)\b[a-z][a-z0-9+.\-]*://[^\s/?#@:"'<>\[]*:([^\s/?#@"'<>]+)@`,
			back:     32, fwd: 256,
			groups: []int{1},
			tp:     []string{"postgres://admin:s3cr3t@db.internal:5432/app", "https://user:hunter2@example.com/x", "redis://:p4ss@cache:6379"},
			fp:     []string{"https://example.com:8443/path", "git@github.com:org/repo.git", "http://localhost:3000/@user"},
		},
		{
			id: "credential-assignment",
			// key = value, key: value, key => value, "key": "value" (also
			// JSON-escaped): the spec floor's (password|passwd|secret|
			// api[_-]?key|token) assignments and every credential-named key
			// spelling CredentialKey accepts. A linear scan, no regexp.
			keywords: []string{"pass", "pw", "secret", "token", "key", "auth", "credential", "cookie"},
			scan:     scanAssign,
			tp: []string{
				"password=hunter2", `"password": "correct horse battery"`, "export API_KEY=abc123",
				`aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, "X-Api-Key: 0123456789",
				`client_secret: "abc def"`, `{\"token\": \"tok_123\"}`, "Server=db;User Id=sa;Password=Pa55word;",
				"secret: s3", "api-key=k1", "db_pass: p4ss", "opts = {token => 'abc'}",
			},
			fp: []string{
				"max_tokens: 4096", "tokenizer=cl100k_base", "the secret to fast builds", "token_type: bearer",
				"secret_name: prod-db", `"key": "attention.*"`, "password_file=/etc/pw.txt",
				"Authorization: Bearer", "password: [REDACTED:secret]", "bypass: true", "if token == nil {",
				"password:\n  next: 1",
			},
		},
		{
			id:       "credential-flag",
			keywords: []string{"-pass", "-pw", "-secret", "-token", "-key", "-api", "-auth", "-credential"},
			scan:     scanFlag,
			tp:       []string{"mysql --password hunter2", "gh auth login --with-token tok123", "cli --api-key=abc", `run "--token" x1`},
			fp:       []string{"--max-tokens 4096", "--token-file ./t.txt", "--password-stdin", "--no-auth --verbose", "pre-auth hook"},
		},
	}
}

// hasDigit reports whether s holds an ASCII digit.
func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// tokenLike accepts a bearer token: random-looking (a digit) or long.
func tokenLike(s string) bool { return hasDigit(s) || len(s) >= 32 }

// keyByte reports whether c can be part of an assignment's key name.
func keyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

// keyAround returns the key name around the keyword at s[i:i+k].
func keyAround(s string, i, k int) (start, end int) {
	start, end = i, i+k
	for start > 0 && i-start < 64 && keyByte(s[start-1]) {
		start--
	}
	for end < len(s) && end-i < 64 && keyByte(s[end]) {
		end++
	}
	return start, end
}

func skipBlanks(s string, j int) int {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j
}

// scanAssign recognizes KEY = VALUE, KEY: VALUE, KEY => VALUE, with the key
// optionally quoted (also JSON-escaped).
func scanAssign(s string, i, k int) (string, int, bool, bool) {
	ks, ke := keyAround(s, i, k)
	j := ke
	if j < len(s) && s[j] == '\\' {
		j++
	}
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	j = skipBlanks(s, j)
	switch {
	case j+1 < len(s) && s[j] == '=' && s[j+1] == '>':
		j += 2
	case j < len(s) && s[j] == '=' && !(j+1 < len(s) && s[j+1] == '='):
		j++
	case j < len(s) && s[j] == ':' && !(j+1 < len(s) && s[j+1] == '/'):
		j++
	default:
		return "", 0, false, false
	}
	return s[ks:ke], skipBlanks(s, j), false, true
}

// scanFlag recognizes a command-line flag --KEY VALUE or --KEY=VALUE.
func scanFlag(s string, i, k int) (string, int, bool, bool) {
	ks, ke := keyAround(s, i, k)
	if s[ks] != '-' || (ks > 0 && !strings.ContainsRune(" \t\n\"'", rune(s[ks-1]))) {
		return "", 0, false, false
	}
	j := ke
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	switch {
	case j < len(s) && s[j] == '=':
		j++
	case j < len(s) && (s[j] == ' ' || s[j] == '\t'):
		j = skipBlanks(s, j)
	default:
		return "", 0, false, false
	}
	return strings.TrimLeft(s[ks:ke], "-"), j, true, true
}
