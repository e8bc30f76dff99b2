package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/acp"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// benchStream is an ACP-shaped stream: session/update notifications of
// ~300 bytes, 16 MiB in all.
func benchStream() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 16<<20; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc%d","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"line %d of the build output, nothing to see here"}}]}}}`+"\n", i, i)
	}
	return b.Bytes()
}

func echoEnv(b *testing.B) []string {
	return append(os.Environ(), roleEnv+"=echo", dirEnv+"="+b.TempDir())
}

// discardSink is a sink that keeps nothing.
type discardSink struct{}

func (discardSink) Write(string, string, [][]byte) error { return nil }

func benchHandler() shim.Handler {
	em := &shim.Emitter{Host: "bench", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: discardSink{}, IDs: shim.NewIDs()}
	return em.Handler(mapping.ACP())
}

// BenchmarkAcpTee relays the stream through the tee around an echoing
// agent, observing both directions through the real emitter.
func BenchmarkAcpTee(b *testing.B) {
	data := benchStream()
	env := echoEnv(b)
	h := benchHandler()
	b.SetBytes(int64(len(data)))
	dropped := int64(0)
	for b.Loop() {
		tee := &acp.Tee{Command: []string{os.Args[0]}, Env: env, Stdin: bytes.NewReader(data), Stdout: io.Discard, Handle: h}
		res, err := tee.Run(context.Background())
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("tee: %v (exit %d)", err, res.ExitCode)
		}
		dropped += res.Stats.Dropped.Load()
	}
	b.ReportMetric(float64(dropped)/float64(b.N), "dropped-lines/op")
}

// BenchmarkAcpTeeBaseline pipes the same stream through the same agent with
// io.Copy and no observation.
func BenchmarkAcpTeeBaseline(b *testing.B) {
	data := benchStream()
	env := echoEnv(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		cmd, in, out := startEcho(b, env)
		go func() { io.Copy(in, bytes.NewReader(data)); in.Close() }()
		io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// startEcho starts the echoing stub agent with its pipes.
func startEcho(b *testing.B, env []string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd, in, out
}

// pingPong sends one line at a time into w and waits for it on r,
// returning each round trip.
func pingPong(b *testing.B, w io.Writer, r *bufio.Reader, n int) []time.Duration {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"usage_update","usedTokens":1200,"outputTokens":80}}}` + "\n")
	rtts := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
		rtts = append(rtts, time.Since(t0))
	}
	return rtts
}

func p50(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds()) / 1e3
}

// directRTT measures round trips straight through the echo agent.
func directRTT(b *testing.B, env []string, n int) []time.Duration {
	cmd, in, out := startEcho(b, env)
	rtts := pingPong(b, in, bufio.NewReader(out), n)
	in.Close()
	cmd.Wait()
	return rtts
}

// teeRTT measures round trips through the tee around the echo agent: each
// message crosses both relays and is observed twice.
func teeRTT(b *testing.B, env []string, n int) []time.Duration {
	pr, pw, _ := os.Pipe()
	qr, qw, _ := os.Pipe()
	tee := &acp.Tee{Command: []string{os.Args[0]}, Env: env, Stdin: pr, Stdout: qw, Handle: benchHandler()}
	done := make(chan struct{})
	go func() { tee.Run(context.Background()); close(done) }()
	rtts := pingPong(b, pw, bufio.NewReader(qr), n)
	pw.Close()
	<-done
	pr.Close()
	qw.Close()
	qr.Close()
	return rtts
}

// BenchmarkAcpTeeLatency reports the round trip of one message through the
// tee (p50, µs) and what the tee adds to the direct round trip.
func BenchmarkAcpTeeLatency(b *testing.B) {
	env := echoEnv(b)
	base := p50(directRTT(b, env, 2000))
	var all []time.Duration
	b.ResetTimer()
	all = append(all, teeRTT(b, env, b.N)...)
	b.StopTimer()
	got := p50(all)
	b.ReportMetric(got, "µs-p50/msg")
	b.ReportMetric(got-base, "added-µs-p50/msg")
}

// BenchmarkAcpTeeLatencyBaseline is the direct round trip (p50, µs).
func BenchmarkAcpTeeLatencyBaseline(b *testing.B) {
	env := echoEnv(b)
	b.ResetTimer()
	rtts := directRTT(b, env, b.N)
	b.StopTimer()
	b.ReportMetric(p50(rtts), "µs-p50/msg")
}
