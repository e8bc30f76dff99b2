package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Defaults for a Tee's zero fields.
const (
	DefaultMaxLine    = 8 << 20
	DefaultQueueLines = 4096
	DefaultQueueBytes = 64 << 20
	DefaultLinger     = 2 * time.Second
	DefaultDrain      = 2500 * time.Millisecond
	DefaultGrace      = 2 * time.Second
)

// Exit statuses of the tee itself, as a shell reports them.
const (
	ExitNotFound  = 127 // the agent command does not exist
	ExitCannotRun = 126 // it exists but could not be started
)

// Tee runs one agent behind the relay. Zero fields take the defaults.
type Tee struct {
	// Command is the agent program and its arguments.
	Command []string
	// Env and Dir are the agent's environment and working directory; nil
	// and "" inherit the tee's.
	Env []string
	Dir string
	// Stdin is the editor's side of the client→agent direction; Stdout
	// receives the agent→client direction; Stderr is the agent's stderr
	// (an *os.File is inherited by the agent directly). Between pipes
	// (*os.File) the relays wait on Stdin and Stdout by poll(2) on Linux:
	// closing either while Run runs waits for the relay's next wake-up.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Handle receives the observed messages as ACP moments, a batch at a
	// time (shim.Emitter.Handler); nil only frames and counts.
	Handle shim.Handler
	// Errors records internal failures; nil discards them.
	Errors shim.Recorder
	// Deltas keeps message and thought chunks (the --deltas opt-in).
	Deltas bool
	// MaxLine bounds an observed line; a longer one passes through
	// unobserved and is recorded as a failure.
	MaxLine int
	// QueueLines and QueueBytes bound the observer's backlog; a relayed
	// chunk (a read of up to 64 KiB: one line or many) that does not fit
	// is dropped from observation (never from the relay) and its lines
	// counted.
	QueueLines int
	QueueBytes int64
	// Linger bounds how long, after the agent exits, the tee goes on
	// relaying its stdout and stderr: a worker the agent left behind may
	// hold them open, and the tee then stops as the editor would.
	Linger time.Duration
	// Drain bounds how long after the agent exits the tee keeps observing
	// what is queued: transparency outranks delivery.
	Drain time.Duration
	// Grace bounds how long the agent has to exit on its own once the
	// editor is gone (the relay to it broke: nobody reads), before it is
	// asked to stop (SIGTERM) and, Grace later, killed: the tee never
	// leaves its agent running without an editor.
	Grace time.Duration
	// Signals are forwarded to the agent (main subscribes SIGINT/SIGTERM).
	Signals <-chan os.Signal
	// Token qualifies run ids across tee restarts; "" mints one.
	Token string
	// Nonce mints each moment's nonce; nil uses ULIDs.
	Nonce func() string
}

// Result is what a finished tee reports.
type Result struct {
	// ExitCode is the agent's exit status (128+N when signal N ended it).
	ExitCode int
	// Signal is the signal that ended the agent, nil when it exited; the
	// caller re-raises it (Reraise) so its own parent sees the same death.
	Signal os.Signal
	// Cut is true when the agent's stdout or stderr was still open Linger
	// after it exited (a worker it left behind) and the relay stopped.
	Cut bool
	// Drained is false when observation was cut short by the drain bound.
	Drained bool
	Stats   *Stats
}

// Run starts the agent, relays both directions until the agent exits and
// its stdout is drained (for at most Linger after the exit), and returns
// its exit status. When the agent exits, its stdin is closed, as an editor
// closes it, so that a worker sharing it stops too. Cancelling ctx kills
// the agent. An agent that cannot be started yields ExitNotFound or
// ExitCannotRun with the error.
func (t *Tee) Run(ctx context.Context) (Result, error) {
	st := &Stats{}
	res := Result{Stats: st, Drained: true}
	if len(t.Command) == 0 {
		return Result{ExitCode: ExitCannotRun, Stats: st}, errors.New("acp tee: no agent command given")
	}
	a, code, err := spawn(t)
	if err != nil {
		return Result{ExitCode: code, Stats: st}, err
	}
	defer a.release()

	q := newQueue(orInt(t.QueueLines, DefaultQueueLines), orInt64(t.QueueBytes, DefaultQueueBytes))
	maxLine := orInt(t.MaxLine, DefaultMaxLine)
	var stopped atomic.Bool // the tee forwarded a signal to the agent
	var gone atomic.Bool    // the agent has exited
	obs := &observer{q: q, join: newJoiner(), handle: t.Handle, errs: t.Errors, stats: st,
		tee: t.Token, deltas: t.Deltas, nonce: t.Nonce, maxLine: maxLine, stopped: &stopped, exited: &gone}
	if obs.tee == "" {
		obs.tee = shim.NewIDs().New(time.Now())
	}
	if obs.nonce == nil {
		obs.nonce = shim.NewIDs().Now
	}
	obs.conn.lane = mapping.UnknownSession + "-" + obs.tee
	stop := make(chan struct{})
	observed := make(chan struct{})
	var endReason string // set before stop is closed
	go func() {
		defer close(observed)
		obs.run(stop)
		obs.finish(endReason)
	}()

	stdin, stdout := t.Stdin, t.Stdout
	if stdin == nil {
		stdin = eof{}
	}
	if stdout == nil {
		stdout = io.Discard
	}
	in := &relay{dir: ClientToAgent, src: stdin, dst: a.stdin, q: q, max: maxLine, stats: st, halt: newHalt()}
	out := &relay{dir: AgentToClient, src: a.stdout, dst: stdout, q: q, max: maxLine, stats: st, halt: newHalt()}
	a.halts = [2]*halt{in.halt, out.halt}
	inEOF := make(chan struct{})
	go func() {
		// The editor's EOF is the agent's EOF; a failed write means the
		// agent is gone, which Wait reports.
		if in.run() == nil {
			close(inEOF)
		}
		a.closeStdin()
	}()
	outRes := make(chan error, 1)
	go func() { outRes <- out.run() }()
	errRes := make(chan struct{})
	go a.copyStderr(t.Stderr, errRes)
	var outDone, errDone = (<-chan error)(outRes), (<-chan struct{})(errRes) // nil once ended
	exited := make(chan error, 1)
	go func() { exited <- a.cmd.Wait() }()
	waited := make(chan struct{})
	go forward(ctx, a.cmd.Process, t.Signals, waited, &stopped)

	var werr error
	select {
	case outErr := <-outDone:
		outDone = nil
		if outErr != nil {
			// The editor stopped reading: it is gone. The agent sees its
			// stdout and stdin close, as it would without the tee, and has
			// Grace to exit before it is stopped.
			a.closeStdout()
			a.closeStdin()
			werr = stopWithin(exited, a.cmd.Process, orDur(t.Grace, DefaultGrace), &stopped)
		} else {
			werr = <-exited
		}
	case werr = <-exited:
	}
	close(waited)
	gone.Store(true)
	exitAt := time.Now()
	endReason = endExited
	select {
	case <-inEOF:
		endReason = endClosed
	default:
	}
	if stopped.Load() {
		endReason = endStopped
	}
	// The agent is gone. An editor closes its stdin now, which also tells
	// a worker it left behind to stop; what the pipes still hold is
	// relayed for at most Linger.
	a.closeStdin()
	outDone, errDone = lingerFor(orDur(t.Linger, DefaultLinger), outDone, errDone)
	res.Cut = outDone != nil || errDone != nil
	drainBy := exitAt.Add(orDur(t.Drain, DefaultDrain))
	if res.Cut {
		// Closing our ends stops the relays at their next read. The write
		// in flight, if any, is waited for (within the drain bound, which
		// only a Stdout or Stderr nobody reads outlasts), so that nothing
		// is written to the caller's writers once Run has returned.
		a.release()
		lingerFor(time.Until(drainBy), outDone, errDone)
	}
	res.ExitCode, res.Signal = exitCode(a.cmd.ProcessState), exitSignal(a.cmd.ProcessState)

	close(stop)
	timer := time.NewTimer(time.Until(drainBy))
	defer timer.Stop()
	select {
	case <-observed:
	case <-timer.C:
		res.Drained = false
		// What is still queued is given up: counted, as the queue's own
		// drops are (the observer may yet finish a line or two of it).
		if n := q.lines.Load(); n > 0 {
			st.Undrained.Store(n)
			t.record(shim.Failure{Stage: "drain", Lost: int(n),
				Error: fmt.Sprintf("agent exited with %d relayed lines not yet observed; the drain bound gave them up", n)})
		}
	}
	unread := st.Unread[ClientToAgent].Load() + st.Unread[AgentToClient].Load()
	if n := st.Dropped.Load(); n > 0 || unread > 0 {
		msg := fmt.Sprintf("observer queue full: %d lines relayed but not observed (%d editor->agent, %d agent->editor)",
			n, st.DroppedBy[ClientToAgent].Load(), st.DroppedBy[AgentToClient].Load())
		if unread > 0 {
			msg += fmt.Sprintf(", and %d bytes relayed unread, their lines uncounted (%d editor->agent, %d agent->editor)",
				unread, st.Unread[ClientToAgent].Load(), st.Unread[AgentToClient].Load())
		}
		t.record(shim.Failure{Stage: "queue", Lost: int(n), Bytes: int(unread), Error: msg})
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return res, fmt.Errorf("acp tee: wait for agent: %w", werr)
	}
	return res, nil
}

// record keeps a failure of the tee's own in its error log, if any.
func (t *Tee) record(f shim.Failure) {
	if t.Errors != nil {
		f.Adapter = "acp"
		t.Errors.Record(f)
	}
}

// lingerFor waits at most d for the relays of the agent's stdout and
// stderr to end (nil: already ended), returning those still running (nil
// when ended).
func lingerFor(d time.Duration, outDone <-chan error, errDone <-chan struct{}) (<-chan error, <-chan struct{}) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for outDone != nil || errDone != nil {
		select {
		case <-outDone:
			outDone = nil
		case <-errDone:
			errDone = nil
		case <-timer.C:
			return outDone, errDone
		}
	}
	return nil, nil
}

// stopWithin waits grace for the agent to exit, then asks it to stop
// (SIGTERM; a kill where there is no such signal), then kills it after
// grace more, and returns how Wait ended.
func stopWithin(exited <-chan error, p *os.Process, grace time.Duration, stopped *atomic.Bool) error {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-exited:
		return err
	case <-timer.C:
	}
	stopped.Store(true)
	if p.Signal(syscall.SIGTERM) != nil {
		p.Kill()
	}
	timer.Reset(grace)
	select {
	case err := <-exited:
		return err
	case <-timer.C:
	}
	p.Kill()
	return <-exited
}

// forward relays signals to the agent and kills it when ctx ends, until
// the agent has been waited for; stopped notes that it did either.
func forward(ctx context.Context, p *os.Process, sigs <-chan os.Signal, done <-chan struct{}, stopped *atomic.Bool) {
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			stopped.Store(true)
			p.Kill()
			return
		case s, ok := <-sigs:
			if !ok {
				sigs = nil
				continue
			}
			stopped.Store(true)
			if err := p.Signal(s); err != nil {
				// Platforms without the signal (os.Interrupt on Windows):
				// the agent ends as an interrupted process would.
				p.Kill()
			}
		}
	}
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orInt64(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

func orDur(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// eof is an empty stdin.
type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }
