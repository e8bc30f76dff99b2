package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The ACP tee's goals, measured from outside as an editor sees them: the
// installed binary (`aep-hook acp -- cat`, observation on, writing its
// JSONL log to a temporary AEP_HOME) against `cat` alone on the same kind
// of pipe pair. Both are started the same way (exec, pipes made here) and
// one warm-up line echoed through each before the clock starts, so
// neither's start-up is in the figure (the hook-only build's exec of the
// full binary, the Go runtime's start, cat's): the clock runs from the
// first byte of the stream written to the last byte read back. Tee and
// pipe alternate, pair by pair, and the figure is the median over pairs of
// the pipe's time over the tee's.
//
// Beside the wall-clock times, the processor time the process tree (the
// tee and its cat, or cat) spent inside the same window, from the kernel's
// per-thread counters: on a loaded machine the wall clock measures the
// other tenants as much as the tee, this does not. A third row, for
// context only, is cat on pipes grown as the tee grows its own (the tee
// grows the editor's pipes too, which speeds the editor's side up as
// well): it shows how much of the tee's figure is the pipe size.

// acpStream is 16 MiB of ~300-byte session/update notifications.
func acpStream() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 16<<20; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc%d","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"line %d of the build output, nothing to see here"}}]}}}`+"\n", i, i)
	}
	return b.Bytes()
}

// pipeProc is a started process with its stdin and stdout.
type pipeProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startPipe starts argv on two pipes made here, grown to grow bytes when
// grow > 0 (where the system allows), and echoes the warm-up line
// through it.
func startPipe(argv []string, env []string, grow int) (*pipeProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	if grow > 0 {
		growPipe(inW, grow)
		growPipe(outR, grow)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &pipeProc{cmd: cmd, in: inW, out: bufio.NewReaderSize(outR, 64<<10)}
	// The warm-up line: once it is back, the process is up and relaying.
	if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"plan","entries":[]}}}` + "\n")); err != nil {
		return nil, err
	}
	if _, err := p.out.ReadBytes('\n'); err != nil {
		return nil, fmt.Errorf("%s: no warm-up echo: %w", argv[0], err)
	}
	return p, nil
}

// streamed is one timed stream: the window's wall time and the processor
// time the process tree spent in it (0 where that cannot be read).
type streamed struct {
	wall, cpu time.Duration
}

// stream writes data and reads it back, returning the time from the first
// byte written to the last read and the tree's processor time in between;
// then it closes stdin and waits.
func (p *pipeProc) stream(data []byte) (streamed, error) {
	werr := make(chan error, 1)
	pid := p.cmd.Process.Pid
	c0 := treeCPU(pid)
	t0 := time.Now()
	go func() {
		for off := 0; off < len(data); off += 64 << 10 {
			if _, err := p.in.Write(data[off:min(off+64<<10, len(data))]); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	buf := make([]byte, 64<<10)
	for got := 0; got < len(data); {
		n, err := p.out.Read(buf)
		got += n
		if err != nil {
			return streamed{}, fmt.Errorf("read back %d of %d bytes: %w", got, len(data), err)
		}
	}
	d := time.Since(t0)
	c1 := treeCPU(pid)
	if err := <-werr; err != nil {
		return streamed{}, err
	}
	p.in.Close()
	io.Copy(io.Discard, p.out)
	cpu := c1 - c0
	if c0 == 0 || c1 == 0 {
		cpu = 0
	}
	return streamed{wall: d, cpu: cpu}, p.cmd.Wait()
}

// timeStream starts argv and times data through it (see stream).
func timeStream(argv, env []string, data []byte, grow int) (streamed, error) {
	p, err := startPipe(argv, env, grow)
	if err != nil {
		return streamed{}, err
	}
	return p.stream(data)
}

// treeCPU is the processor time pid and its descendants have used so far,
// from each thread's /proc schedstat (nanoseconds); 0 where there is no
// such file (not Linux, or no schedstats).
func treeCPU(pid int) time.Duration {
	var total time.Duration
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		var ns int64
		if err != nil {
			return 0
		}
		fmt.Sscanf(string(b), "%d", &ns)
		total += time.Duration(ns)
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, k := range strings.Fields(string(kids)) {
			var kid int
			fmt.Sscanf(k, "%d", &kid)
			total += treeCPU(kid)
		}
	}
	return total
}

// burstLoss is what the tee's error log under home says observation lost:
// lines dropped from the queue and bytes relayed unread.
func burstLoss(home string) (lines, unread int) {
	b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"stage":"queue"`) && !strings.Contains(l, `"stage":"drain"`) {
			continue
		}
		var f struct {
			Lost  int `json:"lost"`
			Bytes int `json:"bytes"`
		}
		if json.Unmarshal([]byte(l), &f) == nil {
			lines += f.Lost
			if strings.Contains(l, `"stage":"queue"`) {
				unread += f.Bytes
			}
		}
	}
	return lines, unread
}

// teePipeSize is what the tee grows each pipe it relays between to
// (adapters/acp's pipeSize), for the context row.
const teePipeSize = 256 << 10

// acpFigures prints the tee against the pipe (burst), the round trip it
// adds to one message at a time and its drops at a steady 5,000 messages a
// second, and returns the three goals.
func acpFigures(bin, tmp string, pairs int) []goal {
	burst := goal{name: "ACP tee throughput / plain pipe, 16 MiB burst (median of pairs)", limit: 0.9, missing: true}
	paced := goal{name: "ACP tee lines dropped from observation at 5,000 msg/s for 2 s (of 20,000)", limit: 0, below: true, missing: true}
	rtt := goal{name: "ACP tee added round trip per message, p50 (median of pairs)", limit: 50, below: true, unit: "µs", missing: true}
	cat, err := exec.LookPath("cat")
	if err != nil {
		fmt.Println("ACP tee: no cat on PATH; not measured")
		return []goal{burst, rtt, paced}
	}
	fmt.Println()
	fmt.Printf("== ACP tee, as an editor sees it (%s acp -- cat against cat alone, each exec'd on two fresh pipes; observation on,\n", filepath.Base(bin))
	fmt.Println("   JSONL to a temporary AEP_HOME; 16 MiB of ~300-byte session/update lines; start-up excluded by a warm-up echo;")
	fmt.Printf("   first byte written to last byte read; %d alternating triples, median of cat time / tee time; CPU = the process\n", pairs)
	fmt.Println("   tree's processor time in that window (tee + cat, or cat), which the machine's other load does not inflate)")
	data := acpStream()
	var ratios, cpuRatios []float64
	var teeT, pipeT, grownT, teeC, pipeC, grownC []time.Duration
	var lost, unread []int
	for i := 0; i < pairs; i++ {
		home := filepath.Join(tmp, fmt.Sprintf("acp-home-%d", i))
		env := append(os.Environ(), "AEP_HOME="+home)
		td, err := timeStream([]string{bin, "acp", "--", cat}, env, data, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: acp tee:", err)
			return []goal{burst, rtt, paced}
		}
		pd, err := timeStream([]string{cat}, env, data, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: cat:", err)
			return []goal{burst, rtt, paced}
		}
		gd, err := timeStream([]string{cat}, env, data, teePipeSize)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: cat, grown pipes:", err)
			return []goal{burst, rtt, paced}
		}
		teeT, pipeT, grownT = append(teeT, td.wall), append(pipeT, pd.wall), append(grownT, gd.wall)
		teeC, pipeC, grownC = append(teeC, td.cpu), append(pipeC, pd.cpu), append(grownC, gd.cpu)
		ratios = append(ratios, float64(pd.wall)/float64(td.wall))
		if td.cpu > 0 {
			cpuRatios = append(cpuRatios, float64(pd.cpu)/float64(td.cpu))
		}
		l, u := burstLoss(home)
		lost, unread = append(lost, l), append(unread, u)
		os.RemoveAll(home)
	}
	for _, d := range [][]time.Duration{teeT, pipeT, grownT, teeC, pipeC, grownC} {
		slices.Sort(d)
	}
	slices.Sort(ratios)
	slices.Sort(cpuRatios)
	slices.Sort(lost)
	slices.Sort(unread)
	mid := func(d []time.Duration) time.Duration { return d[len(d)/2] }
	mb := float64(len(data)) / (1 << 20)
	fmt.Printf("%-44s %10s %8s %14s\n", "", "p50 time", "MiB/s", "p50 CPU")
	row := func(name string, t, c []time.Duration) {
		cpu := "-"
		if mid(c) > 0 {
			cpu = round(mid(c))
		}
		fmt.Printf("%-44s %10s %8.0f %14s\n", name, round(mid(t)), mb/mid(t).Seconds(), cpu)
	}
	row("tee (aep-hook acp -- cat)", teeT, teeC)
	row("pipe (cat)", pipeT, pipeC)
	row(fmt.Sprintf("context: cat on pipes grown to %d KiB", teePipeSize>>10), grownT, grownC)
	fmt.Printf("ratios (cat / tee, wall) %s\n", fmtRatios(ratios))
	if len(cpuRatios) > 0 {
		fmt.Printf("ratios (cat / tee, CPU)  %s\n", fmtRatios(cpuRatios))
	}
	fmt.Printf("observation lost in the burst, as the tee recorded it (p50 of the tee runs): %d lines dropped (queue, drain),\n", lost[len(lost)/2])
	fmt.Printf("   %d bytes relayed unread (lines uncounted), of %d lines each way (%.0f MiB both ways)\n",
		unread[len(unread)/2], bytes.Count(data, []byte{'\n'}), 2*mb)
	burst.value, burst.missing = ratios[len(ratios)/2], false
	burst.base = fmt.Sprintf("tee p50 %s, cat p50 %s (wall, same run, alternating; CPU in window tee+cat %s, cat %s)",
		round(mid(teeT)), round(mid(pipeT)), round(mid(teeC)), round(mid(pipeC)))

	if rtt, err = acpRoundTrip(bin, cat, tmp, rtt); err != nil {
		fmt.Fprintln(os.Stderr, "bench: acp round trip:", err)
		return []goal{burst, rtt, paced}
	}

	sent, dropped, unreadPaced, err := acpPaced(bin, cat, filepath.Join(tmp, "acp-paced"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: acp paced:", err)
		return []goal{burst, rtt, paced}
	}
	// cat echoes each message, so the tee relays (and observes) it twice:
	// once each way. The tee records its drops as lines, both ways, and
	// what it relayed unread as bytes; those are counted here as the
	// paced line's worth, rounded up.
	fmt.Printf("paced: %d messages at 5,000/s through the tee around cat, %d lines relayed (one each way a message);\n", sent, 2*sent)
	fmt.Printf("       lines relayed but not observed, as the tee recorded them (queue and drain): %d; bytes relayed unread: %d\n", dropped, unreadPaced)
	if unreadPaced > 0 {
		dropped += (unreadPaced + len(pacedLine) - 1) / len(pacedLine)
	}
	paced.value, paced.missing = float64(dropped), false
	paced.base = fmt.Sprintf("%d lines dropped of %d relayed (%d messages, each once each way through cat)", dropped, 2*sent, sent)
	return []goal{burst, rtt, paced}
}

func fmtRatios(r []float64) string {
	s := make([]string, len(r))
	for i, v := range r {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, " ")
}

// pacedLine is the message acpPaced sends.
var pacedLine = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_paced","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc1","status":"in_progress"}}}` + "\n")

// acpPaced sends 5,000 session/update lines a second for 2 s through the
// tee around cat and returns the messages sent, the lines the tee recorded
// as relayed but not observed (its error log's queue and drain failures;
// lines of both directions, up to twice the messages) and the bytes it
// recorded as relayed unread.
func acpPaced(bin, cat, home string) (sent, dropped, unread int, err error) {
	const rate, total = 5000, 10000
	env := append(os.Environ(), "AEP_HOME="+home)
	p, err := startPipe([]string{bin, "acp", "--", cat}, env, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	go io.Copy(io.Discard, p.out)
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	for sent < total {
		<-tick.C
		due := min(total, int(time.Since(start)*rate/time.Second))
		for ; sent < due; sent++ {
			if _, err := p.in.Write(pacedLine); err != nil {
				tick.Stop()
				return sent, 0, 0, err
			}
		}
	}
	tick.Stop()
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		return sent, 0, 0, err
	}
	dropped, unread = burstLoss(home)
	return sent, dropped, unread, nil
}

// The per-message goal, measured as the burst is and as an editor meets
// the tee: the installed binary around cat against cat alone, each exec'd
// on fresh pipes, observation on, one session/update line at a time, each
// written once the one before it is back. Tee and cat alternate, pair by
// pair, and the figure is the median over pairs of the tee's p50 round
// trip less cat's.
//
// Both figures are mostly the kernel's hand-offs between processes: the
// tee puts two more in each round trip (editor to tee, agent to tee), and
// one that wakes an idle processor of a virtual machine costs tens of
// microseconds where one that stays on the waker's costs one or two. Which
// of the two a run gets is the scheduler's placement, and it holds for a
// whole run, so the pairs spread widely and are all printed. A context
// row paces the messages a millisecond apart, as an editor's are: the
// processors are idle between them, every hand-off wakes one, and that
// is what a sparse session's messages cost, through the tee or not.
const (
	rttPairs, rttMessages           = 9, 2000
	rttPacedPairs, rttPacedMessages = 3, 300
	rttPacedGap                     = time.Millisecond
)

// acpRoundTrip measures the per-message goal (see above) into g.
func acpRoundTrip(bin, cat, tmp string, g goal) (goal, error) {
	fmt.Println()
	fmt.Printf("== ACP tee, one message at a time (%s acp -- cat against cat alone, as the burst above; %d round trips per\n", filepath.Base(bin), rttMessages)
	fmt.Printf("   process, each line written once the last is back; %d alternating pairs, figure = median of the pairs'\n", rttPairs)
	fmt.Printf("   tee p50 less cat p50; context: %d pairs of %d lines paced %s apart)\n", rttPacedPairs, rttPacedMessages, rttPacedGap)
	env := append(os.Environ(), "AEP_HOME="+filepath.Join(tmp, "acp-rtt"))
	pair := func(n int, gap time.Duration) (tee, pipe time.Duration, err error) {
		if tee, err = roundTrips([]string{bin, "acp", "--", cat}, env, n, gap); err != nil {
			return 0, 0, fmt.Errorf("tee: %w", err)
		}
		if pipe, err = roundTrips([]string{cat}, env, n, gap); err != nil {
			return 0, 0, fmt.Errorf("cat: %w", err)
		}
		return tee, pipe, nil
	}
	var added, tees, pipes []time.Duration
	for range rttPairs {
		t, p, err := pair(rttMessages, 0)
		if err != nil {
			return g, err
		}
		added, tees, pipes = append(added, t-p), append(tees, t), append(pipes, p)
	}
	var pacedAdded, pacedTees, pacedPipes []time.Duration
	for range rttPacedPairs {
		t, p, err := pair(rttPacedMessages, rttPacedGap)
		if err != nil {
			return g, err
		}
		pacedAdded, pacedTees, pacedPipes = append(pacedAdded, t-p), append(pacedTees, t), append(pacedPipes, p)
	}
	for _, d := range [][]time.Duration{added, tees, pipes, pacedAdded, pacedTees, pacedPipes} {
		slices.Sort(d)
	}
	mid := func(d []time.Duration) time.Duration { return d[len(d)/2] }
	us := func(d []time.Duration) string {
		s := make([]string, len(d))
		for i, v := range d {
			s[i] = fmt.Sprintf("%.1f", float64(v)/float64(time.Microsecond))
		}
		return strings.Join(s, " ")
	}
	fmt.Printf("added by the tee, each pair (µs)          %s\n", us(added))
	fmt.Printf("tee p50 / cat p50, each run (µs)          %s / %s\n", us(tees), us(pipes))
	fmt.Printf("context, paced %s apart: added (µs)       %s (tee p50 %s, cat p50 %s)\n", rttPacedGap, us(pacedAdded),
		us([]time.Duration{mid(pacedTees)}), us([]time.Duration{mid(pacedPipes)}))
	g.value, g.missing = float64(mid(added))/float64(time.Microsecond), false
	g.base = fmt.Sprintf("tee p50 %s µs, cat p50 %s µs (medians of %d alternating processes each)",
		us([]time.Duration{mid(tees)}), us([]time.Duration{mid(pipes)}), rttPairs)
	for _, in := range goalBenches("AcpTeeLatency") {
		if !in.missing {
			g.base += fmt.Sprintf("; in one process, the editor's goroutines in the tee's runtime: %.3g µs added (%s)", in.value, strings.TrimSpace(in.base))
		}
	}
	return g, nil
}

// roundTrips starts argv (see startPipe), sends n lines through it one at
// a time, gap apart, and returns the p50 round trip.
func roundTrips(argv, env []string, n int, gap time.Duration) (time.Duration, error) {
	p, err := startPipe(argv, env, 0)
	if err != nil {
		return 0, err
	}
	rtts := make([]time.Duration, 0, n)
	for range n {
		if gap > 0 {
			time.Sleep(gap) // the pacing itself, not a wait for anything
		}
		t0 := time.Now()
		if _, err := p.in.Write(pacedLine); err != nil {
			return 0, err
		}
		if _, err := p.out.ReadBytes('\n'); err != nil {
			return 0, fmt.Errorf("echo %d of %d: %w", len(rtts)+1, n, err)
		}
		rtts = append(rtts, time.Since(t0))
	}
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		return 0, err
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}
