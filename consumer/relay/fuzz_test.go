package relay

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/consumer/relay/buffer"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

// parseEvent is the admission of one body line.
func parseEvent(line []byte) ([]byte, error) {
	ev, err := event.Parse(line)
	if err != nil {
		return nil, err
	}
	return ev.Raw, nil
}

// FuzzIngestBody: a POST body (one event or an NDJSON batch) is read and
// admitted line by line without panic, within the batch bound, and every
// admitted event is one JSON line.
func FuzzIngestBody(f *testing.F) {
	ev := `{"aep":"0.1","id":"1","type":"tool.completed","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":0}`
	f.Add([]byte(ev), true)
	f.Add([]byte(ev+"\n\n"+ev+"\r\n"), true)
	f.Add([]byte("{\n \"aep\": \"0.1\"\n}"), false)
	f.Add([]byte("\n\n\n"), true)
	f.Fuzz(func(t *testing.T, body []byte, batch bool) {
		lines, err := readLines(bytes.NewReader(body), batch, 16)
		if err != nil {
			if err != errTooMany {
				t.Fatalf("reading from memory failed: %v", err)
			}
			return
		}
		if len(lines) > 16 {
			t.Fatalf("%d lines past the bound", len(lines))
		}
		for _, l := range lines {
			if e, err := parseEvent(l); err == nil && bytes.ContainsAny(e, "\r\n") {
				t.Fatalf("admitted a multi-line event: %q", e)
			}
		}
	})
}

// FuzzFrame: any text frame is classified (an event, a frame or a
// refusal) without panic, and the frame readers the relay applies to it
// (hello, subscribe with its from, roster ids) refuse or accept it whole.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","versions":["0.1"],"role":"emitter","identity":{"agent":"a","instance":"i"},"capabilities":{"control":{"accepts":["control.cancel",3]},"emits":["session"],"x":1}}`,
		`{"type":"subscribe","id":"s","filter":{"type":"attention.*"},"from":[{"session":"s","epoch":0,"seq":1}],"capture":"metadata"}`,
		`{"type":"subscribe","id":"s","from":"all"}`,
		`{"type":"subscribe","id":7,"from":{}}`,
		`{"type":"roster","id":"r"}`,
		`{"type":"ping","t":1}`,
		`{"type":"tool.completed"}`,
		`[1,2]`,
		`{"type":"hello","identity":"x","capabilities":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, ev, err := parseText(b)
		switch {
		case err != nil:
			if fr != nil || ev != nil {
				t.Fatal("a refusal with a result")
			}
			return
		case ev != nil:
			if bytes.ContainsAny(ev.Raw, "\r\n") {
				t.Fatal("a multi-line event")
			}
			return
		}
		h, bad := parseHello(fr)
		if bad == "" && h.role != "consumer" && h.agent == "" {
			t.Fatal("an emitter hello without identity.agent accepted")
		}
		req, serr := subscribeRequest(fr, 4)
		if serr == nil && (req.id == "" || len(req.from) > 4) {
			t.Fatalf("a subscribe accepted without an id or past the from bound: %+v", req)
		}
		if serr != nil && serr.code != codeInvalidFilter && serr.code != codeLimitExceeded {
			t.Fatalf("a subscribe refusal outside the closed set: %v", serr)
		}
		fr.str("id")
		lastEventID(string(b))
	})
}

// fuzzEvent is a valid event of session s at seq, for the seed corpora.
func fuzzEvent(id, typ, s string, seq int, extra string) string {
	return `{"aep":"0.1","id":"` + id + `","type":"` + typ + `","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a/session/` + s +
		`","agent":"a","session":"` + s + `","seq":` + strconv.Itoa(seq) + extra + `}`
}

// fuzzServer is one relay for a fuzz target's process: no log following,
// small bounds, served in-process through its guard.
func fuzzServer(f *testing.F) (*Server, http.Handler) {
	s, err := New(Options{Home: f.TempDir(), NoFollow: true, MaxBatch: 16, MaxBody: 64 << 10, Buffer: 8, MaxSessions: 8, MaxFrom: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	return s, s.Handler()
}

// serve runs one request through h, failing if it does not return (a
// bound against a hang, never a measure of speed).
func serve(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); h.ServeHTTP(rec, req) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %s did not return", req.Method, req.URL)
	}
	return rec
}

// postCodes is the closed set of POST /events refusals.
var postCodes = map[string]bool{"version-required": true, "unsupported-media-type": true, "payload-too-large": true,
	"too-many-events": true, "invalid-event": true, "unauthorized": true}

// FuzzPost: any body, under either content type and any version header,
// sent through the relay's own handler, is answered with a status of
// AEP-0003 §3.2 and a refusal code of the closed set, never a crash or a
// 5xx; an accepted body was every line an event, each one now held
// (buffered, or remembered for dedupe), counted once as new or duplicate.
func FuzzPost(f *testing.F) {
	s, h := fuzzServer(f)
	e0, e1 := fuzzEvent("1", "tool.completed", "s", 0, ""), fuzzEvent("2", "session.ended", "s", 1, `,"tenant":"acme"`)
	f.Add([]byte(e0), false, uint8(0))
	f.Add([]byte(e0+"\n"+e1+"\n"), true, uint8(0))
	f.Add([]byte(e0+"\n\n"+e0+"\r\n"), true, uint8(0))
	f.Add([]byte(`{"aep":"0.1","id":"x","type":"agent.idle","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a","agent":"a"}`), false, uint8(0))
	f.Add([]byte(strings.Replace(e0, `"agent":"a"`, `"agent":"b"`, 1)), false, uint8(0))
	f.Add([]byte(e0), false, uint8(1))
	f.Add([]byte(e0), false, uint8(2))
	f.Add([]byte(strings.Repeat(e0+"\n", 17)), true, uint8(0))
	f.Add([]byte("{\n \"aep\": \"0.1\"\n}"), false, uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, batch bool, variant uint8) {
		req := httptest.NewRequest("POST", "http://127.0.0.1/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if batch {
			req.Header.Set("Content-Type", "application/x-ndjson")
		}
		switch variant % 4 {
		case 0:
			req.Header.Set("AEP-Version", "0.1")
		case 1:
			req.Header.Set("AEP-Version", "2.0")
		case 3:
			req.Header.Set("AEP-Version", "0.1")
			req.Header.Set("Content-Type", "text/plain")
		}
		rec := serve(t, h, req)
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%d: the answer is not JSON: %q", rec.Code, rec.Body.Bytes())
		}
		switch rec.Code {
		case http.StatusAccepted:
		case http.StatusUpgradeRequired:
			if variant%4 != 1 {
				t.Fatalf("426 for AEP-Version 0.1")
			}
			return
		case http.StatusBadRequest, http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			if c, _ := m["error"].(string); !postCodes[c] {
				t.Fatalf("%d with code %q", rec.Code, m["error"])
			}
			return
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
		if variant%4 != 0 {
			t.Fatalf("accepted without AEP-Version 0.1 and a JSON content type")
		}
		lines, err := readLines(bytes.NewReader(body), batch, 16)
		if err != nil {
			t.Fatalf("accepted what the reader refuses: %v", err)
		}
		n, _ := m["new"].(float64)
		d, _ := m["duplicates"].(float64)
		if a, _ := m["accepted"].(float64); int(a) != len(lines) || n+d != a {
			t.Fatalf("accepted %v new %v duplicates %v for %d lines", m["accepted"], m["new"], m["duplicates"], len(lines))
		}
		s.hub.mu.Lock()
		defer s.hub.mu.Unlock()
		for i, l := range lines {
			ev, err := event.Parse(l)
			if err != nil {
				t.Fatalf("line %d accepted but not an event: %v", i, err)
			}
			held := s.hub.seen.Has(idKey{ev.Source, ev.ID})
			if ev.Sequenced {
				// Held, or already let go of by the small buffer (its
				// position at or below what was trimmed).
				held = s.hub.bufs.Has(ev.Source, ev.Session, ev.ID) || s.hub.bufs.Check(ev) == buffer.Stale
			}
			if !held {
				t.Fatalf("line %d accepted but not held: %s", i, l)
			}
		}
	})
}

// sseCodes is the closed set of /stream refusals.
var sseCodes = map[string]bool{"invalid-filter": true, "limit-exceeded": true, "unauthorized": true}

// FuzzStreamQuery: any /stream query (filter, capture, from, with
// live=0) and any Last-Event-ID, through the relay's own handler, is
// either refused 400/403 from the closed set of AEP-0003 §6.5 before any
// stream starts, or answered with a well-formed SSE stream whose every
// data line is a held event, ending after the replay.
func FuzzStreamQuery(f *testing.F) {
	s, h := fuzzServer(f)
	var lines []string
	for i := 0; i < 12; i++ {
		lines = append(lines, fuzzEvent("q"+strconv.Itoa(i), "tool.completed", "s"+strconv.Itoa(i%3), i, `,"capture":"full","data":{"tool":{"name":"Bash"},"input":{"command":"ls"}}`))
	}
	req := httptest.NewRequest("POST", "http://127.0.0.1/events", strings.NewReader(strings.Join(lines, "\n")))
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("AEP-Version", "0.1")
	if rec := httptest.NewRecorder(); func() int { h.ServeHTTP(rec, req); return rec.Code }() != http.StatusAccepted {
		f.Fatal("seeding the relay failed")
	}
	for _, c := range [][2]string{
		{"from=all", ""},
		{`from=[{"session":"s1","epoch":0,"seq":2}]&capture=metadata`, ""},
		{`from=[{"session":"s0","epoch":0,"seq":-1},{"session":"s2","epoch":0,"seq":0}]&filter={"type":"tool.*"}`, ""},
		{`filter={"data":1}`, ""},
		{`filter={"severity":{"gte":"notice"}}&from=all`, ""},
		{`capture=redacted&from=all`, ""},
		{"", "s1:0:4"},
		{"", "s1::4"},
		{`from={"session":"s"}`, "garbage"},
		{"from=" + strings.Repeat(`[{"session":"s","epoch":0,"seq":0},`, 5), ""},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, query, lastID string) {
		v, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		v.Set("live", "0")
		v.Del("access_token")
		req := httptest.NewRequest("GET", "http://127.0.0.1/stream", nil)
		req.URL.RawQuery = v.Encode()
		if lastID != "" && !strings.ContainsAny(lastID, "\r\n\x00") {
			req.Header.Set("Last-Event-ID", lastID)
		}
		rec := serve(t, h, req)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusForbidden:
			var m map[string]any
			json.Unmarshal(rec.Body.Bytes(), &m)
			if c, _ := m["error"].(string); !sseCodes[c] {
				t.Fatalf("%d with code %q", rec.Code, m["error"])
			}
			return
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("content type %q", ct)
		}
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			switch {
			case l == "", strings.HasPrefix(l, ":"), strings.HasPrefix(l, "event: "), strings.HasPrefix(l, "id: "):
			case strings.HasPrefix(l, "data: "):
				ev, err := event.Parse([]byte(l[6:]))
				if err != nil {
					t.Fatalf("a delivered event is not one: %v", err)
				}
				s.hub.mu.Lock()
				held := s.hub.bufs.Has(ev.Source, ev.Session, ev.ID)
				s.hub.mu.Unlock()
				if !held {
					t.Fatalf("delivered an event the relay does not hold: %s", l)
				}
			default:
				t.Fatalf("not an SSE line: %q", l)
			}
		}
	})
}

// FuzzRender: an admitted event rendered at each capture ceiling is
// still an admissible event, on one line; at full it is the ingested
// bytes; below full its capture is at most the ceiling (and never a
// redacted claim the source did not make, AEP-0001 §8.2(e)), and every
// attribute other than capture and data keeps its bytes and its place
// (AEP-0001 §4.2).
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		fuzzEvent("1", "tool.completed", "s", 0, `,"capture":"full","data":{"tool":{"name":"Bash"},"input":{"command":"cat /etc/passwd"},"output":"root:x:0"}`),
		fuzzEvent("2", "attention.requested", "s", 1, `,"capture":"redacted","subject":"req-1","data":{"kind":"permission","prompt":"Allow rm -rf?","options":[{"id":"allow","label":"Allow"}]}`),
		fuzzEvent("3", "run.started", "s", 2, `,"run":"r","data":{"trigger":"user","prompt":"hello"}`),
		fuzzEvent("4", "x.acme.tool.thing", "s", 3, `,"capture":"full","acmeid":7,"data":{"free":"text"}`),
		fuzzEvent("5", "session.started", "s", 4, `,"capture":"none"`),
		`{"data":{"prompt":"p"},"capture":"full","aep":"0.1","id":"6","type":"run.started","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := event.Parse(b)
		if err != nil {
			return
		}
		for l := redact.None; l <= redact.Full; l++ {
			out := render(ev, l)
			if l == redact.Full {
				if !bytes.Equal(out, ev.Raw) {
					t.Fatalf("rendered at full: %s, ingested %s", out, ev.Raw)
				}
				continue
			}
			if bytes.ContainsAny(out, "\r\n") {
				t.Fatalf("rendered at %s onto more than one line", l)
			}
			got, err := event.Parse(out)
			if err != nil {
				t.Fatalf("rendered at %s, no longer an event (%v): %s", l, err, out)
			}
			capture := got.Capture
			if capture == "" {
				capture = "metadata"
			}
			lvl, err := redact.ParseLevel(capture)
			if err != nil || lvl > l {
				t.Fatalf("rendered at %s claims capture %q", l, capture)
			}
			if lvl == redact.Redacted && ev.Capture != "redacted" {
				t.Fatalf("a redacted claim minted from capture %q", ev.Capture)
			}
			if a, b := envelopeMembers(ev.Raw), envelopeMembers(out); a != b {
				t.Fatalf("attributes changed at %s:\n%s\n%s", l, a, b)
			}
		}
	})
}

// envelopeMembers is raw's members other than capture and data, as
// written, in order.
func envelopeMembers(raw []byte) string {
	var b strings.Builder
	gjson.ParseBytes(raw).ForEach(func(k, v gjson.Result) bool {
		if s := k.String(); s != "capture" && s != "data" {
			b.WriteString(k.Raw + ":" + v.Raw + ",")
		}
		return true
	})
	return b.String()
}
