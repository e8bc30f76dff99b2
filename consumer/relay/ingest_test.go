package relay_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscovery: GET /events and /.well-known/aep serve the §3.4 document,
// declaring what is implemented: control wherever a token proves who
// sends it (a tokens file, or the user's own token by default), never on
// an --open relay.
func TestDiscovery(t *testing.T) {
	for _, posture := range []string{"open", "user", "tokens"} {
		var args []string
		tok := ""
		switch posture {
		case "open":
			args = []string{"--open"}
		case "tokens":
			tok = "0123456789abcdef-op"
			args = []string{"--tokens", tokensFile(t, `{"token":"0123456789abcdef-op","identity":"consumer:op","scopes":["subscribe:*","read:*"]}`), "--buffer", "7"}
		}
		withTokens := posture == "tokens"
		p := startRelay(t, "", args...)
		for _, path := range []string{"/events", "/.well-known/aep"} {
			status, body := p.get(path, tok)
			var doc map[string]any
			if status != 200 || json.Unmarshal(body, &doc) != nil {
				t.Fatalf("%s: %d %s", path, status, body)
			}
			caps := doc["capabilities"].(map[string]any)
			want := `{"aep":["0.1"],"endpoints":{"events":"/events","socket":"/socket","stream":"/stream"},"role":"collector"}`
			delete(doc, "capabilities")
			if got, _ := json.Marshal(doc); string(got) != want {
				t.Errorf("%s: %s", path, got)
			}
			replay := caps["replay"].(map[string]any)
			if replay["all"] != true || (withTokens && replay["buffer"] != 7.0) || (!withTokens && replay["buffer"] != 1000.0) {
				t.Errorf("replay %v", replay)
			}
			if _, ok := caps["roster"]; !ok {
				t.Error("roster not declared")
			}
			if _, ok := caps["control"]; ok != (posture != "open") {
				t.Errorf("%s: control declared %v", posture, ok)
			}
		}
	}
}

// TestPost holds POST /events to AEP-0003 §3.2: one event or a batch in
// order, the version header, the content types, invalid envelopes refused
// naming the rule (a batch whole, with the line's index), dedupe on
// (source, id), commands refused off the WebSocket.
func TestPost(t *testing.T) {
	p := startRelay(t, "")
	s := p.stream(q("filter", `{"session":"s1"}`))
	e0, e1, e2 := mkEvent("session.started", "a", "s1", 0, ""), mkEvent("tool.completed", "a", "s1", 1, ""), mkEvent("session.ended", "a", "s1", 2, "")
	if st, m := p.post(e0, "application/json", ""); st != 202 || m["new"] != 1.0 {
		t.Fatalf("single: %d %v", st, m)
	}
	if st, m := p.post(e1+"\n"+e2+"\n", "application/x-ndjson", ""); st != 202 || m["accepted"] != 2.0 {
		t.Fatalf("batch: %d %v", st, m)
	}
	got := s.events(3)
	for i, want := range []string{e0, e1, e2} {
		if got[i].Data != want {
			t.Errorf("event %d delivered as %s, posted %s", i, got[i].Data, want)
		}
	}
	// A redelivery is admitted once, and forwarded live as received.
	if st, m := p.post(e1, "application/json; charset=utf-8", ""); st != 202 || m["duplicates"] != 1.0 || m["new"] != 0.0 {
		t.Errorf("redelivery: %d %v", st, m)
	}
	if m := s.next(false); m.Data != e1 {
		t.Errorf("redelivery not forwarded live: %v", m)
	}
	all := p.stream(q("from", "all", "live", "0", "filter", `{"session":"s1"}`)).rest()
	if n := countEvents(all); n != 3 {
		t.Errorf("replay holds %d events of s1, want 3 (admission dedupes)", n)
	}

	bad := strings.Replace(e0, `"agent":"a"`, `"agent":"a","run":null`, 1)
	for _, c := range []struct {
		name, body, ctype string
		hdr               []string
		status            int
		code, detail      string
		index             float64
	}{
		{"no version", e0, "application/json", []string{"AEP-Version", ""}, 400, "version-required", "AEP-0003 §3.2.2", -1},
		{"other version", e0, "application/json", []string{"AEP-Version", "9.9"}, 426, "", "", -1},
		{"content type", e0, "text/plain", nil, 415, "unsupported-media-type", "", -1},
		{"invalid", bad, "application/json", nil, 400, "invalid-event", "AEP-0001 §5.1", -1},
		{"invalid line", e0 + "\n" + bad + "\n", "application/x-ndjson", nil, 400, "invalid-event", "line 2", 1},
		{"no session", strings.Replace(e0, `"session":"s1",`, ``, 1), "application/json", nil, 400, "invalid-event", "AEP-0001 §5.2", -1},
		{"command", `{"aep":"0.1","id":"c","type":"control.cancel","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/x","agent":"x","session":"s1","data":{"scope":"session"}}`, "application/json", nil, 400, "invalid-event", "WebSocket", -1},
		{"empty", "", "application/json", nil, 400, "invalid-event", "", -1},
		{"two objects as json", e0 + e0, "application/json", nil, 400, "invalid-event", "AEP-0001 §5", -1},
	} {
		st, m := p.post(c.body, c.ctype, "", c.hdr...)
		if st != c.status {
			t.Errorf("%s: status %d %v, want %d", c.name, st, m, c.status)
			continue
		}
		if c.status == 426 {
			if v, _ := json.Marshal(m["versions"]); string(v) != `["0.1"]` {
				t.Errorf("426 body %v", m)
			}
			continue
		}
		detail, _ := m["detail"].(string)
		if m["error"] != c.code || !strings.Contains(detail, c.detail) {
			t.Errorf("%s: %v", c.name, m)
		}
		if idx, ok := m["index"].(float64); c.index >= 0 && (!ok || idx != c.index) {
			t.Errorf("%s: index %v, want %v", c.name, m["index"], c.index)
		}
	}
	// The refused batch took nothing: its valid first line is not there.
	if n := countEvents(p.stream(q("from", "all", "live", "0")).rest()); n != 3 {
		t.Errorf("after refusals the relay holds %d events, want 3", n)
	}
}

func countEvents(ms []sseMsg) int {
	n := 0
	for _, m := range ms {
		if m.Data != "" {
			n++
		}
	}
	return n
}

// TestPostLimits: an oversize body is answered 413 payload-too-large
// before it is read past the limit (by its Content-Length, or as it
// streams in), a batch over the event cap 413 too-many-events, and
// nothing of either is taken.
func TestPostLimits(t *testing.T) {
	p := startRelay(t, "", "--max-body", "4096", "--max-batch", "3")
	big := mkEvent("tool.completed", "a", "s", 0, `,"data":{"x":"`+strings.Repeat("y", 5000)+`"}`)
	st, m := p.post(big, "application/json", "")
	if st != 413 || m["error"] != "payload-too-large" {
		t.Errorf("by length: %d %v", st, m)
	}
	// A chunked body announces no length: the reader stops at the limit.
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAEP-Version: 0.1\r\nTransfer-Encoding: chunked\r\n\r\n", p.addr, p.token)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(conn, "%x\r\n%s\r\n", 2048, strings.Repeat("a", 2048))
	}
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil || resp.StatusCode != 413 {
		t.Errorf("chunked: %v %v", resp, err)
	}
	var lines []string
	for i := 0; i < 4; i++ {
		lines = append(lines, mkEvent("tool.completed", "a", "s", i, ""))
	}
	st, m = p.post(strings.Join(lines, "\n"), "application/x-ndjson", "")
	if st != 413 || m["error"] != "too-many-events" {
		t.Errorf("batch cap: %d %v", st, m)
	}
	if n := countEvents(p.stream(q("from", "all", "live", "0")).rest()); n != 0 {
		t.Errorf("%d events taken from refused bodies", n)
	}
	if st, _ := p.post(strings.Join(lines[:3], "\n"), "application/x-ndjson", ""); st != 202 {
		t.Errorf("a batch at the cap: %d", st)
	}
}

// TestStoredBeforeAck: an event acknowledged is in the relay's store.
func TestStoredBeforeAck(t *testing.T) {
	p := startRelay(t, "")
	e := mkEvent("tool.completed", "remote-agent", "s9", 0, "")
	if st, _ := p.post(e, "application/json", ""); st != 202 {
		t.Fatal(st)
	}
	b, err := os.ReadFile(filepath.Join(p.home, "relay", "store", "remote-agent", "s9.jsonl"))
	if err != nil || string(b) != e+"\n" {
		t.Errorf("store: %q %v", b, err)
	}
}

// TestHealthz: bare without a token, counts with one.
func TestHealthz(t *testing.T) {
	tok := "0123456789abcdef-op"
	p := startRelay(t, "", "--tokens", tokensFile(t, `{"token":"`+tok+`","identity":"consumer:op","scopes":["subscribe:*","read:*"]}`))
	st, b := p.get("/healthz", "")
	if st != 200 || strings.TrimSpace(string(b)) != `{"ok":true}` {
		t.Errorf("bare: %d %s", st, b)
	}
	st, b = p.get("/healthz", tok)
	var m map[string]any
	json.Unmarshal(b, &m)
	if st != 200 || m["sessions"] == nil || m["connections"] == nil || m["uptime_s"] == nil {
		t.Errorf("with a token: %d %s", st, b)
	}
	if st, b := p.get("/healthz", "wrong-token-0123456789"); st != 200 || strings.TrimSpace(string(b)) != `{"ok":true}` {
		t.Errorf("a wrong token: %d %s", st, b)
	}
}

// TestShipToRelay: another machine's record reaches the relay through
// aep-hook's own shipper (AEP_OUT pointing at the relay, an emitter token
// for that host): a real hook writes the log there, `aep-hook ship`
// delivers it, a subscriber here gets it byte for byte; a second run sends
// nothing again; a token for another host is refused as a falsified
// source (403), and the shipper keeps the events until a token that may
// speak for them sends them.
func TestShipToRelay(t *testing.T) {
	const laptopTok, otherTok = "0123456789abcdef-laptop", "0123456789abcdef-desktop"
	p := startRelay(t, "", "--tokens", tokensFile(t,
		`{"token":"`+viewTok+`","identity":"consumer:viewer","scopes":["subscribe:*","read:*"]}`,
		`{"token":"`+laptopTok+`","identity":"emitter:laptop/*"}`,
		`{"token":"`+otherTok+`","identity":"emitter:desktop/*"}`))
	s := p.stream(nil, "Authorization", "Bearer "+viewTok)
	remote := t.TempDir()
	session := "shipped-1"
	run := func(args []string, env ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), append([]string{"AEP_HOME=" + remote, "AEP_HOST=laptop"}, env...)...)
		if args[0] == "claude-code" {
			cmd.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"` + session + `","source":"startup","cwd":"/tmp"}`)
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	if code, out := run([]string{"claude-code"}); code != 0 {
		t.Fatalf("hook: %d %s", code, out)
	}
	logged, err := os.ReadFile(filepath.Join(remote, "logs", "claude-code", "shipped-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out := run([]string{"ship"}, "AEP_OUT="+p.base, "AEP_TOKEN="+laptopTok); code != 0 {
		t.Fatalf("ship: %d %s", code, out)
	}
	if m := s.next(false); m.Data+"\n" != string(logged) || m.ID != positionID(t, logged) {
		t.Errorf("shipped %q, the log holds %q", m.Data, logged)
	}
	if code, out := run([]string{"ship"}, "AEP_OUT="+p.base, "AEP_TOKEN="+laptopTok); code != 0 {
		t.Fatalf("second ship: %d %s", code, out)
	}
	if n := countEvents(p.stream(q("from", "all", "live", "0"), "Authorization", "Bearer "+viewTok).rest()); n != 1 {
		t.Errorf("%d events held after shipping twice, want 1", n)
	}

	// The desktop's token cannot speak for the laptop: 403, which the
	// shipper takes as credentials to fix, keeping the events to send
	// again once they are.
	remote, session = t.TempDir(), "shipped-2"
	run([]string{"claude-code"})
	if code, out := run([]string{"ship"}, "AEP_OUT="+p.base, "AEP_TOKEN="+otherTok); code != 1 || !strings.Contains(out, "403") || !strings.Contains(out, "behind by 1 event") {
		t.Errorf("ship under another host's token: exit %d %s", code, out)
	}
	var refused []map[string]any
	for _, a := range p.auditLines() {
		if a["kind"] == "event-rejected" && a["identity"] == "emitter:desktop/*" {
			refused = append(refused, a)
		}
	}
	if len(refused) != 1 || !strings.Contains(fmt.Sprint(refused[0]["reason"]), "falsified") {
		t.Errorf("the refusal audited: %v", refused)
	}
	if code, out := run([]string{"ship"}, "AEP_OUT="+p.base, "AEP_TOKEN="+laptopTok); code != 0 {
		t.Fatalf("ship with the right token: %d %s", code, out)
	}
	if m := s.next(false); !strings.Contains(m.Data, `"source":"aep://laptop/agent/claude-code/session/shipped-2"`) || m.ID != positionID(t, []byte(m.Data)) {
		t.Errorf("the second machine's event: %+v", m)
	}
}

// positionID is the SSE id of an event line: its session and position
// (session:epoch:seq). A session's first epoch comes from the clock, so a
// test takes it from the event as written.
func positionID(t *testing.T, line []byte) string {
	t.Helper()
	var e struct {
		Session    string
		Epoch, Seq int64
	}
	if err := json.Unmarshal(line, &e); err != nil {
		t.Fatalf("event %q: %v", line, err)
	}
	return fmt.Sprintf("%s:%d:%d", e.Session, e.Epoch, e.Seq)
}
