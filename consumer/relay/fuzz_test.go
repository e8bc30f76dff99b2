package relay

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
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
