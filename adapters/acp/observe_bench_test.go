package acp

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// BenchmarkObserveLines is the observer's own cost per observed line, off
// the relays: a batch of maxBatchLines burst lines (one chunk), framed,
// classified, mapped and written through the on-disk emitter as `aep-hook
// acp` wires it. allocs/op and B/op are per batch; the line metrics divide
// them by its lines.
func BenchmarkObserveLines(b *testing.B) {
	var chunk bytes.Buffer
	for i := range maxBatchLines {
		fmt.Fprintf(&chunk, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc%d","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"line %d of the build output, nothing to see here"}}]}}}`+"\n", i, i)
	}
	em := shim.Config{Home: b.TempDir(), Host: "bench"}.NewFileEmitter(redact.DefaultPolicy())
	q := newQueue(DefaultQueueLines, DefaultQueueBytes)
	st := &Stats{}
	o := &observer{q: q, join: newJoiner(), handle: em.Handler(mapping.ACP()), stats: st, tee: "tee",
		nonce: shim.NewIDs().Now, maxLine: DefaultMaxLine, clock: func() (d time.Duration) { return 0 }}
	o.conn.lane = mapping.UnknownSession + "-tee"
	stop := make(chan struct{})
	close(stop)
	b.ReportAllocs()
	for b.Loop() {
		it := item{dir: AgentToClient, chunk: bytes.Clone(chunk.Bytes()), lines: maxBatchLines}
		q.offer(it)
		o.take(<-q.ch, stop)
	}
	if st.Observed.Load() == 0 {
		b.Fatal("nothing observed")
	}
}
