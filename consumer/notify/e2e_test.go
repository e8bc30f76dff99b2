package notify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/relaytest"
)

// bin is the aep-hook binary the process tests run, built once.
var bin string

func TestMain(m *testing.M) {
	relaytest.Main(m, "aep-notify-e2e-", func(dir string) error {
		bin = filepath.Join(dir, "aep-hook")
		return relaytest.Build(bin, "../../cmd/aep-hook", relaytest.Race)
	})
}

// wait bounds every wait for a process: a guard against a hang, never a
// measure of speed.
const wait = 30 * time.Second

// startProc runs bin with args and env (a long-running aep-hook: relay or
// notify) until the test ends (an interrupt, then a kill).
func startProc(t *testing.T, env []string, args ...string) *relaytest.Proc {
	t.Helper()
	p := relaytest.Start(t, bin, env, args...)
	t.Cleanup(func() {
		p.Stop(os.Interrupt, 10*time.Second)
		p.Check(t, args[0])
	})
	return p
}

// env is a clean environment over home.
func env(home string, extra ...string) []string {
	return append([]string{"AEP_HOME=" + home, "PATH=" + os.Getenv("PATH"), "AEP_HOST=test-host", "HOME=" + home,
		"AEP_HOOK_DEADLINE=30s", "TMPDIR=" + os.TempDir()}, extra...)
}

// writeSecret writes a 0600 file.
func writeSecret(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// hook runs one Claude Code hook firing of session.
func hook(t *testing.T, home string, moment map[string]any) {
	t.Helper()
	b, _ := json.Marshal(moment)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "claude-code")
	cmd.Env = env(home)
	cmd.Stdin = bytes.NewReader(b)
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v", err)
	}
}

// permissionSession is a Claude Code session up to a permission card:
// start, prompt, the tool call, the card; resolvedToo adds the tool's
// completion (the card answered in Claude Code's own dialog).
func permissionSession(t *testing.T, home, session string, resolvedToo bool) {
	t.Helper()
	base := map[string]any{"session_id": session, "cwd": "/home/dev/app", "permission_mode": "default",
		"transcript_path": "/home/dev/.claude/projects/app/" + session + ".jsonl"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	input := map[string]any{"command": "rm -rf dist", "description": "Remove stale build output"}
	hook(t, home, with("hook_event_name", "SessionStart", "source", "startup", "model", "claude-sonnet-4-5"))
	hook(t, home, with("hook_event_name", "UserPromptSubmit", "prompt", "clean the build"))
	hook(t, home, with("hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_input", input, "tool_use_id", "toolu_"+session))
	hook(t, home, with("hook_event_name", "PermissionRequest", "tool_name", "Bash", "tool_input", input, "permission_suggestions", []any{}))
	if resolvedToo {
		hook(t, home, with("hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_input", input, "tool_use_id", "toolu_"+session,
			"tool_response", map[string]any{"interrupted": false, "stdout": "", "stderr": ""}))
	}
}

// sseEvents reads the relay's stream q into a channel of events.
func sseEvents(t *testing.T, base, token string, q url.Values) <-chan map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/stream?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %v %v", err, resp)
	}
	t.Cleanup(func() { resp.Body.Close() })
	out := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					out <- m
				}
			}
		}
	}()
	return out
}

const (
	operatorToken = "operator-token-000000000000"
	notifierToken = "notifier-token-000000000000"
)

// TestNotifyEndToEnd: real hook processes write a Claude Code session
// with a permission card; a real relay follows their logs; aep-hook
// notify delivers the card once to each route (an ntfy-compatible push
// server, a webhook receiver that fails twice and hangs first, and the
// desktop through notify-send) and records one attention.routed per
// delivery; a session whose card was answered before the notifier
// started sends nothing.
func TestNotifyEndToEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake notify-send is a shell script")
	}
	home := t.TempDir()
	tokens := writeSecret(t, filepath.Join(home, "tokens.jsonl"), []byte(
		`{"token":"`+operatorToken+`","identity":"consumer:ops","scopes":["subscribe:*","read:*"]}`+"\n"+
			`{"token":"`+notifierToken+`","identity":"consumer:aep-hook-notify","scopes":["subscribe:attention.*","read:*","write:aep-hook-notify"]}`+"\n"))
	// A fake desktop notifier on PATH: notify-send writing its arguments.
	binDir := t.TempDir()
	desk := filepath.Join(home, "desktop.txt")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + desk + "'\nprintf '%s\\n' '<end>' >> '" + desk + "'\n"
	if err := os.WriteFile(filepath.Join(binDir, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	// Answered before the notifier starts: in the relay's buffers as a
	// request and its resolution.
	permissionSession(t, home, "cc-done", true)

	relay := startProc(t, env(home), "relay", "--listen", "127.0.0.1:0", "--tokens", tokens)
	base := "http://" + relay.Await(t, "relay", relaytest.ServingLine, wait)[1]
	routed := sseEvents(t, base, operatorToken, url.Values{"filter": {`{"type":["attention.routed"]}`}})

	push, hookRecv := newSink(t), newSink(t)
	hookRecv.hold = make(chan struct{})
	hookRecv.fail = func(n int) int {
		if n <= 2 {
			return http.StatusBadGateway
		}
		return 0
	}
	cfg, _ := json.Marshal(map[string]any{
		"relay": base, "token": notifierToken,
		"routes": []any{
			map[string]any{"name": "phone", "type": "ntfy", "url": push.srv.URL + "/aep-secret-topic", "token": "tk_pushtoken"},
			map[string]any{"name": "team", "type": "webhook", "url": hookRecv.srv.URL + "/hooks/SECRETPATH", "template": "slack", "capture": "redacted"},
			map[string]any{"name": "desk", "type": "desktop"},
		},
	})
	conf := writeSecret(t, filepath.Join(home, "notify.json"), cfg)
	notifier := startProc(t, env(home, "PATH="+binDir+":"+os.Getenv("PATH")), "notify", "--config", conf)
	notifier.Await(t, "notify", regexp.MustCompile(`reading http://`), wait)

	permissionSession(t, home, "cc-live", false)

	// The push server and the desktop get it while the webhook's first
	// attempt hangs: a route that fails delays no other.
	p, path, auth := push.next(t)
	for deadline := time.Now().Add(wait); ; {
		if b, _ := os.ReadFile(desk); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing on the desktop:\n%s", notifier.Output())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := hookRecv.requests(); n != 1 {
		t.Fatalf("webhook: %d requests before its first answer", n)
	}
	close(hookRecv.hold)
	w, _, _ := hookRecv.next(t)

	// One attention.routed per delivery, nothing for the answered card.
	got := map[string]map[string]any{}
	for len(got) < 3 {
		select {
		case ev := <-routed:
			got[ev["data"].(map[string]any)["to"].(string)] = ev
		case <-time.After(wait):
			t.Fatalf("routed records: %v\nnotify:\n%s", got, notifier.Output())
		}
	}
	var reqID string
	for to, via := range map[string]string{"phone": "ntfy", "team": "webhook", "desk": "notify-send"} {
		ev := got[to]
		if ev == nil || ev["data"].(map[string]any)["via"] != via || ev["session"] != "cc-live" || ev["agent"] != "aep-hook-notify" ||
			ev["source"] != "aep://test-host/agent/aep-hook-notify/session/cc-live" || ev["cause"] != ev["subject"] || ev["seq"] != nil {
			t.Fatalf("routed to %s: %v", to, ev)
		}
		if reqID == "" {
			reqID = ev["subject"].(string)
		} else if ev["subject"] != reqID {
			t.Fatalf("routed records name different requests: %v", got)
		}
	}
	// The subject is the live card's attention.requested.
	logB, _ := os.ReadFile(filepath.Join(home, "logs", "claude-code", "cc-live.jsonl"))
	if !strings.Contains(string(logB), `"id":"`+reqID+`","type":"attention.requested"`) {
		t.Fatalf("subject %s is not the card's id:\n%s", reqID, logB)
	}

	// Exactly one delivery per route, each as its route shows it.
	if n, m := push.requests(), hookRecv.requests(); n != 1 || m != 3 || len(push.got)+len(hookRecv.got) != 0 {
		t.Fatalf("push server: %d requests, webhook: %d (two refused, one taken)", n, m)
	}
	if path != "/" || auth != "Bearer tk_pushtoken" || p["topic"] != "aep-secret-topic" || p["title"] != "claude-code needs your permission: Bash" ||
		strings.Contains(p["message"].(string), "rm -rf") || !strings.Contains(p["message"].(string), "session cc-live on test-host") {
		t.Fatalf("push at metadata: %v", p)
	}
	if !strings.Contains(fmt.Sprint(w["text"]), "rm -rf dist") {
		t.Fatalf("webhook at redacted: %v", w)
	}
	deskB, _ := os.ReadFile(desk)
	if strings.Count(string(deskB), "<end>\n") != 1 || !strings.Contains(string(deskB), "claude-code needs your permission: Bash") {
		t.Fatalf("desktop:\n%s", deskB)
	}
	// The retries are in the internal error log, without the route's
	// credentials.
	errs, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	if strings.Count(string(errs), "route team, request "+reqID) != 2 || strings.Contains(string(errs), "SECRETPATH") ||
		strings.Contains(string(errs), "secret-topic") || strings.Contains(string(errs), "tk_pushtoken") {
		t.Fatalf("error log:\n%s", errs)
	}
	select {
	case ev := <-routed:
		t.Fatalf("a fourth routed record: %v", ev)
	default:
	}
	if strings.Contains(notifier.Output(), "SECRETPATH") || strings.Contains(notifier.Output(), notifierToken) {
		t.Fatalf("notify printed a credential:\n%s", notifier.Output())
	}
}
