package buffer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

func ev(t testing.TB, source, session string, epoch, seq int64, id string) *event.Event {
	t.Helper()
	raw := fmt.Sprintf(`{"aep":"0.1","id":%q,"type":"tool.completed","time":"2026-07-03T10:15:04Z","source":%q,"agent":"a","session":%q,"seq":%d,"epoch":%d}`, id, source, session, seq, epoch)
	e, err := event.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func seqs(evs []*event.Event) string {
	var b strings.Builder
	for i, e := range evs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%d", e.Pos.Epoch, e.Pos.Seq)
	}
	return b.String()
}

func TestAddOrderDedupeConflict(t *testing.T) {
	var b Buffers
	src := "aep://h/agent/a/session/s"
	for _, c := range []struct {
		epoch, seq int64
		id         string
		want       Outcome
	}{
		{0, 0, "a", Added},
		{0, 2, "c", Added},
		{0, 1, "b", Added}, // backfill lands in order
		{0, 1, "b", Duplicate},
		{0, 2, "z", Conflict}, // one position, two events
		{1, 0, "d", Added},
	} {
		if got := b.Add(ev(t, src, "s", c.epoch, c.seq, c.id)); got != c.want {
			t.Errorf("add %d:%d %s = %v, want %v", c.epoch, c.seq, c.id, got, c.want)
		}
	}
	got, ex := b.Since("s", pos(0, 0))
	if seqs(got) != "0:1,0:2,1:0" || len(ex) != 0 {
		t.Errorf("since 0:0 = %s %v", seqs(got), ex)
	}
	if seqs(b.All()) != "0:0,0:1,0:2,1:0" {
		t.Errorf("all = %s", seqs(b.All()))
	}
	cmd, _ := event.Parse([]byte(`{"aep":"0.1","id":"c","type":"control.cancel","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/x","agent":"x","session":"s"}`))
	if b.Add(cmd) != Unbuffered {
		t.Error("a command was buffered")
	}
}

// TestDepthExhausted: a stream keeps Depth events; a replay from before
// what it let go reports the gap with the earliest held position, one from
// at or after it does not.
func TestDepthExhausted(t *testing.T) {
	b := Buffers{Depth: 3}
	src := "aep://h/agent/a/session/s"
	for i := int64(0); i < 6; i++ {
		b.Add(ev(t, src, "s", 0, i, fmt.Sprint(i)))
	}
	got, ex := b.Since("s", pos(0, 1))
	if seqs(got) != "0:3,0:4,0:5" || len(ex) != 1 || ex[0].Earliest != (pos(0, 3)) {
		t.Errorf("since 0:1 = %s %v", seqs(got), ex)
	}
	if got, ex := b.Since("s", pos(0, 2)); seqs(got) != "0:3,0:4,0:5" || len(ex) != 0 {
		t.Errorf("since 0:2 (the last let go) = %s %v", seqs(got), ex)
	}
	if b.Add(ev(t, src, "s", 0, 1, "1")) != Stale {
		t.Error("a redelivery below the floor was buffered")
	}
	if b.Events() != 3 {
		t.Errorf("events = %d", b.Events())
	}
}

// TestSessionCap: past MaxSessions the stream written least recently goes,
// so a long-lived active stream outlives an idle newer one, and a dropped
// stream that comes back still declares its gap.
func TestSessionCap(t *testing.T) {
	b := Buffers{MaxSessions: 2}
	b.Add(ev(t, "aep://h/agent/a/session/old", "old", 0, 0, "o0"))
	b.Add(ev(t, "aep://h/agent/a/session/idle", "idle", 0, 0, "i0"))
	b.Add(ev(t, "aep://h/agent/a/session/old", "old", 0, 1, "o1")) // old is written again
	b.Add(ev(t, "aep://h/agent/a/session/new", "new", 0, 0, "n0"))
	if b.Sessions() != 2 {
		t.Fatalf("sessions = %d", b.Sessions())
	}
	if got, _ := b.Since("idle", pos(0, 0)); len(got) != 0 || b.Has("aep://h/agent/a/session/idle", "idle", "i0") {
		t.Error("the idle stream was kept")
	}
	// A resume from before what the dropped stream let go of hears of
	// the gap, though nothing of it is held.
	if got, ex := b.Since("idle", pos(0, -1)); len(got) != 0 || len(ex) != 1 || ex[0].Earliest != pos(0, 1) || ex[0].Source != "aep://h/agent/a/session/idle" {
		t.Errorf("a dropped stream's gap: %v %v", got, ex)
	}
	if !b.Has("aep://h/agent/a/session/old", "old", "o1") {
		t.Error("the active stream was dropped")
	}
	if b.Add(ev(t, "aep://h/agent/a/session/idle", "idle", 0, 0, "i0")) != Stale {
		t.Error("a redelivery into a dropped stream was buffered")
	}
	b.Add(ev(t, "aep://h/agent/a/session/idle", "idle", 0, 1, "i1"))
	if _, ex := b.Since("idle", pos(0, 0)); len(ex) != 0 {
		t.Errorf("nothing after 0:0 was let go, yet %v", ex)
	}
	b.Add(ev(t, "aep://h/agent/a/session/x", "x", 0, 0, "x0")) // drops old
	b.Add(ev(t, "aep://h/agent/a/session/y", "y", 0, 0, "y0"))
	b.Add(ev(t, "aep://h/agent/a/session/idle", "idle", 0, 2, "i2"))
	if _, ex := b.Since("idle", pos(0, 0)); len(ex) != 1 || ex[0].Earliest != (pos(0, 2)) {
		t.Errorf("a stream dropped and back: %v", ex)
	}
}

// TestBytesBudget: past MaxBytes whole streams go, least recent first,
// then the oldest events of the last one.
func TestBytesBudget(t *testing.T) {
	one := ev(t, "aep://h/agent/a/session/a", "a", 0, 0, "a0").Size()
	b := Buffers{MaxBytes: 3 * one}
	b.Add(ev(t, "aep://h/agent/a/session/a", "a", 0, 0, "a0"))
	b.Add(ev(t, "aep://h/agent/a/session/b", "b", 0, 0, "b0"))
	b.Add(ev(t, "aep://h/agent/a/session/b", "b", 0, 1, "b1"))
	b.Add(ev(t, "aep://h/agent/a/session/b", "b", 0, 2, "b2"))
	if b.Sessions() != 1 || b.Bytes() > 3*one+10 {
		t.Errorf("sessions %d bytes %d", b.Sessions(), b.Bytes())
	}
	b.Add(ev(t, "aep://h/agent/a/session/b", "b", 0, 3, "b3"))
	if got, ex := b.Since("b", pos(0, 0)); seqs(got) != "0:1,0:2,0:3" || len(ex) != 0 {
		t.Errorf("since = %s %v", seqs(got), ex)
	}
}

// TestSameNameStreams: two emitters' sessions of one name are two streams;
// a resume by the bare name covers both.
func TestSameNameStreams(t *testing.T) {
	var b Buffers
	b.Add(ev(t, "aep://h/agent/a/session/s", "s", 0, 0, "x"))
	if b.Add(ev(t, "aep://h/agent/b/session/s", "s", 0, 0, "x")) != Added {
		t.Error("the same id and position from another source is a different event")
	}
	if got, _ := b.Since("s", pos(0, -1)); len(got) != 2 {
		t.Errorf("since = %d events", len(got))
	}
}

func TestTruncate(t *testing.T) {
	var b Buffers
	b.Add(ev(t, "aep://h/agent/a/session/s", "s", 0, 5, "x"))
	b.Truncate("aep://h/agent/a/session/s", "s", pos(0, 4))
	if _, ex := b.Since("s", pos(0, 3)); len(ex) != 1 {
		t.Error("a loaded tail did not declare the older lines it left out")
	}
	if _, ex := b.Since("s", pos(0, 4)); len(ex) != 0 {
		t.Error("a resume at the floor reported a gap")
	}
}

// BenchmarkAdd is buffering in order into 500 full streams; the baseline
// appends the same events to a plain slice.
func BenchmarkAdd(b *testing.B) {
	evs := benchEvents(b)
	buf := Buffers{Depth: 100}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Add(evs[i%len(evs)])
	}
}

func BenchmarkAddBaseline(b *testing.B) {
	evs := benchEvents(b)
	var out []*event.Event
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out = append(out, evs[i%len(evs)])
		if len(out) > 50000 {
			out = out[:0]
		}
	}
}

func benchEvents(b *testing.B) []*event.Event {
	var evs []*event.Event
	for s := 0; s < 500; s++ {
		for q := 0; q < 200; q++ {
			evs = append(evs, ev(b, fmt.Sprintf("aep://h/agent/a/session/s%d", s), fmt.Sprint("s", s), 0, int64(q), fmt.Sprint(s, "-", q)))
		}
	}
	return evs
}

func pos(epoch, seq int64) event.Pos { return event.Pos{Epoch: epoch, Seq: seq} }
