// Package hook is the fail-open hook transport: one vendor payload on stdin
// (the moment's name in the payload or on the command line), the vendor's
// neutral reply on stdout, exit status 0, within a hard deadline whatever
// happens to the input, the disk or the mapping. Every internal failure goes
// to the shim's error log, without payload content.
package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aep-hook/aep-hook/internal/jsonbound"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control"
)

// Defaults for a Runner's zero fields.
const (
	DefaultMaxInput = 32 << 20
	DefaultDeadline = 750 * time.Millisecond
)

// The shares of the deadline: the digests of values left out of a bounded
// payload are given up at digestShare of it (the moment is then recorded
// without them, saying so), leaving the rest for mapping and writing under
// load; past the deadline a moment still not written is marked lost in its
// session's log, which may take markGrace more.
const (
	digestShare = 0.5
	markGrace   = 150 * time.Millisecond
)

// Commit states of a run's moment, between the work and the watchdog.
const (
	working   int32 = iota // not yet writing
	writing                // the emitter is writing its events: let it finish
	written                // done (written or failed on its own)
	abandoned              // the watchdog gave up on it and marks it lost
)

// Runner runs one hook invocation.
type Runner struct {
	Vendor   mapping.Vendor
	Emitter  *shim.Emitter // nil when setup failed; the reply stays neutral
	Errors   *shim.ErrorLog
	MaxInput int64         // stdin kept in memory; 0 means DefaultMaxInput
	Deadline time.Duration // hard bound on the whole run; 0 means DefaultDeadline
	// Limits bound what of the payload the table reads verbatim (the rest
	// is replaced by placeholders carrying its digests); zero means
	// jsonbound.DefaultLimits.
	Limits jsonbound.Limits
	// Setup, when non-nil, is a configuration failure main already fell
	// back from (e.g. an invalid capture level → metadata); it is recorded.
	Setup error
	// Exit ends the process when the deadline passes first, after the
	// neutral reply is written; nil means os.Exit.
	Exit func(code int)
	// Control, when set, is the hook's control posture: a moment the
	// vendor's table holds (Vendor.Hold) waits, within its budget, for an
	// answer over the relay, and the answer becomes the reply. Nil (the
	// default) is observe-only.
	Control *control.Config
	// IgnoreSignals holds the termination signals during Run by ignoring
	// them instead of catching them: nothing is started to watch for them
	// (a goroutine, and on a hook's short life often a thread of its own),
	// and Interrupted always reports false. For callers that do nothing
	// after Run that a signal should cancel. With Control they are caught
	// from the moment a relay takes a held moment's connection: its wait
	// must end when the agent gives up on its hook, but a control-enabled
	// hook that finds no relay (the posture of a user who runs one only
	// sometimes) starts nothing to watch for them. A signal that comes
	// while the relay is being dialled is ignored like any other.
	IgnoreSignals bool

	interrupted bool
	// signalled says a held moment took a termination signal from the
	// hold's channel (Interrupted reports it too).
	signalled atomic.Bool
}

// Run handles one invocation and returns the exit status, which is always 0:
// the agent must never notice the hook. argvHook is the moment name given
// on the command line ("" when the payload names it).
//
// The work runs on the calling goroutine (a hand-off to another would cost
// the hook thread wake-ups on every run); the deadline is a watchdog that
// fires only when the work overruns: it records the overrun, writes the
// neutral reply and exits 0, whatever the work is stuck on (a hung disk, a
// stdin that never closes).
//
// Termination signals (SIGTERM, SIGINT, SIGHUP) are deferred while Run
// works: an agent that gives up on its hook still gets the moment recorded,
// within the same deadline. Interrupted reports afterwards whether one came.
func (r *Runner) Run(argvHook string, in io.Reader, out io.Writer) int {
	release, arrived := holdSignals(r.IgnoreSignals)
	var watched func() bool // the catching hold a connected relay starts
	defer func() {
		caught := false
		if watched != nil {
			caught = watched()
		}
		r.interrupted = release() || caught || r.signalled.Load()
	}()
	watch := func() <-chan os.Signal {
		if arrived == nil && watched == nil {
			watched, arrived = holdSignals(false)
		}
		return arrived
	}
	deadline := r.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	exit := r.Exit
	if exit == nil {
		exit = os.Exit
	}
	if r.Setup != nil {
		r.record(shim.Failure{Hook: argvHook, Stage: "config", Error: r.Setup.Error()})
	}
	var hookName atomic.Value // the moment's name, once known, for the reply
	hookName.Store(argvHook)
	var session atomic.Value // its session, once known, for a lost mark
	session.Store("")
	var state atomic.Int32 // working, writing, written, abandoned
	finished := make(chan struct{})
	gaveUp := make(chan struct{}) // the watchdog is done (where exit returns)
	var replied sync.Once
	var answer atomic.Pointer[[]byte] // a held moment's answer, replacing the neutral reply
	reply := func() {
		replied.Do(func() {
			if a := answer.Load(); a != nil {
				out.Write(*a)
				return
			}
			if r.Vendor.Reply != nil {
				if b := r.Vendor.Reply(hookName.Load().(string)); len(b) > 0 {
					out.Write(b)
				}
			}
		})
	}
	start := time.Now()
	em := r.Emitter
	if em != nil {
		// The work writes only if the watchdog has not given up on it.
		c := *em
		c.Commit = func() bool { return state.CompareAndSwap(working, writing) }
		em = &c
	}
	watchdog := time.AfterFunc(deadline, func() {
		hook, sid := hookName.Load().(string), session.Load().(string)
		if state.CompareAndSwap(working, abandoned) {
			r.markLost(em, hook, sid, start, deadline)
		} else {
			// Its events are being written: they are not lost.
			t := time.NewTimer(markGrace)
			select {
			case <-finished:
			case <-t.C:
			}
			t.Stop()
		}
		reply()
		exit(0)
		close(gaveUp)
	})
	var drained <-chan struct{}
	func() {
		defer func() {
			if p := recover(); p != nil {
				// The panic value may quote content: record its type only.
				r.record(shim.Failure{Hook: hookName.Load().(string), Stage: "panic", Error: fmt.Sprintf("internal panic (%T)", p)})
			}
		}()
		h := held{arrived: arrived, watch: watch, answer: &answer, signalled: &r.signalled,
			extend: func(d time.Duration) { watchdog.Reset(max(deadline-time.Since(start), 0) + d) }}
		drained = r.handle(em, argvHook, in, start.Add(time.Duration(float64(deadline)*digestShare)), func(h, sid string) {
			if h != "" {
				hookName.Store(h)
			}
			if sid != "" {
				session.Store(sid)
			}
		}, h)
	}()
	if state.CompareAndSwap(writing, written) || state.CompareAndSwap(working, written) {
		close(finished)
	}
	watchdog.Stop()
	if state.Load() == abandoned {
		// The watchdog gave up on the moment: it marks it lost, replies
		// and exits.
		<-gaveUp
		return 0
	}
	reply()
	if drained != nil {
		// The writer of a payload past MaxInput gets to finish writing it,
		// within what is left of the deadline, rather than meet a closed pipe.
		t := time.NewTimer(max(deadline-time.Since(start), 0))
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
		}
	}
	return 0
}

// Interrupted reports whether a termination signal arrived during Run: the
// caller should then skip any further work (delivery) and exit.
func (r *Runner) Interrupted() bool { return r.interrupted }

// held is what a held moment needs from Run: the signals that end the
// wait, where its answer goes, and the watchdog to extend by the wait.
type held struct {
	arrived <-chan os.Signal
	// watch catches the signals from now on, where they were ignored,
	// and returns arrived.
	watch     func() <-chan os.Signal
	answer    *atomic.Pointer[[]byte]
	signalled *atomic.Bool
	extend    func(time.Duration)
}

// markLost records a moment the deadline caught: in the error log, with
// its hook and session, and, when its session is known, as a mark in that
// session's own log (Emitter.MarkLost), within markGrace.
func (r *Runner) markLost(em *shim.Emitter, hook, session string, start time.Time, deadline time.Duration) {
	where := "its session not yet known, so no mark in any session's log"
	if em != nil && session != "" {
		done := make(chan error, 1)
		go func() { done <- em.MarkLost(r.Vendor, session, hook, start, "deadline") }()
		t := time.NewTimer(markGrace)
		defer t.Stop()
		select {
		case err := <-done:
			if err == nil {
				where = fmt.Sprintf("marked lost in the log of session %s", printable.Clip(session, 128))
			} else {
				where = fmt.Sprintf("session %s; its mark could not be written: %s", printable.Clip(session, 128), errText(err))
			}
		case <-t.C:
			where = fmt.Sprintf("session %s; its mark was not written in time", printable.Clip(session, 128))
		}
	}
	r.record(shim.Failure{Hook: hook, Stage: "deadline", Lost: 1,
		Error: fmt.Sprintf("hook not finished after %s; replied neutrally, the moment not recorded (%s)", deadline, where)})
}

// handle reads, bounds, maps and emits through em. Digests of values left
// out of a big payload are given up at digestBy. When the payload is
// longer than MaxInput it returns a channel closed once the rest has been
// read.
func (r *Runner) handle(em *shim.Emitter, argvHook string, in io.Reader, digestBy time.Time, seen func(hook, session string), hd held) (drained <-chan struct{}) {
	limit := r.MaxInput
	if limit <= 0 {
		limit = DefaultMaxInput
	}
	raw, cut, drained, err := readPayload(in, limit)
	if err != nil {
		r.record(shim.Failure{Hook: argvHook, Stage: "read", Error: "read stdin: " + errText(err), Bytes: len(raw)})
		return drained
	}
	if r.Vendor.Identify != nil {
		// Who the moment is, from the payload as read (a few top-level
		// members, linear), before the bounding that may outlast the
		// deadline: a moment lost then is still marked in its session.
		h, sid := r.Vendor.Identify(mapping.Moment{Hook: argvHook, Raw: raw})
		seen(h, sid)
	}
	lim := r.Limits
	if lim == (jsonbound.Limits{}) {
		lim = jsonbound.DefaultLimits
	}
	lim.Deadline = digestBy
	// Linear in the payload at any depth, and outside the session lock:
	// what the table reads afterwards is bounded.
	bounded, rep, err := jsonbound.Bound(raw, cut, lim)
	if err != nil {
		r.record(shim.Failure{Hook: argvHook, Stage: "parse", Error: "payload is not valid JSON; not mapped", Bytes: len(raw)})
		return drained
	}
	hook := argvHook
	if r.Vendor.Identify != nil {
		if h, sid := r.Vendor.Identify(mapping.Moment{Hook: argvHook, Raw: bounded}); h != "" {
			hook = h
			seen(h, sid) // the reply may depend on it, even if the rest overruns
		}
	}
	if cut {
		if hook == "" {
			r.record(shim.Failure{Stage: "read", Bytes: len(raw),
				Error: fmt.Sprintf("payload larger than %d bytes, cut before its moment's name; not mapped", limit)})
			return drained
		}
		r.record(shim.Failure{Hook: hook, Stage: "read", Bytes: len(raw),
			Error: fmt.Sprintf("payload larger than %d bytes: its first %d bytes mapped, the rest read and dropped", limit, limit)})
	}
	if rep.Omitted > 0 {
		kept := "their digests are kept"
		if rep.Late > 0 {
			kept = fmt.Sprintf("%d digests given up at %s of the deadline, so the event is recorded with its structural facts and names them in digests_missing", rep.Late, pct(digestShare))
		}
		r.record(shim.Failure{Hook: hook, Stage: "bound", Bytes: rep.OmittedBytes,
			Error: fmt.Sprintf("%d values left out of the event (%d too deep, %d too big, %d cut short, %d still being measured at %s of the deadline, so only checked as JSON from there); %s",
				rep.Omitted, rep.Deep, rep.Big, rep.Cut, rep.Skimmed, pct(digestShare), kept)})
	}
	if em == nil {
		r.record(shim.Failure{Hook: hook, Stage: "config", Error: "no emitter; payload not recorded", Bytes: len(raw)})
		return drained
	}
	m := mapping.Moment{Hook: argvHook, Raw: bounded, Nonce: shim.NewIDs().New(time.Now())}
	hold, link := r.connect(m, hook, hd)
	if link != nil {
		defer link.Close("answered or gave up")
		m.Control = true
		hd.arrived = hd.watch()
	}
	res, err := em.Handle(r.Vendor, m)
	if link != nil && err == nil {
		r.wait(hook, hold, link, res, hd)
	}
	if res.Unlocked != nil {
		r.record(shim.Failure{Hook: hook, Stage: "lock", Error: "written without the session lock, in a fresh epoch: " + errText(res.Unlocked)})
	}
	if errors.Is(err, shim.ErrGivenUp) {
		return drained // the watchdog recorded it, and marked it lost
	}
	if err != nil {
		// Every lost event is counted: what the log refused, else all the
		// moment made, and at least the moment itself.
		lost := max(len(res.Events), 1)
		var le *shim.LostError
		if errors.As(err, &le) {
			lost = le.Lost
		}
		r.record(shim.Failure{Hook: hook, Stage: "emit", Error: errText(err), Bytes: len(raw), Lost: lost})
	}
	return drained
}

// connect dials the relay for a moment the table holds, when control is
// on: the link is nil when the moment is not held or no relay takes the
// connection, and the moment is then only observed. A relay that is not
// listening is the posture of a user who runs it only sometimes and is not
// recorded; any other failure is.
func (r *Runner) connect(m mapping.Moment, hook string, hd held) (*mapping.Hold, *control.Link) {
	if r.Control == nil || r.Vendor.Hold == nil {
		return nil, nil
	}
	hold := r.Vendor.Hold(m, r.Control.Gate)
	if hold == nil {
		return nil, nil
	}
	// The wait runs past the hook's own deadline, by its budget.
	hd.extend(r.Control.ConnectWait() + r.Control.BudgetFor(hold))
	ctx, cancel := r.untilSignalled(hd)
	defer cancel()
	h := control.Hook{Config: r.Control, Vendor: r.Vendor, Emitter: r.Emitter}
	link, err := h.Dial(ctx)
	if err != nil {
		if !control.Absent(err) && ctx.Err() == nil {
			r.record(shim.Failure{Hook: hook, Stage: "control", Error: "control: " + errText(err) + "; the moment is only observed"})
		}
		return nil, nil
	}
	return hold, link
}

// wait holds the moment the table raised a request for until an answer
// arrives, the budget passes or the agent signals: an applied answer
// becomes the reply.
func (r *Runner) wait(hook string, hold *mapping.Hold, link *control.Link, res shim.Result, hd held) {
	var req *shim.Event
	for i := range res.Events {
		if res.Events[i].Type == "attention.requested" {
			req = &res.Events[i]
		}
	}
	if req == nil {
		return // the table raised no request for this moment
	}
	ctx, cancel := r.untilSignalled(hd)
	defer cancel()
	h := control.Hook{Config: r.Control, Vendor: r.Vendor, Emitter: r.Emitter,
		Failed: func(stage string, err error) {
			r.record(shim.Failure{Hook: hook, Stage: "control", Error: "control " + stage + ": " + errText(err)})
		}}
	if b := h.Wait(ctx, link, hold, res.Session, req); b != nil {
		hd.answer.Store(&b)
	}
}

// untilSignalled is a context the agent's termination signal ends.
func (r *Runner) untilSignalled(hd held) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if hd.signalled.Load() {
		cancel()
	}
	if hd.arrived == nil {
		return ctx, cancel
	}
	go func() {
		select {
		case <-hd.arrived:
			hd.signalled.Store(true)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// readPayload reads the payload, keeping at most limit bytes. When there is
// more, the rest is read into nothing on another goroutine, so the writer
// never meets a closed pipe (a Node parent without an EPIPE handler
// crashes), and the payload is reported cut.
func readPayload(in io.Reader, limit int64) (raw []byte, cut bool, drained <-chan struct{}, err error) {
	raw, err = readAtMost(in, limit+1)
	if err != nil || int64(len(raw)) <= limit {
		return raw, false, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(io.Discard, in)
	}()
	return raw[:limit], true, done, nil
}

// firstRead is the buffer a payload is read into first; nearly every
// payload fits it.
const firstRead = 8 << 10

// secondRead is the buffer a payload that outgrows the first moves to
// before a mapped one: heap memory, like the first.
const secondRead = 64 << 10

// readAtMost reads up to n bytes. A payload that outgrows its first buffer
// moves to the second, and one that outgrows that into one of n bytes
// mapped for it (bigBuffer), or, where there is none, into one eight times
// larger (up to n); either is backed only as it fills: a big payload costs
// about its own size in memory.
func readAtMost(in io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, firstRead))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= n {
				return buf, nil
			}
			var next []byte
			switch cap(buf) {
			case firstRead:
				next = make([]byte, 0, min(n, secondRead))
			case secondRead:
				next = bigBuffer(int(n))
			}
			if next == nil {
				next = make([]byte, 0, min(n, int64(cap(buf))*8))
			}
			buf = append(next, buf...)
		}
		m, err := in.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// pct is a share as a percentage.
func pct(share float64) string { return fmt.Sprintf("%d%%", int(share*100)) }

func (r *Runner) record(f shim.Failure) {
	if r.Errors == nil {
		return
	}
	f.Adapter = r.Vendor.Name
	r.Errors.Record(f)
}

// errText is an error's message; the shim's, the mappings' and the OS's
// errors name paths and operations, never payload content.
func errText(err error) string { return err.Error() }
