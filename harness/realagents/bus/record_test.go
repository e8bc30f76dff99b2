package bus

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// TestRecorderTapeReplays records a bridge-shaped conversation through the
// Recorder (a stream, then the REST answers a catch-up asks for) and
// replays the tape into a true record.
func TestRecorderTapeReplays(t *testing.T) {
	stream := "data: {\"id\":\"evt_22cff3127001a\",\"type\":\"session.created\",\"properties\":{\"sessionID\":\"s1\",\"info\":{\"id\":\"s1\",\"version\":\"1.18.33\",\"directory\":\"/machine/proj\"}}}\n\n" +
		"data: {\"id\":\"evt_22cff3127002a\",\"type\":\"message.updated\",\"properties\":{\"sessionID\":\"s1\",\"info\":{\"id\":\"msg_22cff3127002\",\"sessionID\":\"s1\",\"role\":\"user\"}}}\n\n" +
		"data: {\"id\":\"evt_22cff3127003a\",\"type\":\"session.idle\",\"properties\":{\"sessionID\":\"s1\"}}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/event":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, stream)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	dir := t.TempDir()
	rec := NewRecorder(u, dir)
	rec.Rewrite = func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("/machine/proj"), []byte("/home/user/proj")) }
	front := httptest.NewServer(rec)
	defer front.Close()
	for _, path := range []string{"/event", "/session/status"} {
		resp, err := http.Get(front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := rec.Save(Tape{Agent: "opencode", Vendor: "opencode", Scenario: "unit", RecordedAt: time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC),
		Facts: truth.Facts{Turns: 1, Sessions: 1}}); err != nil {
		t.Fatal(err)
	}
	tp, err := LoadTape(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Exchanges) != 2 || tp.Exchanges[0].File != "stream-1.sse" || string(tp.Exchanges[1].Body) != "{}" {
		t.Fatalf("exchanges %+v", tp.Exchanges)
	}
	if b, _ := tp.Stream(tp.Exchanges[0]); !bytes.Contains(b, []byte("/home/user/proj")) || bytes.Contains(b, []byte("/machine")) {
		t.Fatalf("stream not rewritten: %s", b)
	}
	if res := Replay(tp, t.TempDir(), nil); len(res.Problems) > 0 {
		t.Fatalf("replay: %v", res.Problems)
	}
}
