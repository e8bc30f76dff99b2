package deliver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// sink is a loopback collector that reads and acknowledges.
func sink(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	b.Cleanup(srv.Close)
	return srv
}

const benchEvents = 2000

// BenchmarkShipBatch ships a 2000-event log in batches of 500 to a loopback
// collector: cursor, lock, line reading and the binding included.
func BenchmarkShipBatch(b *testing.B) { benchShip(b, "") }

// benchShip ships the benchmark log to a loopback sink through the
// destination scheme prefix ("" for the AEP binding, "otlp+" for OTLP),
// rewinding the cursors before each round.
func benchShip(b *testing.B, scheme string) {
	srv := sink(b)
	d, _ := ParseDestination(scheme + srv.URL)
	s := newShipper(b, d)
	writeLog(b, s.LogRoot, "codex", "bench", 0, benchEvents, nil)
	s.Client = srv.Client()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resetCursors(b, s)
		if err := s.ShipAll(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchEvents*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkShipBatchBaseline POSTs the same bytes in the same batches with
// a bare net/http loop.
func BenchmarkShipBatchBaseline(b *testing.B) {
	srv := sink(b)
	s := newShipper(b)
	writeLog(b, s.LogRoot, "codex", "bench", 0, benchEvents, nil)
	raw, _ := os.ReadFile(filepath.Join(s.LogRoot, LogRel("codex", "bench")))
	lines := bytes.SplitAfter(raw, []byte{'\n'})
	var bodies [][]byte
	for i := 0; i < len(lines); i += DefaultBatchEvents {
		bodies = append(bodies, bytes.Join(lines[i:min(i+DefaultBatchEvents, len(lines))], nil))
	}
	c := srv.Client()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, body := range bodies {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/events", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/x-ndjson")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.ReportMetric(float64(benchEvents*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkOTLPExport projects and exports the same log as OTLP/HTTP.
func BenchmarkOTLPExport(b *testing.B) { benchShip(b, "otlp+") }

// resetCursors rewinds every cursor to the start without removing the
// folders, as a steady-state shipper finds them.
func resetCursors(b *testing.B, s *Shipper) {
	for _, d := range s.Dests {
		cur, _ := cursorPaths(s.Home, d, LogRel("codex", "bench"))
		if err := writeJSONAtomic(cur, Cursor{}); err != nil {
			b.Fatal(err)
		}
	}
}
