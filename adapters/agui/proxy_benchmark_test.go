package agui_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/agui"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// benchEvents is the run each benchmark request streams: RUN_STARTED, 200
// text deltas, RUN_FINISHED, each flushed on its own.
func benchEvents() []string {
	evs := []string{"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t_bench\",\"runId\":\"r_bench\"}\n\n"}
	for i := range 200 {
		evs = append(evs, fmt.Sprintf("data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"token %d of the answer \"}\n\n", i))
	}
	return append(evs, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t_bench\",\"runId\":\"r_bench\"}\n\n")
}

func benchUpstream(evs []string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, e := range evs {
			io.WriteString(w, e)
			f.Flush()
		}
	}))
}

// streamRun posts one run to base and reads its events, returning the time
// to the first event and to the last.
func streamRun(b *testing.B, c *http.Client, base string, n int) (first, all time.Duration) {
	t0 := time.Now()
	resp, err := c.Post(base+"/run", "application/json", strings.NewReader(`{"threadId":"t_bench","runId":"r_bench","messages":[]}`))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := range n {
		if _, err := readEvent(br); err != nil {
			b.Fatalf("event %d: %v", i, err)
		}
		if i == 0 {
			first = time.Since(t0)
		}
	}
	return first, time.Since(t0)
}

func benchStreams(b *testing.B, base string, n int) {
	c := &http.Client{Transport: &http.Transport{}}
	var first, all time.Duration
	for b.Loop() {
		f, a := streamRun(b, c, base, n)
		first += f
		all += a
	}
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "µs-first-event")
	b.ReportMetric(float64(all.Nanoseconds())/1e3/float64(b.N)/float64(n), "µs/event")
}

// BenchmarkAguiProxy streams a run through the proxy, observed through the
// real emitter (deltas off, as by default).
func BenchmarkAguiProxy(b *testing.B) {
	evs := benchEvents()
	up := benchUpstream(evs)
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p := &agui.Proxy{Upstream: u, Handle: newEmitter(discardSink{})}
	srv := httptest.NewServer(p)
	defer srv.Close()
	benchStreams(b, srv.URL, len(evs))
	p.Wait()
}

// BenchmarkAguiProxyBaseline streams the same run straight from the agent.
func BenchmarkAguiProxyBaseline(b *testing.B) {
	evs := benchEvents()
	up := benchUpstream(evs)
	defer up.Close()
	benchStreams(b, up.URL, len(evs))
}

// discardSink is a sink that keeps nothing.
type discardSink struct{}

func (discardSink) Write(string, string, [][]byte) error { return nil }

// pacedRate and pacedFor are the steady load of BenchmarkAguiProxyPaced.
const (
	pacedRate = 5000 // events per second
	pacedFor  = 2 * time.Second
)

// BenchmarkAguiProxyPaced streams pacedRate events a second for pacedFor
// (token deltas and state deltas, every other one written to the log)
// through the proxy, observed through the on-disk emitter as `aep-hook
// agui` runs it, and reports the events the observer dropped (goal: none).
func BenchmarkAguiProxyPaced(b *testing.B) {
	total := int(pacedRate * pacedFor / time.Second)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		io.WriteString(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t_paced\",\"runId\":\"r_paced\"}\n\n")
		start := time.Now()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for sent := 0; sent < total; {
			<-tick.C
			due := min(total, int(time.Since(start)*pacedRate/time.Second))
			for ; sent < due; sent++ {
				if sent%2 == 0 {
					fmt.Fprintf(w, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"token %d \"}\n\n", sent)
				} else {
					fmt.Fprintf(w, "data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"replace\",\"path\":\"/n\",\"value\":%d}]}\n\n", sent)
				}
			}
			f.Flush()
		}
		io.WriteString(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t_paced\",\"runId\":\"r_paced\"}\n\n")
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	var dropped, observed int64
	for b.Loop() {
		em := shim.Config{Home: b.TempDir(), Host: "bench"}.NewFileEmitter(redact.DefaultPolicy())
		p := &agui.Proxy{Upstream: u, Handle: em.Handler(mapping.AGUI())}
		srv := httptest.NewServer(p)
		resp, err := http.Post(srv.URL+"/run", "application/json", strings.NewReader(`{"threadId":"t_paced","runId":"r_paced","messages":[]}`))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		p.Wait()
		srv.Close()
		dropped += p.Stats().Dropped.Load()
		observed += p.Stats().Observed.Load()
	}
	b.ReportMetric(float64(dropped)/float64(b.N), "dropped-events/op")
	b.ReportMetric(float64(observed)/float64(b.N), "observed-events/op")
}
