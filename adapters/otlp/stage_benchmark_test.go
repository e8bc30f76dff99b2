package otlp

import (
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// BenchmarkStageDecode is the fast path's decoding alone (records and
// keys) of the receiver benchmarks' requests.
func BenchmarkStageDecode(b *testing.B) {
	bodies := benchBodies(b, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := decodeWire(bodies[i%len(bodies)], &keyer{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStageMap is the Codex table's mapping alone of the decoded
// records, on one state.
func BenchmarkStageMap(b *testing.B) {
	bodies := benchBodies(b, 64)
	frs := make([][]flatResource, len(bodies))
	for i, body := range bodies {
		var err error
		if frs[i], err = decodeWire(body, &keyer{}); err != nil {
			b.Fatal(err)
		}
	}
	v := otlpVendors()[0]
	st := &mapping.State{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for _, fr := range frs[i%len(frs)][0].recs {
			if _, err := v.Map(recordMoment(fr.rec), st); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStageCPU reports the process CPU time per request of each
// stage, alternating: pdata decoding, the fast path's decoding, the
// receiver into an in-memory store, and into the on-disk emitter.
func BenchmarkStageCPU(b *testing.B) {
	bodies := benchBodies(b, 64)
	e := newEnv(b, Config{DedupeWindow: 1})
	h := e.r.Handler()
	mr, err := New(Config{DedupeWindow: 1}, memEmitter(discard{}), nil)
	if err != nil {
		b.Fatal(err)
	}
	mh := mr.Handler()
	const block = 8
	var t [4]time.Duration
	for i := 0; b.Loop(); i++ {
		for s := range t {
			t0 := cpuTime(b)
			for k := range block {
				body := bodies[(i*block+k)%len(bodies)]
				switch s {
				case 0:
					(&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
				case 1:
					decodeWire(body, &keyer{})
				case 2:
					serveBody(b, mh, body)
				case 3:
					serveBody(b, h, body)
				}
			}
			t[s] += cpuTime(b) - t0
		}
	}
	reqs := float64(b.N * block)
	for s, name := range []string{"pdata", "decode", "mem", "disk"} {
		b.ReportMetric(float64(t[s].Microseconds())/reqs, name+"-µs/req")
	}
}

// BenchmarkStageDecodeRecorded is the fast path's decoding of the recorded
// Codex sessions' requests (fixtures/codex-otel), as Codex's exporter
// wrote them or re-encoded from OTLP/JSON by pdata.
func BenchmarkStageDecodeRecorded(b *testing.B) {
	var bodies [][]byte
	for _, sc := range outputScenarios(b) {
		if sc.name != "bench" && sc.name != "random" {
			bodies = append(bodies, sc.bodies...)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			if _, err := decodeWire(body, &keyer{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
