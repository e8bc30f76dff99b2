package acp

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// maxPending bounds the unanswered requests remembered per direction; the
// oldest is forgotten first (its response then rides the fallback plane).
const maxPending = 4096

// pending is a request awaiting its response: its method, session and id
// (as text).
type pending struct {
	method, session, id string
}

// joiner remembers each direction's open requests by JSON-RPC id, so a
// response (which carries neither method nor session) gets the request's. It is used by the one observer goroutine only.
type joiner struct {
	open  [2]map[string]pending
	order [2][]string // insertion order, for bounding
	// The methods and hook names seen (up to maxInterned each) and the
	// last session named, each kept once: classify reads a line in
	// place, and what it returns must not be a piece of the line (whose
	// buffer is reused after its batch), but a busy connection repeats the
	// same few, and copying them for every line was most of what
	// classifying cost.
	methods map[string]string
	hooks   map[hookKey]string
	session string
}

// hookKey names a moment's hook: its kind and method.
type hookKey struct {
	kind   mapping.Kind
	method string
}

// maxInterned bounds the methods and hook names a joiner keeps: a peer
// sending ever new methods gets copies past it, never a growing table.
const maxInterned = 64

func newJoiner() *joiner {
	return &joiner{open: [2]map[string]pending{{}, {}}, methods: map[string]string{}, hooks: map[hookKey]string{}}
}

// method is s, a piece of the line being classified, as a string of its
// own.
func (j *joiner) method(s string) string {
	return interned(j.methods, s, func() (string, string) { m := strings.Clone(s); return m, m })
}

// sessionOf is s, a piece of the line being classified, as a string of
// its own: the last session's when it is that one.
func (j *joiner) sessionOf(s string) string {
	if s != j.session {
		j.session = strings.Clone(s)
	}
	return j.session
}

// hook is the ACP table's name for a moment with facts f, built once per
// kind and method.
func (j *joiner) hook(f mapping.Facts) string {
	return interned(j.hooks, hookKey{f.Kind, f.Method}, func() (hookKey, string) {
		return hookKey{f.Kind, f.Method}, mapping.ACPHook(f)
	})
}

// interned is m's string for k, or the one make builds (with the key to
// keep it under: a key of its own, not one pointing into the line), kept
// while m holds fewer than maxInterned.
func interned[K comparable](m map[K]string, k K, make func() (K, string)) string {
	if v, ok := m[k]; ok {
		return v
	}
	key, v := make()
	if len(m) < maxInterned {
		m[key] = v
	}
	return v
}

// inPlace is b's bytes as a string without copying them, for gjson to
// read b without the copy gjson.ParseBytes makes of every line. The
// string and every piece of it are valid only while b is unchanged:
// nothing cut from it may outlive the call that made it (classify copies
// or interns what it returns).
func inPlace(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (j *joiner) remember(d Direction, id string, p pending) {
	m := j.open[d]
	if _, dup := m[id]; !dup {
		j.order[d] = append(j.order[d], id)
	}
	m[id] = p
	for len(m) > maxPending && len(j.order[d]) > 0 {
		old := j.order[d][0]
		j.order[d] = j.order[d][1:]
		delete(m, old)
	}
	if len(j.order[d]) > 2*maxPending {
		// Compact the order list: answered ids linger in it until here.
		live := j.order[d][:0]
		for _, k := range j.order[d] {
			if _, ok := m[k]; ok {
				live = append(live, k)
			}
		}
		j.order[d] = live
	}
}

// unanswered returns the requests sent in d still awaiting a response,
// oldest first.
func (j *joiner) unanswered(d Direction) []pending {
	var out []pending
	for _, k := range j.order[d] {
		if p, ok := j.open[d][k]; ok {
			out = append(out, p)
			delete(j.open[d], k) // once: an id listed twice is returned once
		}
	}
	return out
}

// answer returns and forgets the request a response travelling in d
// answers: requests travel the other way.
func (j *joiner) answer(d Direction, id string) (pending, bool) {
	m := j.open[1-d]
	p, ok := m[id]
	if ok {
		delete(m, id)
	}
	return p, ok
}

// facts returns d as the moment fact.
func (d Direction) fact() mapping.Direction {
	if d == ClientToAgent {
		return mapping.ToAgent
	}
	return mapping.FromAgent
}

// classify reads the JSON-RPC shape of line into the moment's facts and
// joins a response to its request (its method and session). line must be
// valid JSON. What it returns is its own: line may change after.
func (j *joiner) classify(d Direction, line []byte) (mapping.Facts, error) {
	msg := gjson.Parse(inPlace(line))
	if !msg.IsObject() {
		return mapping.Facts{}, fmt.Errorf("JSON-RPC message is not an object")
	}
	// One pass over the members; of a duplicated key the first counts,
	// as with a gjson path.
	var method, id, params, session gjson.Result
	var answer bool
	msg.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "method":
			if !method.Exists() {
				method = v
			}
		case "id":
			if !id.Exists() {
				id = v
			}
		case "params":
			if !params.Exists() {
				params = v
				session = v.Get("sessionId")
			}
		case "result", "error":
			answer = true
		}
		return true
	})
	// Every string leaving here is copied (or interned) out of line.
	f := mapping.Facts{Direction: d.fact()}
	if s := method.String(); s != "" {
		f.Method = j.method(s)
	}
	if s := session.String(); s != "" {
		f.Session = j.sessionOf(s)
	}
	hasID := id.Exists() && id.Type != gjson.Null
	if hasID {
		f.ID = strings.Clone(id.String())
	}
	switch {
	case method.Exists() && hasID:
		f.Kind = mapping.KindRequest
		j.remember(d, strings.Clone(id.Raw), pending{method: f.Method, session: f.Session, id: f.ID})
	case method.Exists():
		f.Kind = mapping.KindNotification
	case hasID && answer:
		f.Kind = mapping.KindResponse
		if p, ok := j.answer(d, id.Raw); ok {
			f.Method, f.Session = p.method, p.session
		}
	default:
		return mapping.Facts{}, fmt.Errorf("not a JSON-RPC request, response or notification")
	}
	return f, nil
}

// Decode turns one JSON line of `aep-hook map` input for the ACP table into
// its moment, as the tee would hand it over. The line is either the moment
// form the pins use,
//
//	{"kind": "request"|"response"|"notification"|"end", "method": M,
//	 "id": ID, "sessionId": S, "tee": T, "reason": R,
//	 "params": ... | "result": ... | "error": ...}
//
// whose members are the facts (a response's method and session are those of
// the request it answers, which the tee joins; tee is Facts.Instance; an
// end names the unanswered request and the Reason), or a
// bare JSON-RPC message, classified as the tee classifies it (a response
// then matches no request). Raw is the line itself: the table reads params,
// result and error from it.
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) {
		return nil, fmt.Errorf("acp: line is not JSON")
	}
	r := gjson.GetManyBytes(line, "kind", "method", "id", "params.sessionId", "sessionId", "tee", "reason")
	if r[0].Exists() {
		k, ok := mapping.ParseKind(r[0].String())
		switch k {
		case mapping.KindRequest, mapping.KindResponse, mapping.KindNotification, mapping.KindEnd:
		default:
			ok = false
		}
		if !ok {
			return nil, fmt.Errorf("acp: kind %q: want request, response, notification or end", r[0].String())
		}
		f := mapping.Facts{Kind: k, Method: mapping.StrOf(r[1]), Session: mapping.StrOf(r[3]), Instance: mapping.StrOf(r[5]), Reason: mapping.StrOf(r[6])}
		if f.Session == "" {
			f.Session = mapping.StrOf(r[4])
		}
		if r[2].Exists() && r[2].Type != gjson.Null {
			f.ID = r[2].String()
		}
		return []mapping.Moment{{Raw: line, Facts: f}}, nil
	}
	f, err := newJoiner().classify(ClientToAgent, line)
	if err != nil {
		return nil, fmt.Errorf("acp: %w", err)
	}
	f.Direction = mapping.DirectionNone
	return []mapping.Moment{{Raw: line, Facts: f}}, nil
}

// observer consumes the queue: it frames each direction's chunks into
// lines, validates, classifies and joins each line and hands the moments to
// the handler a batch at a time, recording failures without content. It
// lingers between batches (see minLinger).
type observer struct {
	q       *queue
	join    *joiner
	handle  shim.Handler
	errs    shim.Recorder
	stats   *Stats
	tee     string
	deltas  bool
	nonce   func() string
	maxLine int
	// stopped is set once the tee has forwarded the editor's signal to
	// the agent, exited once the agent has exited (a worker it left may
	// still answer); closed once the editor's stdin ended, in wire order.
	// A prompt the agent answers after one of them ended because of it
	// (the moment's Reason says which).
	stopped, exited *atomic.Bool
	closed          bool

	conn    connection           // what the connection stated so far
	frames  [2]framer            // per direction
	linger  *time.Timer          // the wait between batches
	clock   func() time.Duration // the observer's cost so far (observerClock)
	wait    time.Duration        // its length after the last batch
	dropped int64                // Stats.lost when the last batch ended
	batch   []item               // the chunks being observed
	lines   []line               // their lines
	ms      []mapping.Moment     // the lines' moments
}

// framer holds one direction's line in progress across chunks.
type framer struct {
	partial []byte // the current line's bytes so far
	over    int    // > 0: the current line passed the bound; its size so far
	skip    bool   // discard through the next newline: dropped bytes cut it
}

// line is one framed line, or (b nil) a line over the bound; closed
// says the editor's stdin had ended before it (in wire order).
type line struct {
	dir     Direction
	b       []byte
	tooLong int
	closed  bool
}

// maxBatch bounds the chunks taken at once, and maxBatchLines the lines:
// past the first chunk, a batch takes no more once it holds that many.
// The linger after a batch is a multiple of what the batch cost, so what
// bounds the batch bounds how long the observer holds a processor in one
// go: unbounded, its first batch of a burst was the whole queue (4,096
// lines, tens of milliseconds) taken from the relays it shares two
// processors with, and the burst ran at a fifth of a plain pipe's speed.
const (
	maxBatch      = 256
	maxBatchLines = 64
)

// The observer never competes with the relay for the processor: after a
// batch that took d of processor time, it lets chunks gather for at least
// minLinger and at least lingerFactor·d before the next, so it uses at
// most 1/(1+lingerFactor) of a processor however fast lines arrive, and is
// woken at most once per minLinger at a steady rate, not once per line.
// Once observation has lost something since the last batch (a burst: the
// queue overflowed, or the relay passed a stretch on unread), or the queue
// was nearly full when the batch began, it backs off to burstFactor, a
// sixteenth of a processor, so what is beyond it is dropped and counted,
// never slowed: in a 16 MiB burst on two processors shared with the
// editor, the agent and both relays, the observer's batches were a tenth
// and more of the burst's processor time.
const (
	minLinger    = time.Millisecond
	lingerFactor = 3
	burstFactor  = 15
)

func (o *observer) record(f shim.Failure) {
	f.Adapter = "acp"
	if o.errs != nil {
		o.errs.Record(f)
	}
}

// run observes queued chunks until stop, then what is still queued.
func (o *observer) run(stop <-chan struct{}) {
	if o.clock == nil {
		o.clock = observerClock()
	}
	for {
		select {
		case it := <-o.q.ch:
			o.take(it, stop)
		case <-stop:
			for {
				select {
				case it := <-o.q.ch:
					o.take(it, stop)
				default:
					return
				}
			}
		}
	}
}

// take observes first and whatever else is queued once the linger is over
// (up to maxBatch chunks, maxBatchLines lines) as one batch; stop ends the linger at once. The
// chunks' bytes stay counted against the queue's bound until the batch is
// done.
func (o *observer) take(first item, stop <-chan struct{}) {
	if o.linger == nil {
		o.linger = time.NewTimer(o.wait)
	} else {
		o.linger.Reset(o.wait)
	}
	select {
	case <-o.linger.C:
	case <-stop:
		o.linger.Stop()
	}
	// The clock may be the thread's (observerClock): the batch keeps to one
	// thread. Only the batch: a goroutine locked to its thread while it
	// sleeps is woken by a hand-off between threads, and in a burst that
	// was a third of the tee's context switches.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := o.clock()
	// A queue this full is a burst whose loss has begun (the relays pass
	// what comes next on unread) or is about to: the next linger is a
	// burst's, as after a loss, a batch sooner.
	burst := o.q.nearlyFull()
	o.batch = append(o.batch[:0], first)
	lines := first.lines
gather:
	for len(o.batch) < maxBatch && lines < maxBatchLines {
		select {
		case it := <-o.q.ch:
			o.batch = append(o.batch, it)
			lines += it.lines
		default:
			break gather
		}
	}
	o.lines = o.lines[:0]
	for _, it := range o.batch {
		o.frame(it)
	}
	o.observe()
	for i := range o.batch {
		o.q.taken(o.batch[i])
		o.batch[i] = item{}
	}
	factor := time.Duration(lingerFactor)
	if lost := o.stats.lost(); lost != o.dropped || burst {
		o.dropped, factor = lost, burstFactor
	}
	o.wait = max(minLinger, factor*(o.clock()-start))
}

// frame cuts a chunk into the lines it completes (at the direction's end,
// the last line too).
func (o *observer) frame(it item) {
	f := &o.frames[it.dir]
	if it.gap {
		// The line in progress lost bytes: forget it (its newline, if
		// dropped, was counted then; if not, it is the one skipped below).
		f.partial, f.over, f.skip = release(f.partial), 0, it.cut
	}
	b := it.chunk
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.accumulate(b, o.maxLine)
			break
		}
		if f.skip {
			f.skip = false
			o.stats.drop(it.dir, 1)
		} else {
			o.end(it.dir, f, b[:i])
		}
		b = b[i+1:]
	}
	if it.eof {
		if it.dir == ClientToAgent {
			defer func() { o.closed = true }() // after the direction's last line
		}
		switch {
		case f.skip:
			f.skip = false
			o.stats.drop(it.dir, 1)
		case len(f.partial) > 0 || f.over > 0:
			o.end(it.dir, f, nil)
		}
	}
}

// accumulate keeps part of a line that continues in a later chunk.
func (f *framer) accumulate(p []byte, max int) {
	switch {
	case f.skip:
	case f.over > 0:
		f.over += len(p)
	case len(f.partial)+len(p) > max:
		f.over = len(f.partial) + len(p)
		f.partial = release(f.partial)
	default:
		f.partial = append(f.partial, p...)
	}
}

// end completes the line in progress with its last piece.
func (o *observer) end(d Direction, f *framer, last []byte) {
	if f.over > 0 || len(f.partial)+len(last) > o.maxLine {
		size := f.over + len(f.partial) + len(last)
		f.over, f.partial = 0, release(f.partial)
		o.stats.TooLong.Add(1)
		o.lines = append(o.lines, line{dir: d, tooLong: size, closed: o.closed})
		return
	}
	l := last
	if len(f.partial) > 0 {
		// The line is handed over: the next one starts a new buffer.
		l, f.partial = append(f.partial, last...), nil
	}
	l = bytes.TrimSuffix(l, []byte{'\r'})
	if len(bytes.TrimSpace(l)) == 0 {
		return
	}
	o.stats.Lines.Add(1)
	o.lines = append(o.lines, line{dir: d, b: l, closed: o.closed})
}

// release empties a line buffer, dropping a large one so one huge line
// does not pin its memory for the connection's life.
func release(b []byte) []byte {
	if cap(b) > 1<<20 {
		return nil
	}
	return b[:0]
}

// observe turns the batch's lines into moments and hands them over.
func (o *observer) observe() {
	o.ms = o.ms[:0]
	for _, l := range o.lines {
		if f, ok := o.facts(l); ok {
			// Named here as the table names it, so the emitter need not
			// copy the batch to fill the names in.
			o.ms = append(o.ms, mapping.Moment{Hook: o.join.hook(f), Raw: l.b, Facts: f, Deltas: o.deltas})
		}
	}
	ms := o.conn.admit(o.ms)
	o.hand(ms)
	clear(ms) // the lines belong to the batch's chunks
	clear(o.ms)
	clear(o.lines)
}

// hand gives moments to the handler, recording its failures.
func (o *observer) hand(ms []mapping.Moment) {
	if o.handle == nil || len(ms) == 0 {
		return
	}
	for i := range ms {
		ms[i].Nonce = o.nonce()
	}
	o.stats.Observed.Add(int64(len(ms)))
	o.handle.Deliver(ms, func(m mapping.Moment, err error) {
		o.stats.Failed.Add(1)
		o.record(shim.Failure{Hook: m.Facts.Kind.String() + ":" + m.Facts.Method, Stage: "emit",
			Bytes: len(m.Raw), Error: err.Error()})
	})
}

// facts validates and classifies one framed line.
func (o *observer) facts(l line) (mapping.Facts, bool) {
	if l.b == nil {
		o.record(shim.Failure{Hook: l.dir.String(), Stage: "parse", Bytes: l.tooLong,
			Error: fmt.Sprintf("line over %d bytes passed through unobserved", o.maxLine)})
		return mapping.Facts{}, false
	}
	if !gjson.ValidBytes(l.b) {
		o.stats.Invalid.Add(1)
		o.record(shim.Failure{Hook: l.dir.String(), Stage: "parse", Bytes: len(l.b),
			Error: "line is not JSON; passed through unobserved"})
		return mapping.Facts{}, false
	}
	f, err := o.join.classify(l.dir, l.b)
	if err != nil {
		o.stats.Invalid.Add(1)
		o.record(shim.Failure{Hook: l.dir.String(), Stage: "parse", Bytes: len(l.b), Error: err.Error()})
		return mapping.Facts{}, false
	}
	f.Instance = o.tee
	if f.Kind == mapping.KindResponse && f.Method == "session/prompt" {
		f.Reason = o.ending(l.closed)
	}
	return f, true
}

// ending is why the tee is ending the connection so far, "" while it is
// not: the editor's signal forwarded, the editor's stdin closed (before
// the line: closed), the agent exited (the precedence of the tee's own end
// reason).
func (o *observer) ending(closed bool) string {
	switch {
	case o.stopped != nil && o.stopped.Load():
		return endStopped
	case closed:
		return endClosed
	case o.exited != nil && o.exited.Load():
		return endExited
	}
	return ""
}

// wallClock is observerClock's fallback: time since the first call.
func wallClock() func() time.Duration {
	t0 := time.Now()
	return func() time.Duration { return time.Since(t0) }
}
