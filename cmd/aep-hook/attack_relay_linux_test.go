package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

var relayServing = regexp.MustCompile(`serving http://(\S+) `)

// startDefaultRelay runs `aep-hook relay` with no tokens file over home
// and returns its address.
func startDefaultRelay(t *testing.T, home string) string {
	t.Helper()
	cmd := exec.Command(bin, "relay", "--listen", "127.0.0.1:0")
	cmd.Env = hookEnv(home, t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	r := bufio.NewReader(stderr)
	line, _ := r.ReadString('\n')
	m := relayServing.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the relay said %q", line)
	}
	go io.Copy(io.Discard, r)
	return m[1]
}

// TestAttackRelayOtherUser: the relay without a tokens file serves its
// user alone. Another local user, who cannot read $AEP_HOME/token, gets
// 401 for every read and post and writes nothing; the user's own tools
// (ship, pending) reach it with no setting at all.
func TestAttackRelayOtherUser(t *testing.T) {
	home := t.TempDir()
	addr := startDefaultRelay(t, home)
	body := `{"aep":"0.1","id":"x1","type":"tool.completed","time":"2026-07-03T10:15:04.221Z","source":"aep://test-host/agent/claude-code/session/s","agent":"claude-code","session":"s","seq":0,"epoch":0}`
	for _, tok := range []string{"", "0123456789abcdef-guess"} {
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/events", body}, {"GET", "/events?from=all", ""}, {"GET", "/stream?live=0", ""}, {"GET", "/socket", ""},
		} {
			hdr := map[string]string{"Content-Type": "application/json", "AEP-Version": "0.1"}
			if tok != "" {
				hdr["Authorization"] = "Bearer " + tok
			}
			if got, b := request(t, c.method, "http://"+addr+c.path, "", hdr, []byte(c.body)); got != http.StatusUnauthorized {
				t.Errorf("%s %s, token %q: %d (%s), want 401", c.method, c.path, tok, got, b)
			}
		}
	}
	tokenPrivate(t, home)

	// The user's tools: a hook's log shipped to the relay, then listed.
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = hookEnv(home, t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	logDir := filepath.Join(home, "logs", "claude-code")
	os.MkdirAll(logDir, 0o700)
	if err := os.WriteFile(filepath.Join(logDir, "s.jsonl"), []byte(body+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run("ship", "--out", "http://"+addr); err != nil {
		t.Fatalf("ship: %v %s", err, out)
	}
	if out, err := run("pending", "--relay", "ws://"+addr+"/socket"); err != nil || !strings.Contains(out, "nothing waits for a human") {
		t.Errorf("pending: %v %s", err, out)
	}
	tok, _ := os.ReadFile(filepath.Join(home, "token"))
	hdr := map[string]string{"Authorization": "Bearer " + strings.TrimSpace(string(tok))}
	if got, b := request(t, "GET", "http://"+addr+"/stream?from=all&live=0", "", hdr, nil); got != 200 || !strings.Contains(string(b), `"x1"`) {
		t.Errorf("the user's read: %d %s", got, b)
	}
}

// TestTokenFileErrorNamesPath: a token file others may read is refused
// by every listener with its path named, never masked, and never its
// contents.
func TestTokenFileErrorNamesPath(t *testing.T) {
	for _, verb := range [][]string{{"relay", "--listen", "127.0.0.1:0"}, {"otel", "--listen", "127.0.0.1:0"}} {
		home := t.TempDir()
		file := filepath.Join(home, "token")
		os.WriteFile(file, []byte("0123456789abcdef-secret-value\n"), 0o644)
		os.Chmod(file, 0o644)
		cmd := exec.Command(bin, verb...)
		cmd.Env = hookEnv(home, t.TempDir())
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: %v %s", verb[0], err, out)
		}
		if !strings.Contains(string(out), file+": mode 0644") || strings.Contains(string(out), "REDACTED") || strings.Contains(string(out), "secret-value") {
			t.Errorf("%s: %s", verb[0], out)
		}
	}
}
