package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWSHello: hello first in both directions (another first frame gets
// hello-required and the close), one version from the intersection, or
// version-unsupported naming the versions, and the relay's capabilities.
func TestWSHello(t *testing.T) {
	p := startRelay(t, "")
	w, _, err := p.dial("")
	if err != nil {
		t.Fatal(err)
	}
	w.send(mkEvent("session.started", "a", "s", 0, ""))
	f := w.expect("error")
	if f.str("code") != "hello-required" {
		t.Errorf("event first: %s", f.raw)
	}
	if _, err := w.closed(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("close after hello-required: %v", err)
	}

	w, _, _ = p.dial("")
	w.send(`{"type":"hello","versions":["9.9","1.0"],"role":"consumer"}`)
	f = w.expect("error")
	if v, _ := json.Marshal(f.m["versions"]); f.str("code") != "version-unsupported" || string(v) != `["0.1"]` {
		t.Errorf("no intersection: %s", f.raw)
	}
	w.closed()

	w, _, _ = p.dial("")
	w.send(`{"type":"hello","versions":["0.2","0.1"],"role":"consumer","capabilities":{"futurecap":{"on":true}}}`)
	f = w.expect("hello")
	caps, _ := f.m["capabilities"].(map[string]any)
	if v, _ := json.Marshal(f.m["versions"]); string(v) != `["0.1"]` || caps["replay"] == nil || caps["roster"] == nil {
		t.Errorf("hello reply: %s", f.raw)
	}
	// Unknown frame types are ignored; the connection goes on.
	w.send(`{"type":"zigzag","note":"ignored"}`)
	w.send(`{"type":"subscribe","id":"s1"}`)
	if f := w.expect("subscribed"); f.str("id") != "s1" {
		t.Errorf("after an unknown frame: %s", f.raw)
	}
	w.send(`{"type":"ping","t":42}`)
	if f := w.expect("pong"); f.m["t"] != 42.0 {
		t.Errorf("pong: %s", f.raw)
	}

	w, _, _ = p.dial("")
	w.send(`{"type":"hello","versions":["0.1"],"role":"emitter"}`)
	if f := w.expect("error"); f.str("code") != "hello-required" || !strings.Contains(f.str("detail"), "identity.agent") {
		t.Errorf("emitter without identity: %s", f.raw)
	}
}

// TestWSSubscribe: multiplexed subscriptions by id, each answered; the
// §6.5 refusals in-band from the closed set, the connection surviving
// each; unsubscribe; replay with the replay-exhausted frame; events as
// ingested, byte for byte.
func TestWSSubscribe(t *testing.T) {
	p := startRelay(t, "", "--buffer", "3", "--max-subs", "3", "--max-from", "2")
	var lines []string
	for i := 0; i < 5; i++ {
		lines = append(lines, mkEvent("progress.status", "a", "s", i, ""))
	}
	p.post(strings.Join(lines, "\n"), "application/x-ndjson", "")
	w := p.mustDial("", "consumer", "watcher", `{"unknownkey":1}`)
	for _, c := range []struct{ frame, id, code string }{
		{`{"type":"subscribe","id":"bad","filter":{"data":1}}`, "bad", "invalid-filter"},
		{`{"type":"subscribe","id":"bad2","filter":"attention.*"}`, "bad2", "invalid-filter"},
		{`{"type":"subscribe","id":"bad3","from":{}}`, "bad3", "invalid-filter"},
		{`{"type":"subscribe","id":"bad4","from":[{"session":"a","epoch":0,"seq":0},{"session":"b","epoch":0,"seq":0},{"session":"c","epoch":0,"seq":0}]}`, "bad4", "limit-exceeded"},
		{`{"type":"subscribe","id":"bad5","capture":"most"}`, "bad5", "invalid-filter"},
		{`{"type":"subscribe","filter":{}}`, "", "invalid-filter"},
	} {
		w.send(c.frame)
		f := w.expect("error")
		if f.str("id") != c.id || f.str("code") != c.code {
			t.Errorf("%s: %s", c.frame, f.raw)
		}
	}
	w.send(`{"type":"subscribe","id":"r","filter":{"session":"s"},"from":[{"session":"s","epoch":0,"seq":0}]}`)
	got := w.until(func(f wsFrame) bool { return f.m["seq"] == 4.0 })
	if got[0].typ() != "subscribed" || got[0].str("id") != "r" {
		t.Fatalf("first: %s", got[0].raw)
	}
	ex := got[1]
	earliest, _ := json.Marshal(ex.m["earliest"])
	if ex.typ() != "replay-exhausted" || ex.str("sub") != "r" || ex.str("session") != "s" || string(earliest) != `{"epoch":0,"seq":2}` {
		t.Errorf("exhausted frame: %s", ex.raw)
	}
	for i, f := range got[2:] {
		if string(f.raw) != lines[2+i] {
			t.Errorf("replayed %s, posted %s", f.raw, lines[2+i])
		}
	}
	w.send(`{"type":"subscribe","id":"r","filter":{}}`)
	if f := w.expect("error"); f.str("code") != "invalid-filter" || f.str("id") != "r" {
		t.Errorf("an id in use: %s", f.raw)
	}
	w.send(`{"type":"subscribe","id":"two","filter":{"type":"tool.*"}}`)
	w.expect("subscribed")
	w.send(`{"type":"subscribe","id":"three","filter":{"type":"session.*"}}`)
	w.expect("subscribed")
	w.send(`{"type":"subscribe","id":"four"}`)
	if f := w.expect("error"); f.str("code") != "limit-exceeded" || !strings.Contains(f.str("detail"), "max-subs") {
		t.Errorf("over max-subs: %s", f.raw)
	}
	w.send(`{"type":"unsubscribe","id":"r"}`)
	if f := w.expect("unsubscribed"); f.str("id") != "r" {
		t.Errorf("unsubscribe: %s", f.raw)
	}
	// Live: only the subscriptions left see the new event.
	tool := mkEvent("tool.completed", "a", "s", 5, "")
	p.post(tool, "application/json", "")
	if f := w.next(); string(f.raw) != tool {
		t.Errorf("live: %s", f.raw)
	}
	p.post(mkEvent("progress.status", "a", "s", 6, ""), "application/json", "")
	p.post(mkEvent("session.ended", "a", "s", 7, ""), "application/json", "")
	if f := w.next(); f.str("type") != "session.ended" {
		t.Errorf("an event for an unsubscribed filter came: %s", f.raw)
	}
	// replay-all over WebSocket: every held event, no exhaustion frame.
	w.send(`{"type":"subscribe","id":"all","from":"all","filter":{"session":"s"}}`)
	fs := w.until(func(f wsFrame) bool { return f.m["seq"] == 7.0 })
	for _, f := range fs {
		if f.typ() == "replay-exhausted" {
			t.Errorf("replay-all declared a gap")
		}
	}
}

// TestWSBinary: a binary frame is refused and the connection closed
// (unsupported data).
func TestWSBinary(t *testing.T) {
	p := startRelay(t, "")
	w := p.mustDial("", "consumer", "x", "")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	w.c.Write(ctx, websocket.MessageBinary, []byte(`{"type":"subscribe","id":"b"}`))
	frames, err := w.closed()
	if websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Errorf("close: %v", err)
	}
	if len(frames) == 0 || frames[0].str("code") != "binary-unsupported" {
		t.Errorf("frames before the close: %v", frames)
	}
}

// TestWSEmitter: an emitter's events are ingested and fanned out like a
// POST's; an invalid one is answered in-band with its cause, and the
// connection survives.
func TestWSEmitter(t *testing.T) {
	p := startRelay(t, "")
	s := p.stream(nil)
	em := p.mustDial("", "emitter", "a", "")
	e := mkEvent("session.started", "a", "ws1", 0, "")
	em.send(e)
	if m := s.next(false); m.Data != e {
		t.Errorf("fan-out: %+v", m)
	}
	em.send(strings.Replace(mkEvent("tool.completed", "a", "ws1", 1, ""), `"seq":1,`, ``, 1))
	f := em.expect("error")
	if f.str("code") != "invalid-event" || f.str("cause") != "a-ws1-1" || !strings.Contains(f.str("detail"), "AEP-0001 §5.2") {
		t.Errorf("invalid event: %s", f.raw)
	}
	em.send(`not json`)
	if f := em.expect("error"); f.str("code") != "invalid-frame" {
		t.Errorf("not json: %s", f.raw)
	}
	e2 := mkEvent("session.ended", "a", "ws1", 2, "")
	em.send(e2)
	if m := s.next(false); m.Data != e2 {
		t.Errorf("after refusals: %+v", m)
	}
	// An emitter connection does not subscribe or ask the roster.
	em.send(`{"type":"subscribe","id":"e"}`)
	if f := em.expect("error"); f.str("code") != "unauthorized" || f.str("id") != "e" {
		t.Errorf("emitter subscribe: %s", f.raw)
	}
}

// TestWSRoster: the roster lists each live claim with its declarations
// verbatim; an emitter-role request is refused in-band; a claim goes with
// its connection.
func TestWSRoster(t *testing.T) {
	p := startRelay(t, "")
	em := p.mustDial("", "emitter", "claimant", `{"emits":["session","attention"],"control":{"accepts":["control.attention.respond"],"ack_window_ms":10000}}`)
	em.send(mkEvent("session.started", "claimant", "rs", 0, ""))
	// The claim has landed once the event is served.
	p.stream(q("from", `[{"session":"rs","epoch":0,"seq":-1}]`)).next(false)
	c := p.mustDial("", "consumer", "watcher", "")
	c.send(`{"type":"roster","id":"r-1"}`)
	f := c.expect("roster")
	entries, _ := f.m["entries"].([]any)
	if f.str("id") != "r-1" || len(entries) != 1 {
		t.Fatalf("roster: %s", f.raw)
	}
	if b, _ := json.Marshal(entries[0]); string(b) != `{"agent":"claimant","control":{"accepts":["control.attention.respond"],"ack_window_ms":10000},"emits":["session","attention"],"instance":"test","session":"rs"}` {
		t.Errorf("entry %s", b)
	}
	em.send(`{"type":"roster","id":"r-2"}`)
	if f := em.expect("error"); f.str("code") != "unauthorized" || f.str("id") != "r-2" {
		t.Errorf("emitter roster: %s", f.raw)
	}
	em.send(mkEvent("session.ended", "claimant", "rs", 1, ""))
	em.c.Close(websocket.StatusNormalClosure, "")
	for {
		c.send(`{"type":"roster","id":"r-3"}`)
		if f := c.expect("roster"); len(f.m["entries"].([]any)) == 0 {
			break
		}
	}
}

// TestWSPing: the relay pings at the configured interval.
func TestWSPing(t *testing.T) {
	p := startRelay(t, "", "--ping", "50ms")
	w := p.mustDial("", "consumer", "c", "")
	for f := range w.in {
		if f.err != nil {
			t.Fatalf("closed: %v", f.err)
		}
		if f.typ() == "ping" {
			if _, ok := f.m["t"].(float64); !ok {
				t.Errorf("ping without t: %s", f.raw)
			}
			return
		}
	}
}

// TestWSCapture: a subscribe frame's capture ceiling down-levels what is
// delivered (AEP-0003 §6.4): never above the ceiling, a full-source event
// under a redacted ceiling at metadata (fan-out never mints the redacted
// claim), a redacted-source one through a redacted ceiling unchanged, and
// without a ceiling everything as ingested.
func TestWSCapture(t *testing.T) {
	p := startRelay(t, "")
	full := mkEvent("run.started", "a", "s", 0, `,"run":"r1","capture":"full","data":{"trigger":"user","prompt":"FULL-CANARY"}`)
	red := mkEvent("attention.requested", "a", "s", 1, `,"subject":"q1","capture":"redacted","data":{"kind":"permission","prompt":"Allow [REDACTED:secret]?","options":[{"id":"allow","label":"Allow"}]}`)
	dial := func(capture string) *wsClient {
		w := p.mustDial("", "consumer", "c", "")
		sub := `{"type":"subscribe","id":"c"`
		if capture != "" {
			sub += `,"capture":"` + capture + `"`
		}
		w.send(sub + "}")
		w.expect("subscribed")
		return w
	}
	clients := map[string]*wsClient{}
	for _, c := range []string{"", "none", "metadata", "redacted"} {
		clients[c] = dial(c)
	}
	p.post(full+"\n"+red, "application/x-ndjson", "")
	for _, c := range []struct {
		ceiling        string
		run, attention string // the capture each is delivered at; "as" for the ingested bytes
	}{
		{"", "as", "as"},
		{"redacted", "metadata", "as"},
		{"metadata", "metadata", "metadata"},
		{"none", "none", "none"},
	} {
		w := clients[c.ceiling]
		for i, want := range []string{c.run, c.attention} {
			f := w.next()
			ingested := []string{full, red}[i]
			if want == "as" {
				if string(f.raw) != ingested {
					t.Errorf("ceiling %q: %s, want as ingested", c.ceiling, f.raw)
				}
				continue
			}
			if f.str("capture") != want || strings.Contains(string(f.raw), "CANARY") || strings.Contains(string(f.raw), "REDACTED") {
				t.Errorf("ceiling %q: %s, want capture %s without the free text", c.ceiling, f.raw, want)
			}
			if _, hasData := f.m["data"]; want == "none" && hasData {
				t.Errorf("ceiling none kept data: %s", f.raw)
			}
			if f.str("id") != fmt.Sprintf("a-s-%d", i) || f.m["seq"] != float64(i) {
				t.Errorf("ceiling %q changed the envelope: %s", c.ceiling, f.raw)
			}
		}
	}
}

// TestWSSilentPeer: a peer that answers no ping and sends nothing for
// --pong-timeout is cut with a closing frame, and its slot is freed.
func TestWSSilentPeer(t *testing.T) {
	p := startRelay(t, "", "--ping", "50ms", "--pong-timeout", "300ms", "--max-conns", "1")
	w := p.mustDial("", "consumer", "c", "")
	frames, err := w.closed() // reads, never answers a ping
	if len(frames) == 0 || frames[len(frames)-1].typ() != "closing" || !strings.Contains(frames[len(frames)-1].str("reason"), "silent") {
		t.Errorf("frames before the cut: %v", frames)
	}
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("close: %v", err)
	}
	// The one connection slot is free again.
	for deadline := time.Now().Add(wait); p.stream(q("live", "0")).Status != 200; {
		if time.Now().After(deadline) {
			t.Fatal("the silent peer's connection slot was never freed")
		}
	}
}
