package shim

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSharedEnvelope: lines encoded with the batch's shared parts are the
// lines encoded alone, whatever the events change from one to the next.
func TestSharedEnvelope(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	var sh shared
	var withShared, alone []byte
	for i := range 500 {
		seq := int64(i)
		e := Event{
			AEP: Version, ID: pick("01KB8ZJ5Q9R0000000000000", "01KB8ZJ5Q9R0000000000001"),
			Type: pick("x.codex.otel.tool_result", "x.codex.otel.sse_event", "tool.completed"), Subject: pick("", "Bash"),
			Time: "2026-11-30T05:00:00.000Z", Source: pick("aep://h/agent/codex/session/s", "aep://h/agent/codex"),
			Agent: pick("codex", "vscode"), Session: pick("", "s", "t\"q"), Seq: &seq,
			Severity: pick("", "warning"), Capture: pick("metadata", "full", ""), Tenant: pick("", "acme"),
			Data: map[string]any{"k": "v"},
		}
		var err error
		if withShared, err = appendEventShared(withShared, &e, &sh); err != nil {
			t.Fatal(err)
		}
		if alone, err = appendEvent(alone, &e); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(withShared, alone) {
			t.Fatalf("event %d: shared\n%s\nalone\n%s", i, withShared, alone)
		}
	}
}

// TestSourcesTime: the batch's remembered second and millisecond give
// formatTime's string for any sequence of times.
func TestSourcesTime(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 7, 3, 10, 15, 4, 0, time.UTC)
	var src sources
	for i := range 3000 {
		var at time.Time
		switch r.IntN(5) {
		case 0:
			at = base.Add(time.Duration(r.Int64N(int64(3 * time.Second))))
		case 1:
			at = base.Add(time.Duration(r.Int64N(int64(2 * time.Millisecond))))
		case 2:
			at = time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)).UTC() // past 9999 and before 1970 too
		case 3:
			at = time.Unix(-1, r.Int64N(1e9)).UTC()
		default:
			at = base
		}
		if got, want := src.time(at), formatTime(at); got != want {
			t.Fatalf("time %d %v: %s, want %s", i, at, got, want)
		}
	}
}
