package main

import (
	"bufio"
	"bytes"
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
// JSONL log to a temporary AEP_HOME) against `cat` alone on the same pipe
// pair. Each process is started and one warm-up line echoed through it
// before the clock starts (start-up excluded); the clock runs from the
// first byte of the stream written to the last byte read back. Tee and
// pipe alternate, pair by pair, and the figure is the median over pairs of
// the pipe's time over the tee's.

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

func startPipe(argv []string, env []string) (*pipeProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &pipeProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	// The warm-up line: once it is back, the process is up and relaying.
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"plan","entries":[]}}}` + "\n")); err != nil {
		return nil, err
	}
	if _, err := p.out.ReadBytes('\n'); err != nil {
		return nil, fmt.Errorf("%s: no warm-up echo: %w", argv[0], err)
	}
	return p, nil
}

// stream writes data and reads it back, returning the time from the first
// byte written to the last read; then it closes stdin and waits.
func (p *pipeProc) stream(data []byte) (time.Duration, error) {
	werr := make(chan error, 1)
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
			return 0, fmt.Errorf("read back %d of %d bytes: %w", got, len(data), err)
		}
	}
	d := time.Since(t0)
	if err := <-werr; err != nil {
		return 0, err
	}
	p.in.Close()
	io.Copy(io.Discard, p.out)
	return d, p.cmd.Wait()
}

// timeStream starts argv and times data through it (see stream).
func timeStream(argv, env []string, data []byte) (time.Duration, error) {
	p, err := startPipe(argv, env)
	if err != nil {
		return 0, err
	}
	return p.stream(data)
}

// acpFigures prints the tee against the pipe (burst) and the tee's drops
// at a steady 5,000 messages a second, and returns the two goals.
func acpFigures(bin, tmp string, pairs int) []goal {
	burst := goal{name: "ACP tee throughput / plain pipe, 16 MiB burst (median of pairs)", limit: 0.9, missing: true}
	paced := goal{name: "ACP tee lines dropped from observation at 5,000 msg/s for 2 s (of 20,000)", limit: 0, below: true, missing: true}
	cat, err := exec.LookPath("cat")
	if err != nil {
		fmt.Println("ACP tee: no cat on PATH; not measured")
		return []goal{burst, paced}
	}
	fmt.Println()
	fmt.Printf("== ACP tee, as an editor sees it (%s acp -- cat against cat alone; observation on, JSONL to a temporary AEP_HOME;\n", filepath.Base(bin))
	fmt.Println("   16 MiB of ~300-byte session/update lines; start-up excluded by a warm-up echo; first byte written to last byte read;")
	fmt.Printf("   %d alternating pairs, median of pipe time / tee time)\n", pairs)
	data := acpStream()
	var ratios []float64
	var teeT, pipeT []time.Duration
	for i := 0; i < pairs; i++ {
		home := filepath.Join(tmp, fmt.Sprintf("acp-home-%d", i))
		env := append(os.Environ(), "AEP_HOME="+home)
		td, err := timeStream([]string{bin, "acp", "--", cat}, env, data)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: acp tee:", err)
			return []goal{burst, paced}
		}
		pd, err := timeStream([]string{cat}, env, data)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: cat:", err)
			return []goal{burst, paced}
		}
		teeT, pipeT = append(teeT, td), append(pipeT, pd)
		ratios = append(ratios, float64(pd)/float64(td))
		os.RemoveAll(home)
	}
	slices.Sort(ratios)
	slices.Sort(teeT)
	slices.Sort(pipeT)
	mb := float64(len(data)) / (1 << 20)
	fmt.Printf("%-22s %10s %12s\n", "", "p50 time", "MiB/s")
	fmt.Printf("%-22s %10s %12.0f\n", "tee", round(teeT[len(teeT)/2]), mb/teeT[len(teeT)/2].Seconds())
	fmt.Printf("%-22s %10s %12.0f\n", "pipe (cat)", round(pipeT[len(pipeT)/2]), mb/pipeT[len(pipeT)/2].Seconds())
	fmt.Printf("ratios %s\n", fmtRatios(ratios))
	burst.value, burst.missing = ratios[len(ratios)/2], false
	burst.base = fmt.Sprintf("tee p50 %s, pipe (cat) p50 %s, same run, alternating", round(teeT[len(teeT)/2]), round(pipeT[len(pipeT)/2]))

	sent, dropped, err := acpPaced(bin, cat, filepath.Join(tmp, "acp-paced"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: acp paced:", err)
		return []goal{burst, paced}
	}
	// cat echoes each message, so the tee relays (and observes) it twice:
	// once each way. The tee records its drops as lines, both ways.
	fmt.Printf("paced: %d messages at 5,000/s through the tee around cat, %d lines relayed (one each way a message);\n", sent, 2*sent)
	fmt.Printf("       lines relayed but not observed, as the tee recorded them (queue and drain): %d\n", dropped)
	paced.value, paced.missing = float64(dropped), false
	paced.base = fmt.Sprintf("%d lines dropped of %d relayed (%d messages, each once each way through cat)", dropped, 2*sent, sent)
	return []goal{burst, paced}
}

func fmtRatios(r []float64) string {
	s := make([]string, len(r))
	for i, v := range r {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, " ")
}

// acpPaced sends 5,000 session/update lines a second for 2 s through the
// tee around cat and returns the messages sent and the lines the tee
// recorded as relayed but not observed (its error log's queue and drain
// failures; lines of both directions, up to twice the messages).
func acpPaced(bin, cat, home string) (sent, dropped int, err error) {
	const rate, total = 5000, 10000
	env := append(os.Environ(), "AEP_HOME="+home)
	p, err := startPipe([]string{bin, "acp", "--", cat}, env)
	if err != nil {
		return 0, 0, err
	}
	go io.Copy(io.Discard, p.out)
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_paced","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc1","status":"in_progress"}}}` + "\n")
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	for sent < total {
		<-tick.C
		due := min(total, int(time.Since(start)*rate/time.Second))
		for ; sent < due; sent++ {
			if _, err := p.in.Write(line); err != nil {
				tick.Stop()
				return sent, 0, err
			}
		}
	}
	tick.Stop()
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		return sent, 0, err
	}
	b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"stage":"queue"`) || strings.Contains(l, `"stage":"drain"`) {
			var n int
			if i := strings.Index(l, `"lost":`); i >= 0 {
				fmt.Sscanf(l[i+len(`"lost":`):], "%d", &n)
			}
			dropped += n
		}
	}
	return sent, dropped, nil
}
