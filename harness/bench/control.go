package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
)

// controlPerm is a Claude Code PermissionRequest: a moment the control
// loop holds when control is on.
func controlPerm(session string) []byte {
	return []byte(`{"session_id":"` + session + `","transcript_path":"/tmp/t.jsonl","cwd":"/srv/app","hook_event_name":"PermissionRequest",` +
		`"permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch x","description":"Make x"}}`)
}

// controlFigures prints the control loop's two figures beside their
// baselines from the same run: what control adds to a held hook when no
// relay listens (against the same hook observe-only), and the time from
// an answer sent over a real relay to the vendor's reply on the hook's
// stdout (beside the observe-only hook's whole run).
func controlFigures(bin, tmp string, n int) ([]goal, error) {
	fmt.Println()
	fmt.Println("== control loop (baseline: the same PermissionRequest hook observe-only)")
	fmt.Printf("%-22s %10s %10s %10s %10s %8s %8s\n", "hook", "p50", "p99", "base p50", "base p99", "p50 x", "p99 x")
	down, err := closedPort()
	if err != nil {
		return nil, err
	}
	ctl := []string{"AEP_CONTROL=1", "AEP_RELAY=ws://" + down + "/socket", "AEP_RELAY_TOKEN=bench-token-0123456789"}
	cmds := []command{
		{name: "observe", argv: []string{bin, "claude-code"}, in: controlPerm("bench-ctl")},
		{name: "control, no relay", argv: []string{bin, "claude-code"}, in: controlPerm("bench-ctl"), env: ctl},
	}
	res := interleave(cmds, n, filepath.Join(tmp, "home-ctl"))
	base := res["observe"]
	printRow("control, no relay", res["control, no relay"], base)
	added := float64(pct(res["control, no relay"], 0.5)-pct(base, 0.5)) / float64(time.Millisecond)
	// Whole processes, as an agent pays them; the in-process pair among the
	// goal benchmarks isolates the control path from process start.
	fmt.Printf("control on, no relay: the hook process's p50 %+.2f ms over observe-only\n", added)
	goals := []goal{{name: "control on, no relay: added to the hook process, p50 (whole process)", value: added, limit: 1, below: true, unit: "ms",
		base: fmt.Sprintf("control on %s, observe-only %s (p50 of %d interleaved runs each of one PermissionRequest; the relay address a closed loopback port)",
			round(pct(res["control, no relay"], 0.5)), round(pct(base, 0.5)), n)}}

	lat, err := answerLatency(bin, tmp, max(n/5, 20))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: answer latency:", err)
		return append(goals, goal{name: "answer to vendor reply over the relay, p50", missing: true}), nil
	}
	p50, p99 := pct(lat, 0.5), pct(lat, 0.99)
	fmt.Printf("%-22s %10s %10s %10s %10s %7.2fx %7.2fx\n", "answer to reply", round(p50), round(p99),
		round(pct(base, 0.5)), round(pct(base, 0.99)), float64(p50)/float64(pct(base, 0.5)), float64(p99)/float64(pct(base, 0.99)))
	goals = append(goals, goal{name: "answer to vendor reply over the relay (loopback), p50", value: float64(p50) / float64(time.Millisecond),
		limit: 20, below: true, unit: "ms"})
	return goals, nil
}

// closedPort is a loopback address nothing listens on.
func closedPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}

// answerLatency runs a relay, and runs times a held hook against it: a
// sender waits for its request, answers yes, and the time from the
// answer's sending to the reply's arrival on the hook's stdout is one
// sample.
func answerLatency(bin, tmp string, runs int) ([]time.Duration, error) {
	const emitTok, sendTok = "bench-emit-token-0123456789", "bench-send-token-0123456789"
	home := filepath.Join(tmp, "home-relay")
	tokens := filepath.Join(tmp, "relay-tokens")
	lines := `{"token":"` + emitTok + `","identity":"emitter:bench-host/*","scopes":["write:*"]}` + "\n" +
		`{"token":"` + sendTok + `","identity":"consumer:bench","scopes":["subscribe:*","read:*","control:control.*"]}` + "\n"
	if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
		return nil, err
	}
	relay, err := startRelay(bin, home, "--tokens", tokens)
	if err != nil {
		return nil, err
	}
	defer relay.stop()
	url := "ws://" + strings.TrimPrefix(relay.base, "http://") + "/socket"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cn, err := (&answer.Client{URL: url, Token: sendTok, Agent: "bench", Host: "bench-sender", Window: 5 * time.Second}).Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	var out []time.Duration
	for i := 0; i < runs; i++ {
		session := "bench-answer-" + strconv.Itoa(i)
		h := exec.Command(bin, "claude-code")
		h.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=bench-host", "AEP_CONTROL=1", "AEP_RELAY="+url,
			"AEP_RELAY_TOKEN="+emitTok, "AEP_CONTROL_BUDGET=20s")
		h.Stdin = bytes.NewReader(controlPerm(session))
		stdout, _ := h.StdoutPipe()
		if err := h.Start(); err != nil {
			return nil, err
		}
		replied := make(chan time.Time, 1)
		go func() {
			b := make([]byte, 1)
			if k, _ := stdout.Read(b); k > 0 {
				replied <- time.Now()
			}
			io.Copy(io.Discard, stdout)
			close(replied)
		}()
		req, err := waitRequest(ctx, cn, session)
		if err != nil {
			h.Process.Kill()
			h.Wait()
			return nil, err
		}
		a, _ := answer.Allow(req)
		start := time.Now()
		// The answer is sent beside the wait for the reply (the reply is
		// timed from the sending), and the round ends only once it has
		// settled: an answer must be known applied, and the next round's
		// calls should not overlap this one's.
		settled := make(chan respondResult, 1)
		go func() {
			o, err := cn.Respond(ctx, req, a)
			settled <- respondResult{o, err}
		}()
		at, ok := <-replied
		h.Wait()
		res := <-settled
		switch {
		case res.err != nil:
			return nil, fmt.Errorf("run %d: answering: %w", i, res.err)
		case res.out.Ack != answer.Accepted:
			return nil, fmt.Errorf("run %d: the answer was not acknowledged as applied: %s %s %s (sent %d times)", i, res.out.Ack, res.out.Reason, res.out.Detail, res.out.Sent)
		case !ok:
			return nil, fmt.Errorf("run %d: the answer was accepted but the hook replied nothing", i)
		}
		out = append(out, at.Sub(start))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// respondResult is how one answer settled.
type respondResult struct {
	out answer.Outcome
	err error
}

// waitRequest waits until session's request is pending and answerable.
func waitRequest(ctx context.Context, cn *answer.Conn, session string) (answer.Request, error) {
	for ctx.Err() == nil {
		rs, err := cn.Pending(ctx)
		if err != nil {
			return answer.Request{}, err
		}
		for _, r := range rs {
			if r.Session == session && r.Answerable {
				return r, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return answer.Request{}, fmt.Errorf("no answerable request of %s: %w", session, ctx.Err())
}
