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

// The burst benchmarks are make bench's burst figure in-process, for
// profiling (go test -bench AcpTee -cpuprofile): the same 16 MiB stream
// through the tee around cat (the echoing stub where there is no cat)
// against cat alone, the editor's side a pair of real pipes as an
// editor's are (so the tee takes its spliced path), observation through
// the on-disk emitter as `aep-hook acp` wires it, one warm-up line echoed
// before the clock (start-up is not in it), and the clock running from the
// first byte written to the last byte read. What differs from make bench
// is the process: here the editor's goroutines share the tee's runtime
// and processors, and the tee is not the installed binary; make bench's
// figure is the goal's. Each op's time is the window alone.

// burstAgent is the agent the burst benchmarks relay through.
func burstAgent(b *testing.B) (argv, env []string) {
	if cat, err := exec.LookPath("cat"); err == nil {
		return []string{cat}, os.Environ()
	}
	return []string{os.Args[0]}, echoEnv(b)
}

// warmLine is the line echoed before the clock starts.
var warmLine = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"plan","entries":[]}}}` + "\n")

// burst echoes the warm-up line through w and r, then writes data into w
// (64 KiB at a time, from another goroutine) while reading it back from
// r, and returns the time from the first byte written to the last read.
func burst(b *testing.B, w io.Writer, r io.Reader, data []byte) time.Duration {
	br := bufio.NewReaderSize(r, 64<<10)
	if _, err := w.Write(warmLine); err != nil {
		b.Fatal(err)
	}
	if _, err := br.ReadBytes('\n'); err != nil {
		b.Fatalf("no warm-up echo: %v", err)
	}
	werr := make(chan error, 1)
	t0 := time.Now()
	go func() {
		for off := 0; off < len(data); off += 64 << 10 {
			if _, err := w.Write(data[off:min(off+64<<10, len(data))]); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	buf := make([]byte, 64<<10)
	for got := 0; got < len(data); {
		n, err := br.Read(buf)
		got += n
		if err != nil {
			b.Fatalf("read back %d of %d bytes: %v", got, len(data), err)
		}
	}
	d := time.Since(t0)
	if err := <-werr; err != nil {
		b.Fatal(err)
	}
	return d
}

// teeBurst times one burst through the tee around agent and returns the
// window, how long the tee took to return after it (observing what was
// still queued, within Tee.Drain) and the tee's counts.
func teeBurst(b *testing.B, data []byte, agent, env []string) (window, drain time.Duration, st *acp.Stats) {
	em := shim.Config{Home: b.TempDir(), Host: "bench"}.NewFileEmitter(redact.DefaultPolicy())
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	defer outR.Close()
	t := &acp.Tee{Command: agent, Env: env, Stdin: inR, Stdout: outW, Handle: em.Handler(mapping.ACP())}
	done := make(chan acp.Result, 1)
	go func() {
		res, err := t.Run(context.Background())
		if err != nil || res.ExitCode != 0 {
			b.Errorf("tee: %v (exit %d)", err, res.ExitCode)
		}
		done <- res
	}()
	window = burst(b, inW, outR, data)
	end := time.Now()
	inW.Close()
	res := <-done
	drain = time.Since(end)
	inR.Close()
	outW.Close()
	return window, drain, res.Stats
}

// pipeBurst times one burst through agent alone.
func pipeBurst(b *testing.B, data []byte, agent, env []string) time.Duration {
	cmd, in, out := startAgent(b, agent, env)
	d := burst(b, in, out, data)
	in.Close()
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkAcpTee is the tee's side of the burst (see burst): ns/op is the
// window.
func BenchmarkAcpTee(b *testing.B) {
	data := benchStream()
	agent, env := burstAgent(b)
	b.SetBytes(int64(len(data)))
	var window time.Duration
	var lost, unread int64
	for range b.N {
		d, _, st := teeBurst(b, data, agent, env)
		window += d
		lost += st.Dropped.Load()
		unread += st.Unread[0].Load() + st.Unread[1].Load()
	}
	b.ReportMetric(float64(window.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(len(data))*float64(b.N)/window.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(lost)/float64(b.N), "dropped-lines/op")
	b.ReportMetric(float64(unread)/float64(b.N), "unread-bytes/op")
}

// BenchmarkAcpTeeBaseline is the same burst through the agent alone.
func BenchmarkAcpTeeBaseline(b *testing.B) {
	data := benchStream()
	agent, env := burstAgent(b)
	b.SetBytes(int64(len(data)))
	var window time.Duration
	for range b.N {
		window += pipeBurst(b, data, agent, env)
	}
	b.ReportMetric(float64(window.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(len(data))*float64(b.N)/window.Seconds()/1e6, "MB/s")
}

// BenchmarkAcpTeeRatio alternates the two, op by op, and reports the
// median over the pairs of the agent-alone window over the tee's
// ("of-pipe"), as make bench's figure is made, with the tee's drain after
// the window apart ("drain-ms").
func BenchmarkAcpTeeRatio(b *testing.B) {
	goalBench(b)
	data := benchStream()
	agent, env := burstAgent(b)
	var ratios []float64
	var drain time.Duration
	for range b.N {
		tw, td, _ := teeBurst(b, data, agent, env)
		pw := pipeBurst(b, data, agent, env)
		ratios = append(ratios, float64(pw)/float64(tw))
		drain += td
	}
	slices.Sort(ratios)
	if os.Getenv("AEP_BENCH_VERBOSE") != "" {
		b.Logf("ratios %.2f", ratios)
	}
	b.ReportMetric(ratios[len(ratios)/2], "of-pipe")
	b.ReportMetric(float64(drain.Milliseconds())/float64(b.N), "drain-ms")
}

// startAgent starts argv with its pipes.
func startAgent(b *testing.B, argv, env []string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd, in, out
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

// pacedRate and pacedFor are the steady load of BenchmarkAcpTeePaced.
const (
	pacedRate = 5000 // messages per second, editor to agent
	pacedFor  = 2 * time.Second
)

// BenchmarkAcpTeePaced sends pacedRate messages a second for pacedFor
// through the tee around the echoing agent (so the observer sees twice as
// many lines), observed through the on-disk emitter as `aep-hook acp` runs
// it, and reports the lines the observer dropped (goal: none).
func BenchmarkAcpTeePaced(b *testing.B) {
	goalBench(b)
	env := echoEnv(b)
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_paced","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc1","status":"in_progress"}}}` + "\n")
	var dropped, observed int64
	for b.Loop() {
		home := b.TempDir()
		em := shim.Config{Home: home, Host: "bench"}.NewFileEmitter(redact.DefaultPolicy())
		pr, pw := io.Pipe()
		tee := &acp.Tee{Command: []string{os.Args[0]}, Env: env, Stdin: pr, Stdout: io.Discard, Handle: em.Handler(mapping.ACP())}
		done := make(chan acp.Result)
		go func() {
			res, err := tee.Run(context.Background())
			if err != nil {
				b.Error(err)
			}
			done <- res
		}()
		total := int(pacedRate * pacedFor / time.Second)
		start := time.Now()
		tick := time.NewTicker(time.Millisecond)
		for sent := 0; sent < total; {
			<-tick.C
			due := min(total, int(time.Since(start)*pacedRate/time.Second))
			for ; sent < due; sent++ {
				if _, err := pw.Write(line); err != nil {
					b.Fatal(err)
				}
			}
		}
		tick.Stop()
		pw.Close()
		res := <-done
		dropped += res.Stats.Dropped.Load()
		observed += res.Stats.Observed.Load()
	}
	b.ReportMetric(float64(dropped)/float64(b.N), "dropped-lines/op")
	b.ReportMetric(float64(observed)/float64(b.N), "observed-lines/op")
}

// BenchmarkAcpTeeLatency reports the round trip of one message through the
// tee (p50, µs) and what the tee adds to the direct round trip, with the
// editor's goroutines in the tee's own runtime. That is not how an editor
// meets the tee, and it measures the wrong hand-offs: a relay parked in
// Go's poller is woken here by the editor's own thread, for nothing, while
// a relay that waits in the kernel competes with the editor for the
// processors. make bench's figure is the installed binary between two
// processes; this one is printed beside it, for profiling.
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
	b.ReportMetric(base, "direct-µs-p50/msg")
}

// BenchmarkAcpTeeLatencyBaseline is the direct round trip (p50, µs).
func BenchmarkAcpTeeLatencyBaseline(b *testing.B) {
	env := echoEnv(b)
	b.ResetTimer()
	rtts := directRTT(b, env, b.N)
	b.StopTimer()
	b.ReportMetric(p50(rtts), "µs-p50/msg")
}

// goalBench skips a goal benchmark unless AEP_BENCH_GOALS is set: make bench
// runs each apart, with a count of its own.
func goalBench(b *testing.B) {
	if os.Getenv("AEP_BENCH_GOALS") == "" {
		b.Skip("goal benchmark: make bench runs it (AEP_BENCH_GOALS=1)")
	}
}
