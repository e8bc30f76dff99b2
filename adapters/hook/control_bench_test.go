package hook

import (
	"bytes"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

// heldPerm is a Claude Code PermissionRequest, a moment the control loop
// holds.
var heldPerm = []byte(`{"session_id":"bench","hook_event_name":"PermissionRequest","permission_mode":"default",` +
	`"tool_name":"Bash","tool_input":{"command":"touch x","description":"Make x"}}`)

// benchHeld runs the held moment through a Runner b.N times with ctl as
// its control posture.
func benchHeld(b *testing.B, ctl *control.Config) {
	v, _ := mapping.Lookup("claude-code")
	r := &Runner{Vendor: v, Emitter: memEmitter(&discard{}), Deadline: roomy, Control: ctl}
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		r.Run("", bytes.NewReader(heldPerm), &out)
	}
	if out.Len() != 0 {
		b.Fatalf("reply %q, want the neutral one", out.String())
	}
}

// BenchmarkHeldNoRelay is a held moment with control on and no relay
// listening (the connection refused at once): against its baseline, the
// same moment observe-only, what control costs a user who runs the relay
// only sometimes.
func BenchmarkHeldNoRelay(b *testing.B) {
	addr := closedAddr(b)
	benchHeld(b, &control.Config{URL: "ws://" + addr + "/socket", Token: "t"})
}

// BenchmarkHeldNoRelayBaseline is the same moment observe-only.
func BenchmarkHeldNoRelayBaseline(b *testing.B) { benchHeld(b, nil) }

// BenchmarkControlNoRelayAdded runs the held moment observe-only and with
// control on against no relay, alternately, and reports the median of the
// per-pair differences (added-µs-p50/op): the goal figure of `make bench`,
// a difference from a baseline measured beside it.
func BenchmarkControlNoRelayAdded(b *testing.B) {
	addr := closedAddr(b)
	v, _ := mapping.Lookup("claude-code")
	// Both as the installed hook runs them (no destinations: the signals
	// ignored unless a relay takes the moment).
	observe := &Runner{Vendor: v, Emitter: memEmitter(&discard{}), Deadline: roomy, IgnoreSignals: true}
	held := &Runner{Vendor: v, Emitter: memEmitter(&discard{}), Deadline: roomy, IgnoreSignals: true,
		Control: &control.Config{URL: "ws://" + addr + "/socket", Token: "t"}}
	var out bytes.Buffer
	var diffs []time.Duration
	for b.Loop() {
		t0 := time.Now()
		observe.Run("", bytes.NewReader(heldPerm), &out)
		t1 := time.Now()
		held.Run("", bytes.NewReader(heldPerm), &out)
		diffs = append(diffs, time.Since(t1)-t1.Sub(t0))
	}
	if out.Len() != 0 {
		b.Fatalf("reply %q, want the neutral one", out.String())
	}
	slices.Sort(diffs)
	b.ReportMetric(float64(diffs[len(diffs)/2].Microseconds()), "added-µs-p50/op")
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
