package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestTokensFileRefused: a tokens file others can read, and a listen
// address off loopback without one, are refused before anything listens.
func TestTokensFileRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(p, []byte(`{"token":"0123456789abcdef-x","identity":"consumer:x"}`+"\n"), 0o644)
	for _, args := range [][]string{
		{"relay", "--listen", "127.0.0.1:0", "--tokens", p},
		{"relay", "--listen", "0.0.0.0:0"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "AEP_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: %v %s", args, err, out)
		}
		if strings.Contains(string(out), "0123456789abcdef") {
			t.Errorf("the refusal shows the token: %s", out)
		}
	}
}

// TestAuth: with a tokens file every request but a bare /healthz needs a
// token (a header, or access_token for browsers); a token is never written
// to the audit log or the relay's output, access_token included.
func TestAuth(t *testing.T) {
	p := startRelay(t, "", "--tokens", controlTokens(t))
	for _, c := range []struct {
		path, tok string
		status    int
	}{
		{"/events", "", 401},
		{"/events", "0123456789abcdef-nobody", 401},
		{"/events", opTok, 200},
		{"/stream?live=0", "", 401},
		{"/stream?live=0&access_token=" + opTok, "", 200},
		{"/stream?live=0&access_token=0123456789abcdef-nobody", "", 401},
	} {
		if st, b := p.get(c.path, c.tok); st != c.status {
			t.Errorf("%s (token %q): %d %s", c.path, c.tok, st, b)
		}
	}
	if _, resp, err := p.dial(""); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("WebSocket without a token: %v %v", resp, err)
	}
	w, _, err := p.dial("", "Cookie", "aep_relay="+viewTok)
	if err != nil {
		t.Fatalf("the sign-in cookie: %v", err)
	}
	w.send(`{"type":"hello","versions":["0.1"],"role":"consumer"}`)
	w.expect("hello")
	if st, _ := p.post(mkEvent("tool.completed", "op", "s", 0, ""), "application/json", ""); st != 401 {
		t.Errorf("POST without a token: %d", st)
	}
	b, _ := os.ReadFile(filepath.Join(p.home, "relay", "audit.jsonl"))
	for _, tok := range []string{opTok, viewTok, "0123456789abcdef-nobody", "access_token"} {
		if strings.Contains(string(b), tok) || strings.Contains(p.output(), tok) {
			t.Errorf("%s appears in the audit log or the output", tok)
		}
	}
	if !strings.Contains(string(b), `"kind":"request-refused"`) {
		t.Error("refused requests are not audited")
	}
}

// TestScopes: a subscription its token's scopes do not cover is refused
// unauthorized (SSE 403, WebSocket in-band), and delivery stays within the
// scopes and the token's capture ceiling.
func TestScopes(t *testing.T) {
	narrow := "0123456789abcdef-narrow"
	writer := "0123456789abcdef-writer"
	p := startRelay(t, "", "--tokens", tokensFile(t,
		`{"token":"`+narrow+`","identity":"consumer:n","scopes":["subscribe:attention.*","read:aep://h/*"],"capture":"metadata"}`,
		`{"token":"`+writer+`","identity":"emitter:h/a"}`))
	s := p.stream(q("filter", `{}`), "Authorization", "Bearer "+narrow)
	var m map[string]any
	json.Unmarshal(s.Body, &m)
	if s.Status != 403 || m["error"] != "unauthorized" {
		t.Errorf("unscoped SSE: %d %s", s.Status, s.Body)
	}
	w := p.mustDial(narrow, "consumer", "n", "")
	w.send(`{"type":"subscribe","id":"all","filter":{}}`)
	if f := w.expect("error"); f.str("code") != "unauthorized" || f.str("id") != "all" {
		t.Errorf("unscoped WS: %s", f.raw)
	}
	w.send(`{"type":"subscribe","id":"tools","filter":{"type":"tool.*","source":"aep://h/agent/a/session/s"}}`)
	if f := w.expect("error"); f.str("code") != "unauthorized" {
		t.Errorf("a type outside the scopes: %s", f.raw)
	}
	w.send(`{"type":"subscribe","id":"ok","filter":{"type":"attention.*","source":["aep://h/agent/a/session/s"]}}`)
	w.expect("subscribed")
	ask := mkEvent("attention.requested", "a", "s", 0, `,"capture":"redacted","data":{"kind":"permission","prompt":"SECRET PROMPT TEXT","options":[{"id":"allow","label":"Allow"}]}`)
	if st, m := p.post(ask, "application/json", writer); st != 202 {
		t.Fatalf("post: %d %v", st, m)
	}
	f := w.next()
	if strings.Contains(string(f.raw), "SECRET PROMPT TEXT") || f.str("capture") != "metadata" {
		t.Errorf("the token's ceiling was not applied: %s", f.raw)
	}
}

// TestFalsifiedSource: an event whose agent or source is not the posting
// token's identity, or of another tenant, is refused 403.
func TestFalsifiedSource(t *testing.T) {
	p := startRelay(t, "", "--tokens", controlTokens(t))
	for _, c := range []struct {
		name, ev, tok string
		status        int
	}{
		{"own", mkEvent("tool.completed", "target", "s", 0, ""), emTok, 202},
		{"other agent", mkEvent("tool.completed", "codex", "s", 0, ""), emTok, 403},
		{"source and agent disagree", strings.Replace(mkEvent("tool.completed", "target", "s", 1, ""), "agent/target", "agent/codex", 1), emTok, 403},
		{"other host", strings.Replace(mkEvent("tool.completed", "target", "s", 2, ""), "aep://h/", "aep://elsewhere/", 1), emTok, 403},
		{"tenant of another", mkEvent("tool.completed", "target", "s", 3, `,"tenant":"acme"`), emTok, 403},
		{"tenant own", mkEvent("tool.completed", "target", "s2", 0, `,"tenant":"acme"`), acmeEmTok, 202},
		{"tenant missing", mkEvent("tool.completed", "target", "s2", 1, ""), acmeEmTok, 403},
		{"consumer as itself", mkEvent("attention.routed", "op", "s", -1, ""), opTok, 202},
		{"consumer as another", mkEvent("attention.routed", "mallory", "s", -1, ""), opTok, 403},
	} {
		st, m := p.post(c.ev, "application/json", c.tok)
		if st != c.status || (st == 403 && (m["error"] != "unauthorized" || !strings.Contains(m["detail"].(string), "falsified"))) {
			t.Errorf("%s: %d %v", c.name, st, m)
		}
	}
}

// TestTenants: a tenant's events never reach another tenant's consumers,
// live or replayed; an untenanted token sees only untenanted events.
func TestTenants(t *testing.T) {
	p := startRelay(t, "", "--tokens", controlTokens(t))
	acme := p.stream(nil, "Authorization", "Bearer "+acmeTok)
	beta := p.stream(nil, "Authorization", "Bearer "+betaTok)
	none := p.stream(nil, "Authorization", "Bearer "+viewTok)
	a := mkEvent("tool.completed", "target", "ta", 0, `,"tenant":"acme"`)
	n := mkEvent("tool.completed", "target", "tn", 0, "")
	b := mkEvent("tool.completed", "target", "tb", 0, `,"tenant":"beta"`)
	p.post(a, "application/json", acmeEmTok)
	p.post(n, "application/json", emTok)
	p.post(b, "application/json", betaEmTok)
	for name, c := range map[string]struct {
		s    *sseStream
		tok  string
		want string
	}{"acme": {acme, acmeTok, a}, "beta": {beta, betaTok, b}, "none": {none, viewTok, n}} {
		// The one event of its own tenant is the first it gets: the
		// others, posted before it or after, never came.
		if m := c.s.next(false); m.Data != c.want {
			t.Errorf("%s got %s", name, m.Data)
		}
		replay := p.stream(q("from", "all", "live", "0"), "Authorization", "Bearer "+c.tok).rest()
		if countEvents(replay) != 1 || replay[0].Data != c.want {
			t.Errorf("%s replays %v", name, replay)
		}
	}
}

// TestHostOrigin: every binding refuses a foreign Host (DNS rebinding) and
// a foreign browser Origin (a cross-site page), with or without a token.
func TestHostOrigin(t *testing.T) {
	p := startRelay(t, "")
	do := func(method, path string, hdr ...string) int {
		req, _ := http.NewRequest(method, p.base+path, strings.NewReader(mkEvent("tool.completed", "a", "s", 0, "")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("AEP-Version", "0.1")
		req.Header.Set("Authorization", "Bearer "+p.token)
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
			} else {
				req.Header.Set(hdr[i], hdr[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path string
		hdr          []string
	}{
		{"POST", "/events", []string{"Host", "evil.example:" + strings.Split(p.addr, ":")[1]}},
		{"GET", "/stream?live=0", []string{"Host", "evil.example:" + strings.Split(p.addr, ":")[1]}},
		{"POST", "/events", []string{"Origin", "http://evil.example"}},
		{"GET", "/stream?live=0", []string{"Origin", "http://evil.example"}},
		{"POST", "/events", []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		if st := do(c.method, c.path, c.hdr...); st != 403 {
			t.Errorf("%s %s %v: %d", c.method, c.path, c.hdr, st)
		}
	}
	if _, resp, err := p.dial("", "Origin", "http://evil.example"); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("WebSocket from another origin: %v %v", resp, err)
	}
	if st := do("POST", "/events", "Origin", p.base); st != 202 {
		t.Errorf("same origin: %d", st)
	}
	if n := countEvents(p.stream(q("from", "all", "live", "0")).rest()); n != 1 {
		t.Errorf("%d events taken, want only the same-origin one", n)
	}
}

// TestAudit: the audit log records connections with identities,
// subscriptions and rejected events, and never event content.
func TestAudit(t *testing.T) {
	p := startRelay(t, "", "--tokens", controlTokens(t))
	w := p.mustDial(viewTok, "consumer", "viewer", "")
	w.send(`{"type":"subscribe","id":"s","filter":{"type":"tool.*"}}`)
	w.expect("subscribed")
	p.post(mkEvent("tool.completed", "target", "s", 0, `,"data":{"secret":"CONTENT-CANARY"}`), "application/json", emTok)
	p.post(mkEvent("tool.completed", "codex", "s", 0, `,"data":{"secret":"CONTENT-CANARY"}`), "application/json", emTok)
	w.next()
	w.c.CloseNow()
	kinds := map[string]map[string]any{}
	for _, a := range p.auditLines() {
		kinds[a["kind"].(string)] = a
	}
	if kinds["connect"]["identity"] != "consumer:viewer" || kinds["subscribe"]["sub"] != "s" || kinds["subscribe"]["filter"] != `{"type":"tool.*"}` {
		t.Errorf("audit: %v", kinds)
	}
	if r := kinds["event-rejected"]; r["identity"] != "emitter:h/target" || r["event"] != "codex-s-0" || !strings.Contains(r["reason"].(string), "falsified") {
		t.Errorf("rejection: %v", r)
	}
	b, _ := os.ReadFile(filepath.Join(p.home, "relay", "audit.jsonl"))
	if strings.Contains(string(b), "CONTENT-CANARY") {
		t.Error("event content in the audit log")
	}
}

// TestHookTenant: a real hook process with AEP_TENANT stamps it on its
// events, and the relay keeps them to that tenant's consumers; a malformed
// AEP_TENANT is recorded and the events go out without it.
func TestHookTenant(t *testing.T) {
	home := t.TempDir()
	p := startRelay(t, home, "--tokens", controlTokens(t))
	acme := p.stream(nil, "Authorization", "Bearer "+acmeTok)
	none := p.stream(nil, "Authorization", "Bearer "+viewTok)
	hook := func(tenant, session string) {
		cmd := exec.Command(bin, "claude-code")
		cmd.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=h", "AEP_TENANT="+tenant)
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"` + session + `","source":"startup","cwd":"/tmp"}`)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hook: %v %s", err, out)
		}
	}
	hook("acme", "tenant-1")
	if m := acme.next(false); !strings.Contains(m.Data, `"session":"tenant-1"`) || !strings.Contains(m.Data, `"tenant":"acme"`) {
		t.Errorf("acme: %s", m.Data)
	}
	hook("Not Valid", "tenant-2")
	if m := none.next(false); !strings.Contains(m.Data, `"session":"tenant-2"`) || strings.Contains(m.Data, `"tenant"`) {
		t.Errorf("a malformed tenant: %s", m.Data)
	}
	b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	if !strings.Contains(string(b), "AEP_TENANT") || strings.Contains(string(b), "Not Valid") {
		t.Errorf("the error log: %s", b)
	}
}

// TestDefaultIdentity: without a tokens file the relay takes one token,
// the user's own ($AEP_HOME/token, made 0600 at start): a request without
// it, or with another, is refused 401 on every binding and leaves nothing
// behind; with it the user watches, posts and answers over control; --open
// alone brings back the tokenless posture, and says so.
func TestDefaultIdentity(t *testing.T) {
	p := startRelay(t, "")
	fi, err := os.Stat(filepath.Join(p.home, "token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the user token file: %v %v", fi, err)
	}
	bare := func(method, path, tok string) int {
		req, _ := http.NewRequest(method, p.base+path, strings.NewReader(mkEvent("tool.completed", "a", "s", 0, "")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("AEP-Version", "0.1")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tok := range []string{"", "0123456789abcdef-guess"} {
		for _, c := range []struct{ method, path string }{{"POST", "/events"}, {"GET", "/events"}, {"GET", "/stream?live=0"}} {
			if st := bare(c.method, c.path, tok); st != 401 {
				t.Errorf("%s %s with token %q: %d, want 401", c.method, c.path, tok, st)
			}
		}
		u := "ws://" + p.addr + "/socket"
		h := http.Header{}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
		cancel()
		if err == nil || resp == nil || resp.StatusCode != 401 {
			t.Errorf("WebSocket with token %q: %v %v", tok, resp, err)
		}
	}
	if st := bare("GET", "/healthz", ""); st != 200 {
		t.Errorf("/healthz: %d", st)
	}
	if n := countEvents(p.stream(q("from", "all", "live", "0")).rest()); n != 0 {
		t.Fatalf("%d events taken from refused requests", n)
	}
	// The user's token posts, reads and answers over control.
	if st := bare("POST", "/events", p.token); st != 202 {
		t.Errorf("POST with the user's token: %d", st)
	}
	em := p.mustDial(p.token, "emitter", "target", `{"control":{"accepts":["control.attention.respond"],"ack_window_ms":10000}}`)
	em.send(mkEvent("session.started", "target", "t", 0, ""))
	s := p.mustDial(p.token, "consumer", "op", "")
	for {
		s.send(`{"type":"roster","id":"wait"}`)
		if f := s.expect("roster"); strings.Contains(string(f.raw), `"session":"t"`) {
			break
		}
	}
	s.send(command("c1", "control.attention.respond", "op", "t", ""))
	if f := em.next(); f.str("id") != "c1" || f.str("type") != "control.attention.respond" {
		t.Errorf("the target got %s", f.raw)
	}
	if !strings.Contains(p.output(), "one token, your own") {
		t.Errorf("the start line does not say who may call:\n%s", p.output())
	}
	if strings.Contains(p.output(), p.token) {
		t.Error("the user's token is in the relay's output (not a terminal)")
	}
	b, _ := os.ReadFile(filepath.Join(p.home, "relay", "audit.jsonl"))
	if strings.Contains(string(b), p.token) {
		t.Error("the user's token is in the audit log")
	}

	open := startRelay(t, "", "--open")
	if st, _ := open.post(mkEvent("tool.completed", "a", "s", 0, ""), "application/json", ""); st != 202 {
		t.Errorf("--open: POST without a token: %d", st)
	}
	if !strings.Contains(open.output(), "WARNING: --open") {
		t.Errorf("--open is not announced:\n%s", open.output())
	}
	if _, err := os.Stat(filepath.Join(open.home, "token")); err == nil {
		t.Error("--open made a user token it does not use")
	}
}

// TestDefaultIdentityRefusals: the relay will not start open off
// loopback, with --open and --tokens together, or on a user token file
// others may read, and its errors name the file.
func TestDefaultIdentityRefusals(t *testing.T) {
	loose := t.TempDir()
	os.WriteFile(filepath.Join(loose, "token"), []byte("0123456789abcdef-secret-value\n"), 0o644)
	os.Chmod(filepath.Join(loose, "token"), 0o644)
	for _, c := range []struct {
		home string
		args []string
		want string
	}{
		{t.TempDir(), []string{"--listen", "0.0.0.0:0"}, "not a loopback address"},
		{t.TempDir(), []string{"--listen", "127.0.0.1:0", "--open", "--tokens", tokensFile(t, `{"token":"0123456789abcdef-op","identity":"consumer:op"}`)}, "choose one"},
		{loose, []string{"--listen", "127.0.0.1:0"}, filepath.Join(loose, "token") + ": mode 0644 lets others read it"},
	} {
		cmd := exec.Command(bin, append([]string{"relay"}, c.args...)...)
		cmd.Env = append(os.Environ(), "AEP_HOME="+c.home)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v %s, want exit 2 saying %q", c.args, err, out, c.want)
		}
		if strings.Contains(string(out), "REDACTED") || strings.Contains(string(out), "secret-value") {
			t.Errorf("%v: %s", c.args, out)
		}
	}
}
