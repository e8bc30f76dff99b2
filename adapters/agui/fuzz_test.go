package agui

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// FuzzSSE feeds arbitrary streams in arbitrary chunks to the SSE framer:
// the framing is the same however the bytes are split, and no event's data
// exceeds the bound.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"type\":\"RUN_STARTED\"}\n\n"), uint8(3), uint8(64))
	f.Add([]byte("event: x\r\ndata: a\r\ndata: b\r\n\r\n: comment\n\ndata:c\rdata: d\r\r"), uint8(1), uint8(8))
	f.Add([]byte("data: "+string(bytes.Repeat([]byte("z"), 300))+"\n\ndata: ok\n\n"), uint8(7), uint8(16))
	f.Fuzz(func(t *testing.T, in []byte, chunk, max uint8) {
		frame := func(step int) ([]string, []int) {
			var datas []string
			var over []int
			p := &sseParser{max: int(max) + 1, emit: func(d []byte, tooLong int) {
				if d == nil {
					over = append(over, tooLong)
					return
				}
				if len(d) > int(max)+1 {
					t.Fatalf("event of %d bytes passed the bound %d", len(d), int(max)+1)
				}
				datas = append(datas, string(d))
			}}
			for b := in; len(b) > 0; {
				k := min(step, len(b))
				p.feed(b[:k])
				b = b[k:]
			}
			return datas, over
		}
		d1, o1 := frame(len(in) + 1)
		d2, o2 := frame(int(chunk) + 1)
		if len(d1) != len(d2) || len(o1) != len(o2) {
			t.Fatalf("framing depends on chunking: %q/%v vs %q/%v", d1, o1, d2, o2)
		}
		for i := range d1 {
			if d1[i] != d2[i] {
				t.Fatalf("event %d: %q vs %q", i, d1[i], d2[i])
			}
		}
	})
}

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
