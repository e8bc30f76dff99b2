package shim

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// benchVendor maps every moment to one tool.requested draft with content,
// so the benchmarks measure the emitter, not a table.
func benchVendor() mapping.Vendor {
	args := map[string]any{"command": "go test ./...", "description": "run the tests"}
	return mapping.Vendor{
		Name:     "bench",
		Identify: func(mapping.Moment) (string, string) { return "PreToolUse", "s" },
		Map: func(mapping.Moment, *mapping.State) ([]mapping.Draft, error) {
			return []mapping.Draft{{Type: "tool.requested", Subject: "Bash", Run: "r1", Data: map[string]any{
				"tool": map[string]any{"name": "Bash", "call_id": "c1"}, "args_digest": redact.Digest(args), "args": args,
			}}}, nil
		},
	}
}

type nopSink struct{}

func (nopSink) Write(string, string, [][]byte) error { return nil }

// BenchmarkEmit is the in-process pipeline per event: map, envelope, gate,
// position, encode, into an in-memory store and a discarding sink.
func BenchmarkEmit(b *testing.B) {
	e := testEmitter(nopSink{}, NewMemStore())
	v, m := benchVendor(), mapping.Moment{Raw: []byte(`{}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Handle(v, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmitBaseline encodes the same event with encoding/json alone:
// the least any JSON emitter does per event.
func BenchmarkEmitBaseline(b *testing.B) {
	seq, epoch := int64(1), int64(0)
	ev := Event{AEP: Version, ID: "01KB8ZJ5Q9R0000000000000", Type: "tool.requested", Subject: "Bash", Time: "2026-11-30T05:00:00.000Z",
		Source: "aep://h/agent/bench/session/s", Agent: "bench", Session: "s", Run: "r1", Seq: &seq, Epoch: &epoch, Capture: "metadata",
		Data: map[string]any{"tool": map[string]any{"name": "Bash", "call_id": "c1"}, "args_digest": "0123456789abcdef0123456789abcdef"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmitFile is one hook's emission on disk: the session lock, the
// state file and the log append, as a hook process does it.
func BenchmarkEmitFile(b *testing.B) {
	home := b.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs")}
	e := testEmitter(log, &FileStore{Dir: filepath.Join(home, "state"), Log: log, Now: time.Now})
	v, m := benchVendor(), mapping.Moment{Raw: []byte(`{}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Handle(v, m); err != nil {
			b.Fatal(err)
		}
	}
}
