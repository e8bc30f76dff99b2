package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// credentialSpy is a collector that records the Authorization of every
// request reaching it.
type credentialSpy struct {
	mu   sync.Mutex
	seen []string
}

func (c *credentialSpy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.seen = append(c.seen, r.Header.Get("Authorization"))
	c.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (c *credentialSpy) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// trustServer writes srv's certificate where SSL_CERT_FILE finds it.
func trustServer(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return "SSL_CERT_FILE=" + path
}

// A collector answering 307 to another origin (here https to plain http on
// another port) used to receive the bearer token there in clear text, and
// ship exited 0; now neither ship nor a hook's inline delivery follows it,
// and ship fails saying why.
func TestAttackRedirectKeepsToken(t *testing.T) {
	plain := &credentialSpy{}
	b := httptest.NewServer(plain)
	defer b.Close()
	sameHostTLS := &credentialSpy{}
	c := httptest.NewTLSServer(sameHostTLS)
	defer c.Close()
	for _, target := range []string{b.URL, c.URL} {
		a := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		home := t.TempDir()
		env := append(hookEnv(home, t.TempDir()), trustServer(t, a))
		runHook(t, env, codexTool("s-redirect", 1), "codex")
		r := runHook(t, env, nil, "ship", "--out", a.URL, "--token", "T0PSECRET", "--retry-for", "1s")
		if r.code == 0 || !strings.Contains(r.stderr, "redirect to another origin") {
			t.Errorf("ship redirected to %s: exit %d, stderr %q", target, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "T0PSECRET") {
			t.Errorf("the token was printed: %q", r.stderr)
		}
		// The hook's inline delivery shares the client.
		runHook(t, append(env, "AEP_OUT="+a.URL, "AEP_TOKEN=T0PSECRET"), codexTool("s-redirect", 2), "codex")
		a.Close()
	}
	if got := append(plain.got(), sameHostTLS.got()...); len(got) != 0 {
		t.Fatalf("the redirect targets were reached, with Authorization %q", got)
	}
}

// A credential in AEP_OUT, in whatever shape, was printed on stderr, in
// the error log and by doctor (a value without a scheme verbatim; with
// --no-probe, a refused URL's ?access_token=); no output shows it now.
func TestAttackSettingsRedacted(t *testing.T) {
	for _, out := range []string{
		"deploy:PW0RD9@127.0.0.1:9",
		"PW0RD9@127.0.0.1:9",
		"http://deploy:PW0RD9@127.0.0.1:9/x",
		"http://127.0.0.1:9/x?access_token=PW0RD9",
		"otlp+http://127.0.0.1:9/%zz#PW0RD9",
		"https://127.0.0.1:9,deploy:PW0RD9@127.0.0.1:9",
	} {
		// The subtest is not named after the value: t.TempDir would put it
		// in every path shown.
		t.Run("shape", func(t *testing.T) {
			home := t.TempDir()
			env := append(hookEnv(filepath.Join(home, ".aep"), t.TempDir()), "HOME="+home, "AEP_OUT="+out)
			var shown strings.Builder
			for _, args := range [][]string{{"claude-code"}, {"ship"}, {"ship", "--status"}, {"doctor"}, {"doctor", "--no-probe"}, {"ship", "--out", out}} {
				in := []byte(`{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}`)
				r := runHook(t, env, in, args...)
				shown.WriteString(r.stdout + r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(home, ".aep", "internal", "errors.jsonl"))
			if err != nil {
				t.Fatalf("the refused destination was not recorded: %v", err)
			}
			shown.Write(b)
			if strings.Contains(shown.String(), "PW0RD9") {
				t.Fatalf("the credential was shown:\n%s", shown.String())
			}
			if !strings.Contains(shown.String(), "[REDACTED:secret]") {
				t.Errorf("nothing says a credential was removed:\n%s", shown.String())
			}
		})
	}
}
