package opencode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/sse"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

var evtID = regexp.MustCompile(`"id":"evt_[0-9A-Za-z]+"`)

// benchStream is n events cycled from a recorded OpenCode session (tools,
// asks, text parts, idle), each with a fresh evt_ id, as the server frames
// them.
func benchStream(b *testing.B, n int) []byte {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "opencode", "recorded", "tools", "stream-1.sse"))
	if err != nil {
		b.Skip("recorded stream not found:", err)
	}
	events := bytes.Split(bytes.TrimSpace(raw), []byte("\n\n"))
	var out bytes.Buffer
	for i := 0; i < n; i++ {
		ev := events[i%len(events)]
		ev = evtID.ReplaceAll(ev, fmt.Appendf(nil, `"id":"evt_%012x%014d"`, 0x22cff3127001+i, i))
		out.Write(ev)
		out.WriteString("\n\n")
	}
	return out.Bytes()
}

// serveStream answers every event-stream request with body and the
// bridge's catch-up reads (REST) with nothing to catch up. A bridge that
// reconnects (a loaded machine can make it give up on the first headers)
// reads the stream again and its dedupe window drops what it has seen: the
// benchmark ends either way (once it hung for ten minutes on a stream
// served only once).
func serveStream(body []byte) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/event":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(body)
		case "/session/status":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "[]")
		}
	}))
}

// BenchmarkBridgeEvents is events through the whole bridge: the stream
// read and framed, each event decoded and deduped, mapped by the
// opencode-sse table and written to the JSONL log with its state, in
// batches (ns/op = per event).
func BenchmarkBridgeEvents(b *testing.B) {
	body := benchStream(b, b.N)
	srv := serveStream(body)
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	home := b.TempDir()
	em := shim.Config{Home: home, Host: "bench"}.NewFileEmitter(redact.DefaultPolicy())
	v, _ := mapping.Lookup("opencode-sse")
	handle := em.Handler(v)
	ctx, cancel := context.WithCancel(context.Background())
	var seen atomic.Int64
	want := int64(b.N)
	r := &follow.Runner{
		Source:     &Bridge{Base: base, Mode: mapping.Primary, Nonce: func() string { return "n" }},
		MinBackoff: time.Millisecond,
		Handle: func(ms []mapping.Moment) ([]shim.Result, error) {
			res, err := handle(ms)
			if seen.Add(int64(len(ms))) >= want {
				cancel()
			}
			return res, err
		},
		Window: max(1<<16, b.N+1), // every id of a stream read again is a repeat
	}
	b.ResetTimer()
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatal("bridge did not finish")
	}
	b.StopTimer()
	cancel()
	if st := r.Stats(); st.Items < want {
		b.Fatalf("read %d of %d events", st.Items, want)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkBridgeEventsBaseline reads the same stream alone: the HTTP
// response framed into events by the SSE reader, nothing else.
func BenchmarkBridgeEventsBaseline(b *testing.B) {
	body := benchStream(b, b.N)
	srv := serveStream(body)
	defer srv.Close()
	b.ResetTimer()
	resp, err := http.Get(srv.URL + "/event")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body, MaxEvent)
	n := 0
	for n < b.N {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	if n != b.N {
		b.Fatalf("read %d of %d events", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
