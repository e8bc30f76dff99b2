package agui

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// FuzzEventFacts checks the identity an event gets: its own threadId and
// runId members when it has them (a non-string one counts as none), the
// stream's otherwise, and its type as the name.
func FuzzEventFacts(f *testing.F) {
	f.Add([]byte(`{"type":"TOOL_CALL_START","toolCallId":"c1"}`), "t1", "r1")
	f.Add([]byte(` {} `), "t\"", "")
	f.Add([]byte(`{"threadId":5,"runId":"own"}`), "x", "y")
	f.Fuzz(func(t *testing.T, ev []byte, thread, run string) {
		ms, err := Decode(ev)
		if !gjson.ValidBytes(ev) || !gjson.ParseBytes(ev).IsObject() {
			if err == nil {
				t.Fatalf("Decode(%q) accepted a non-object", ev)
			}
			return
		}
		if err != nil || len(ms) != 1 || !bytes.Equal(ms[0].Raw, ev) {
			t.Fatalf("Decode(%q) = %+v, %v", ev, ms, err)
		}
		f := eventFacts(ev, scope{thread: thread, run: run})
		for _, c := range []struct{ member, got, stream string }{
			{"threadId", f.Thread, thread}, {"runId", f.Run, run},
		} {
			want := c.stream
			if r := gjson.GetBytes(ev, c.member); r.Exists() {
				want = ""
				if r.Type == gjson.String {
					want = r.Str
				}
			}
			if c.got != want {
				t.Fatalf("%s of %s on stream %q: %q, want %q", c.member, ev, c.stream, c.got, want)
			}
		}
		if f.Name != mapping.Str(ev, "type") || f.Kind != mapping.KindEvent {
			t.Fatalf("facts %+v of %s", f, ev)
		}
	})
}
