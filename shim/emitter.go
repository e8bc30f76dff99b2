package shim

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
	"unsafe"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// Emitter turns a vendor's drafts into AEP events: it is the only code that
// builds envelopes and the only path to a sink, and every payload passes the
// capture gate here.
type Emitter struct {
	Host     string           // the {host} of source URIs
	Policy   redact.Policy    // capture ceilings
	Pipeline *redact.Pipeline // the §9.4 pipeline for redacted fields
	Store    Store
	Sink     Sink
	Now      func() time.Time // nil means time.Now
	IDs      *IDs             // nil means a fresh NewIDs per call
	// Tenant, when set, is stamped on every event as the extension
	// attribute tenant (the namespace a relay isolates); it must be a
	// ValidTenant value.
	Tenant string
	// Commit, when set, is asked under the session's lock just before a
	// moment's events are saved and written: false means the process gave
	// up on the moment meanwhile (its deadline passed and it marked the
	// moment lost in the session's log instead, see MarkLost), so they are
	// not written and count as lost.
	Commit func() bool
	// StableIDs derives each event's id from its moment's Nonce (and the
	// event's type and rank among the moment's events of that type) instead
	// of fresh randomness, for adapters whose nonce is derived from the
	// input itself (the OTLP receiver's record digest): a record delivered
	// again, even to a restarted process, gets the same ids, so consumers
	// deduplicating on (source, id) drop the copy.
	StableIDs bool
}

// Result says what one moment produced.
type Result struct {
	Hook       string
	Session    string
	Events     []Event
	Suppressed int // starts and terminals dropped: the run already started, or its unit already closed
	// Err is the moment's own mapping failure in a batch (HandleBatch); the
	// other moments of the batch are still emitted.
	Err error
	// Unlocked, when set, says why the session's lock could not be used
	// (a stuck holder, an unusable state file): the events were written
	// without it, in a fresh epoch.
	Unlocked error
}

// ErrGivenUp says a moment's events were not written because its process
// gave up on it (Emitter.Commit).
var ErrGivenUp = errors.New("the moment was given up at its deadline and marked lost")

// LostCode is the code of the error.raised that marks a moment lost.
const LostCode = "moment_lost"

// MarkLost writes into session's log the mark of a moment its adapter
// could not record in time: an error.raised, at the moment's time, whose
// subject and data name the hook (code moment_lost, error.type the
// reason), so the session's own record shows the gap. It never waits for
// the session's lock, whose holder may be this very process: it takes the
// store's unlocked lane (a fresh epoch, above the log's last).
func (e *Emitter) MarkLost(v mapping.Vendor, session, hook string, at time.Time, reason string) error {
	u, ok := e.Store.(unlocker)
	if !ok {
		return errors.New("mark lost: the store cannot write without its lock")
	}
	if session == "" {
		session = mapping.UnknownSession
	}
	agent := v.AgentName()
	d := mapping.Draft{Type: "error.raised", Subject: hook, Time: at, Data: mapping.Data(
		"code", LostCode, "hook", hook, "error", map[string]any{"type": reason})}
	return u.Unlocked(agent, session, func(tx *Tx) error {
		var src sources
		evs, _, err := e.build(agent, session, "", []mapping.Draft{d}, tx.State, &src)
		if err != nil {
			return err
		}
		var lines lineBuf
		if err := lines.add(evs, 1); err != nil {
			return err
		}
		return e.Sink.Write(agent, session, lines.lines())
	})
}

// identify resolves a moment's name and session, naming the unknown lane
// when the vendor finds none.
func identify(v mapping.Vendor, m mapping.Moment) (mapping.Moment, string) {
	hook, session := v.Identify(m)
	if session == "" {
		session = mapping.UnknownSession
	}
	if m.Hook == "" {
		m.Hook = hook
	}
	return m, session
}

// Handle maps one moment with v's table and emits its events, all under the
// session's lock so concurrent processes of one session keep seq order.
func (e *Emitter) Handle(v mapping.Vendor, m mapping.Moment) (Result, error) {
	m, session := identify(v, m)
	rs, err := e.emitSession(v, session, []mapping.Moment{m}, true)
	if rs[0].Err != nil && err == nil {
		err = rs[0].Err
	}
	return rs[0], err
}

// HandleBatch emits moments that arrived together (one export request),
// grouped by session in arrival order: each session's moments are mapped
// under one hold of its lock, its state is saved once and its lines written
// in one sink call. A moment whose mapping fails carries the failure in its
// Result and is skipped; a store or sink failure fails its whole session
// group, reported in the returned error (and in every Result of the group).
func (e *Emitter) HandleBatch(v mapping.Vendor, ms []mapping.Moment) ([]Result, error) {
	return e.handleBatch(v, ms, true)
}

// HandleBatchCounts is HandleBatch for a caller that only counts what the
// moments produced (the OTLP receiver): the Results carry no Events, so
// each event is let go once encoded and the storage of one moment's events
// serves the next. Everything else, the lines written included, is as
// HandleBatch does it.
func (e *Emitter) HandleBatchCounts(v mapping.Vendor, ms []mapping.Moment) ([]Result, error) {
	return e.handleBatch(v, ms, false)
}

// handleBatch is HandleBatch; keep says whether the Results keep their
// Events.
func (e *Emitter) handleBatch(v mapping.Vendor, ms []mapping.Moment, keep bool) ([]Result, error) {
	// The moments as identified: ms itself until one needs its name
	// filled in, then a copy (the caller's moments are never changed).
	ids := ms
	sessions := make([]string, len(ms))
	one := true // all of one session: the common export, no grouping
	for i, m := range ms {
		id, session := identify(v, m)
		if id.Hook != m.Hook && &ids[0] == &ms[0] {
			ids = slices.Clone(ms)
		}
		if &ids[0] != &ms[0] {
			ids[i] = id
		}
		sessions[i] = session
		one = one && sessions[i] == sessions[0]
	}
	if one && len(ms) > 0 {
		rs, err := e.emitSession(v, sessions[0], ids, keep)
		if err != nil {
			for i := range rs {
				if rs[i].Err == nil {
					rs[i].Err = err
				}
			}
		}
		return rs, errors.Join(err) // as the grouped path reports it
	}
	out := make([]Result, len(ms))
	type group struct {
		idx []int
		ms  []mapping.Moment
	}
	groups := map[string]*group{}
	var order []string
	for i, m := range ids {
		session := sessions[i]
		g := groups[session]
		if g == nil {
			g = &group{}
			groups[session] = g
			order = append(order, session)
		}
		g.idx, g.ms = append(g.idx, i), append(g.ms, m)
	}
	var errs []error
	for _, session := range order {
		g := groups[session]
		rs, err := e.emitSession(v, session, g.ms, keep)
		for j, i := range g.idx {
			out[i] = rs[j]
			if err != nil && out[i].Err == nil {
				out[i].Err = err
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// emitSession maps and emits the moments of one session: positions are
// reserved (the state saved) before the lines are written, so a crash in
// between leaves a gap, never a reused position. For heavy moments the
// mapping, redaction and encoding are done before the session's lock is
// taken, on the stored state as it was (a Peek): under the lock the work is
// adopted when the state is still that version, and redone otherwise, so a
// hook with a heavy payload holds up the session's other hooks only when
// they raced it. Drafts a table addresses to another session
// (Draft.Session) are emitted into that session (emitAway) while this lock
// is still held. When the lock cannot be had (its holder is stuck) or the
// state file cannot be used, the events are written anyway in a fresh
// epoch (inSession). keep says whether the Results keep their Events.
func (e *Emitter) emitSession(v mapping.Vendor, session string, ms []mapping.Moment, keep bool) ([]Result, error) {
	agent := v.AgentName()
	var arena *mapping.Arena
	if !keep {
		// The drafts are let go once written: the tables may cut them
		// from storage this session's batch reuses (see mapping.Arena).
		arena = getArena()
		defer putArena(arena)
	}
	var (
		pre      *batch
		preState *SessionState
		version  []byte
	)
	if p, ok := e.Store.(peeker); ok && heavy(ms) {
		if st, ver, err := p.Peek(agent, session); err == nil {
			if b, err := e.prepare(v, agent, session, ms, st, arena); err == nil && len(b.away.order) == 0 {
				pre, preState, version = b, st, ver
			}
		}
	}
	var done *batch
	unlocked, err := e.inSession(agent, session, func(tx *Tx) error {
		b := pre
		if pre != nil && tx.Current(version) {
			*tx.State = *preState
		} else {
			var err error
			if b, err = e.prepare(v, agent, session, ms, tx.State, arena); err != nil {
				return err
			}
		}
		done = b
		if e.Commit != nil && !e.Commit() {
			return &LostError{len(b.lines.ends), ErrGivenUp}
		}
		tx.Appending(len(b.lines.buf))
		if err := tx.Save(); err != nil {
			return &LostError{len(b.lines.ends), err}
		}
		awayErr := e.emitAway(agent, b.away, b.rs, keep)
		if b.lines.empty() {
			return awayErr
		}
		return errors.Join(b.lines.writeTo(e.Sink, agent, session), awayErr)
	})
	if arena != nil && sinkDoneOnReturn(e.Sink) {
		// Written (or given up) and let go: the next counting batch
		// encodes into the same storage.
		if pre != nil {
			putLines(&pre.lines)
		}
		if done != nil && done != pre {
			putLines(&done.lines)
		}
	}
	var rs []Result
	if done != nil {
		rs = done.rs
	} else {
		rs = make([]Result, len(ms)) // the batch failed before it was prepared
	}
	for i := range rs {
		rs[i].Hook, rs[i].Session, rs[i].Unlocked = ms[i].Hook, session, unlocked
	}
	return rs, err
}

// heavyMoments is the payload size from which moments are prepared before
// the session's lock is taken: lighter ones cost less to map under the lock
// than a Peek, and prepared work is redone when hooks of the session race.
const heavyMoments = 32 << 10

func heavy(ms []mapping.Moment) bool {
	n := 0
	for _, m := range ms {
		n += len(m.Raw)
	}
	return n >= heavyMoments
}

// batch is what one session's moments make: their results, their encoded
// lines and the drafts they address to other sessions.
type batch struct {
	rs    []Result
	lines lineBuf
	away  awayDrafts
	src   sources
}

// sources are the source URIs of one session's events, built once per
// batch, and the storage the batch's events are cut from: a batch of many
// moments allocates their events and positions a chunk at a time, not
// each on its own.
type sources struct {
	session, agent string
	evs            []Event
	nums           []int64
	// gated is the storage of the gated list payloads (Draft.Fields) of the
	// events one build makes: they are encoded, or copied into Data,
	// before the next build.
	gated []redact.Field
	// text holds the ids and times of the batch's events, cut from it as
	// strings: one allocation a chunk, not two an event. Its bytes are
	// never written again once cut (a state keeps ids), so a string cut
	// from it is as immutable as any.
	text []byte
	// The second secText holds the form of ("2006-01-02T15:04:05.",
	// secLen bytes, of the time formatTime writes) and the last time cut.
	sec       int64
	secSet    bool
	secText   [timeLen]byte
	lastMilli int64
	lastTime  string
	// The ceiling of the last event's type (one emitter's policy: a batch
	// is built by one).
	ceilType string
	ceil     redact.Level
	ceilSet  bool
	// transient says the events are let go once encoded (a counting
	// batch): each build reuses the event and position storage of the
	// one before.
	transient bool
}

// Chunk sizes of a batch's event and position storage.
const (
	eventChunk = 64
	numChunk   = 128
)

// events returns room for n events: an empty slice that holds n without
// growing, cut from the batch's chunk, whose appends past n cannot reach
// another moment's events.
func (s *sources) events(n int) []Event {
	s.gated = s.gated[:0]
	if s.transient {
		// The last build's events are encoded: their storage is free.
		s.nums = s.nums[:0]
		if cap(s.evs) < n {
			s.evs = make([]Event, 0, max(n, eventChunk/4))
		}
		return s.evs[:0:n]
	}
	if n == 0 {
		return []Event{} // as make gives it: empty, not nil
	}
	if n > eventChunk/4 {
		return make([]Event, 0, n)
	}
	if cap(s.evs)-len(s.evs) < n {
		s.evs = make([]Event, 0, eventChunk)
	}
	start := len(s.evs)
	s.evs = s.evs[:start+n]
	return s.evs[start : start : start+n]
}

// gate is redact.GateFields for c into the batch's storage.
func (s *sources) gate(c redact.Content, ceiling redact.Level, p *redact.Pipeline) ([]redact.Field, redact.Level) {
	start := len(s.gated)
	if cap(s.gated)-start < len(c.Fields) {
		s.gated = make([]redact.Field, 0, max(len(c.Fields), 32))
		start = 0
	}
	fs, honoured := redact.GateFields(s.gated[start:start:start+len(c.Fields)], c, ceiling, p)
	if len(fs) <= len(c.Fields) { // written in place, not grown elsewhere
		s.gated = s.gated[:start+len(fs)]
	}
	return fs, honoured
}

// textChunk is the size of a batch's id and time storage.
const textChunk = 4 << 10

// room returns room for n bytes of text, at the end of the batch's chunk.
func (s *sources) room(n int) []byte {
	if cap(s.text)-len(s.text) < n {
		s.text = make([]byte, 0, textChunk)
	}
	return s.text[len(s.text) : len(s.text) : len(s.text)+n]
}

// cut returns b, written into room, as a string, and marks its bytes used.
func (s *sources) cut(b []byte) string {
	s.text = s.text[:len(s.text)+len(b)]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// id is u's canonical form, in the batch's text.
func (s *sources) id(u ulid) string {
	return s.cut(u.appendTo(s.room(ulidLen)))
}

// time is formatTime(t), in the batch's text.
//
// A batch's records mostly fall in a few seconds: the last second's
// formatted date and clock are kept and only the milliseconds written,
// and an event in the same millisecond as the last takes its string.
func (s *sources) time(t time.Time) string {
	ms := t.UnixMilli()
	if s.lastTime != "" && ms == s.lastMilli {
		return s.lastTime
	}
	if sec := t.Unix(); !s.secSet || sec != s.sec {
		b, ok := appendTime(s.secText[:0], t)
		if !ok {
			return formatTime(t)
		}
		s.sec, s.secSet = sec, len(b) == timeLen
	}
	b := append(s.room(timeLen), s.secText[:secLen]...)
	n := t.Nanosecond() / 1e6
	b = append(b, byte('0'+n/100), byte('0'+n/10%10), byte('0'+n%10), 'Z')
	s.lastMilli, s.lastTime = ms, s.cut(b)
	return s.lastTime
}

// ceiling is p.Ceiling(typ), the last type's remembered: a batch's events
// are mostly of one type, and matching every override pattern again for
// each costs more than comparing the type.
func (s *sources) ceiling(p redact.Policy, typ string) redact.Level {
	if !s.ceilSet || typ != s.ceilType {
		s.ceilType, s.ceil, s.ceilSet = typ, p.Ceiling(typ), true
	}
	return s.ceil
}

// num stores v for an event's seq or epoch.
func (s *sources) num(v int64) *int64 {
	if len(s.nums) == cap(s.nums) {
		s.nums = make([]int64, 0, numChunk)
	}
	s.nums = append(s.nums, v)
	return &s.nums[len(s.nums)-1]
}

// prepare maps the moments on st, which it changes, and builds, gates and
// encodes their events. With an arena (a counting batch) the Results keep
// no Events and the tables cut the drafts from the arena.
func (e *Emitter) prepare(v mapping.Vendor, agent, session string, ms []mapping.Moment, st *SessionState, arena *mapping.Arena) (*batch, error) {
	keep := arena == nil
	b := &batch{rs: make([]Result, len(ms))}
	b.src.transient = !keep
	if !keep && sinkDoneOnReturn(e.Sink) {
		b.lines.store = getLines()
	}
	if len(ms) > 1 && keep {
		b.src.evs = make([]Event, 0, len(ms)) // most moments make one event
	}
	for i, m := range ms {
		m.Arena = arena
		drafts, err := v.Map(m, &st.Table)
		if err != nil {
			b.rs[i].Err = fmt.Errorf("map %s %s: %w", v.Name, m.Hook, err)
			continue
		}
		drafts = b.away.take(i, m.Nonce, session, drafts)
		evs, suppressed, err := e.build(agent, session, m.Nonce, drafts, st, &b.src)
		if err != nil {
			return nil, err
		}
		b.rs[i].Suppressed = suppressed
		if keep {
			b.rs[i].Events = evs
		}
		if err := b.lines.add(evs, len(ms)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// spareArena keeps one counting batch's draft storage (mapping.Arena) for
// the next: a batch's drafts are garbage once its session is written. One
// spare, not a sync.Pool's one a processor and their victims: what the
// sidecar keeps between requests stays one batch's worth; batches that
// run at once beside it allocate their own.
var spareArena = make(chan *mapping.Arena, 1)

func getArena() *mapping.Arena {
	select {
	case a := <-spareArena:
		return a
	default:
		return new(mapping.Arena)
	}
}

// putArena gives a back, cleared: nothing of the batch stays reachable.
func putArena(a *mapping.Arena) {
	a.Reset()
	select {
	case spareArena <- a:
	default:
	}
}

// peeker is a Store that can read a session's state without its lock.
type peeker interface {
	Peek(agent, session string) (*SessionState, []byte, error)
}

// unlocker is a Store that can write a session whose lock cannot be had.
type unlocker interface {
	Unlocked(agent, session string, fn func(*Tx) error) error
}

// inSession runs fn under the session's lock; when the lock's holder is
// stuck (see FileStore.LockWait) or the state file cannot be used, it runs
// fn through the store's unlocked lane, which gives the events an honest
// position in a fresh epoch, and returns why as unlocked. fn runs once.
func (e *Emitter) inSession(agent, session string, fn func(*Tx) error) (unlocked, err error) {
	entered := false
	err = e.Store.Locked(agent, session, func(tx *Tx) error {
		entered = true
		return fn(tx)
	})
	var se *StateError
	if err == nil || entered || !errors.Is(err, ErrLockTimeout) && !errors.As(err, &se) {
		return nil, err
	}
	u, ok := e.Store.(unlocker)
	if !ok {
		return nil, err
	}
	return err, u.Unlocked(agent, session, fn)
}

// awayDrafts are the drafts of one batch addressed to sessions other than
// the moments' own, per session in first-seen order, each remembering the
// moment it came from.
type awayDrafts struct {
	order []string
	by    map[string][]awayDraft
}

type awayDraft struct {
	moment int
	nonce  string
	draft  mapping.Draft
}

// take keeps the drafts of moment i that belong to session (a Session
// naming it is cleared) and sets the others aside.
func (a *awayDrafts) take(i int, nonce, session string, drafts []mapping.Draft) []mapping.Draft {
	foreign := false
	for j := range drafts {
		if drafts[j].Session == session {
			drafts[j].Session = ""
		}
		foreign = foreign || drafts[j].Session != ""
	}
	if !foreign {
		return drafts
	}
	own := drafts[:0:0]
	for _, d := range drafts {
		if d.Session == "" || d.Session == session {
			d.Session = ""
			own = append(own, d)
			continue
		}
		if a.by == nil {
			a.by = map[string][]awayDraft{}
		}
		if _, seen := a.by[d.Session]; !seen {
			a.order = append(a.order, d.Session)
		}
		target := d.Session
		d.Session = ""
		a.by[target] = append(a.by[target], awayDraft{i, nonce, d})
	}
	return own
}

// emitAway emits the drafts set aside for other sessions, each session
// under its own lock with its own positions, references and log, adding
// the events to the results of the moments they came from. The caller holds
// the moments' session lock: locks nest from the session a moment is
// identified to into the one a table addresses (a resumed session's new
// AEP session), never the other way, so no two processes wait on each other.
// keep says whether the results keep the events.
func (e *Emitter) emitAway(agent string, a awayDrafts, rs []Result, keep bool) error {
	var errs []error
	for _, session := range a.order {
		_, err := e.inSession(agent, session, func(tx *Tx) error {
			var lines lineBuf
			src := sources{transient: !keep}
			for ds := a.by[session]; len(ds) > 0; {
				n := 1 // one moment's drafts are built together
				for n < len(ds) && ds[n].moment == ds[0].moment {
					n++
				}
				drafts := make([]mapping.Draft, n)
				for j := range drafts {
					drafts[j] = ds[j].draft
				}
				evs, suppressed, err := e.build(agent, session, ds[0].nonce, drafts, tx.State, &src)
				if err != nil {
					return err
				}
				r := &rs[ds[0].moment]
				ds = ds[n:]
				r.Suppressed += suppressed
				if keep {
					r.Events = append(r.Events, evs...)
				}
				if err := lines.add(evs, 1); err != nil {
					return err
				}
			}
			tx.Appending(len(lines.buf))
			if err := tx.Save(); err != nil {
				return &LostError{len(lines.ends), err}
			}
			if lines.empty() {
				return nil
			}
			return lines.writeTo(e.Sink, agent, session)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("session %q: %w", session, err))
		}
	}
	return errors.Join(errs...)
}

// lineBuf collects a session's encoded lines back to back in one buffer,
// cut apart once it has stopped growing.
type lineBuf struct {
	buf  []byte
	ends []int
	sh   shared // what the lines' envelopes share
	// store, when set, is storage an earlier counting batch wrote and
	// let go, encoded into instead of allocating (see putLines).
	store lineStore
	out   [][]byte // the lines as last cut apart
}

// lineStore is a line buffer's storage, kept from one counting batch to
// the next.
type lineStore struct {
	buf  []byte
	ends []int
	out  [][]byte
}

// spareLines keeps one counting batch's line storage for the next, once
// the sink is done with the lines (sinkDoneOnReturn). One spare: what the
// sidecar keeps between requests stays one batch's lines.
var spareLines = make(chan lineStore, 1)

// maxSpareLines bounds the buffer kept: a batch of large lines allocates
// its own.
const maxSpareLines = 256 << 10

func getLines() lineStore {
	select {
	case st := <-spareLines:
		return st
	default:
		return lineStore{}
	}
}

// putLines offers l's storage for the next batch; l's lines must be
// written and let go.
func putLines(l *lineBuf) {
	if l.buf == nil || cap(l.buf) > maxSpareLines {
		return
	}
	clear(l.out) // they point into buf only, but a spare holds nothing
	select {
	case spareLines <- lineStore{buf: l.buf[:0], ends: l.ends[:0], out: l.out[:0]}:
	default:
	}
}

// add encodes evs; hint is how many moments the batch has, for the
// allocation: the first line is encoded alone, and the buffer sized from
// it for the batch (lines of one batch are mostly alike in size).
func (l *lineBuf) add(evs []Event, hint int) error {
	for j := range evs {
		if l.buf == nil {
			l.buf = l.store.buf
			if cap(l.buf) < 1024 {
				l.buf = make([]byte, 0, 1024)
			}
		}
		var err error
		if l.buf, err = appendEventShared(l.buf, &evs[j], &l.sh); err != nil {
			return fmt.Errorf("encode %s: %w", evs[j].Type, err)
		}
		if len(l.ends) == 0 && hint > 1 {
			// A sixteenth over the first line's size a moment: the lines of
			// a batch of records differ by a few bytes (counters, ids), and
			// what a batch does not use is allocated for nothing. Never
			// more than 768 bytes a moment up front (one large first line
			// must not reserve a copy of itself per moment): longer lines
			// grow the buffer as they come.
			if want := max(len(l.buf), min(len(l.buf)*(hint+hint/16+1), 768*hint)); cap(l.buf) < want {
				sized := make([]byte, len(l.buf), want)
				copy(sized, l.buf)
				l.buf = sized
			}
			l.ends = l.store.ends
			if cap(l.ends) < hint {
				l.ends = make([]int, 0, hint)
			}
		}
		l.ends = append(l.ends, len(l.buf))
	}
	return nil
}

func (l *lineBuf) empty() bool { return len(l.ends) == 0 }

// lines are the encoded lines, each with its newline.
func (l *lineBuf) lines() [][]byte {
	out := l.store.out[:0]
	if cap(out) < len(l.ends) {
		out = make([][]byte, 0, len(l.ends))
	}
	start := 0
	for _, end := range l.ends {
		out, start = append(out, l.buf[start:end:end]), end
	}
	l.out = out
	return out
}

// writeTo writes the lines to s, which may write them straight from the
// buffer they were encoded into (see joinedSink).
func (l *lineBuf) writeTo(s Sink, agent, session string) error {
	lines := l.lines()
	return writeTo(s, agent, session, lines, l.buf[:l.ends[len(l.ends)-1]])
}

// formatTime is t (UTC) as RFC 3339 with milliseconds,
// t.Format("2006-01-02T15:04:05.000Z") without the layout parsing.
func formatTime(t time.Time) string {
	if b, ok := appendTime(nil, t); ok {
		return string(b)
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// timeLen is the length of formatTime's form of a year 0 to 9999, secLen
// that of its date and clock up to the milliseconds.
const timeLen, secLen = 24, 20

// appendTime appends formatTime's form of t to dst; false (dst unchanged)
// for a year outside 0 to 9999, which needs the layout's own rules.
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return dst, false
	}
	h, mi, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	var b [timeLen]byte
	put := func(i, v, n int) {
		for k := i + n - 1; k >= i; k-- {
			b[k] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, y, 4)
	b[4] = '-'
	put(5, int(mo), 2)
	b[7] = '-'
	put(8, d, 2)
	b[10] = 'T'
	put(11, h, 2)
	b[13] = ':'
	put(14, mi, 2)
	b[16] = ':'
	put(17, sec, 2)
	b[19] = '.'
	put(20, ms, 3)
	b[23] = 'Z'
	return append(dst, b[:]...), true
}

func (e *Emitter) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// build turns drafts into envelopes of session, assigning positions from
// st, that session's state; src keeps the source URIs across the calls of
// one batch.
func (e *Emitter) build(agent, session, nonce string, drafts []mapping.Draft, st *SessionState, src *sources) ([]Event, int, error) {
	ids := e.IDs
	if ids == nil {
		ids = NewIDs() // never stored: an emitter is shared across goroutines
	}
	var stable *stableIDs
	if e.StableIDs && nonce != "" {
		stable = &stableIDs{key: agent + "\x00" + session + "\x00" + nonce}
	}
	evs := src.events(len(drafts))
	suppressed := 0
	for _, d := range drafts {
		if d.Type == "run.started" && d.Run != "" {
			// A run starts once: a second start for the same run (a
			// re-delivered moment, an echoing peer) is not a new run.
			if _, started := st.Refs.Get("run:" + d.Run); started {
				suppressed++
				continue
			}
		}
		if closeKey := terminalKey(d); closeKey != "" {
			if _, done := st.Refs.Get(closeKey); done {
				suppressed++
				continue
			}
			st.Refs.Set(closeKey, "1")
		}
		t := d.Time
		if t.IsZero() {
			t = e.now()
		}
		t = t.UTC()
		ev := Event{
			AEP:      Version,
			ID:       src.id(newID(ids, stable, t, d)),
			Type:     d.Type,
			Subject:  d.Subject,
			Time:     src.time(t),
			Agent:    agent,
			Severity: d.Severity,
			Tenant:   e.Tenant,
		}
		if ev.Severity == "" {
			ev.Severity = defaultSeverity(d.Type)
		}
		ceiling := src.ceiling(e.Policy, d.Type)
		if ceiling < redact.Full {
			// The subject is an identifier the vendor chose (a tool or
			// server name): kept at every level, so it passes the token
			// rules.
			ev.Subject = redact.Name(ev.Subject)
		}
		if d.SubjectRef != "" {
			if id, ok := st.Refs.Get(d.SubjectRef); ok {
				ev.Subject = id
			}
		}
		c := redact.Content{
			Type: d.Type, Agent: agent, Subject: ev.Subject,
			Meta: d.Meta, Levels: d.Levels, Secrets: d.Secrets,
		}
		var honoured redact.Level
		if d.Data == nil && d.Fields != nil {
			c.Fields = markMissingFields(d.Fields, d.Levels)
			var fs []redact.Field
			fs, honoured = src.gate(c, ceiling, e.Pipeline)
			if src.transient {
				ev.fields = fs
			} else {
				ev.Data = fieldMap(fs)
			}
		} else {
			c.Data = markMissing(d.Data)
			ev.Data, honoured = redact.Gate(c, ceiling, e.Pipeline)
		}
		ev.Capture = honoured.String()
		if AgentScoped(d.Type) {
			if src.agent == "" {
				src.agent = e.source(agent, "")
			}
			ev.Source = src.agent
		} else {
			if src.session == "" {
				src.session = e.source(agent, session)
			}
			ev.Source = src.session
			ev.Session, ev.Run, ev.Step = session, d.Run, d.Step
			epoch, seq, err := st.take()
			if err != nil {
				return nil, 0, err
			}
			ev.Seq, ev.Epoch = src.num(seq), src.num(epoch)
		}
		ev.Cause = e.link(d, st, ev.ID)
		evs = append(evs, ev)
	}
	return evs, suppressed, nil
}

// markMissing replaces the digest fields a table could not fill
// (mapping.DigestMissing) by their names in digests_missing: the event is
// recorded with its structural facts and says which digests it lacks.
func markMissing(data map[string]any) map[string]any {
	var missing []string
	for k, v := range data {
		if v == mapping.DigestMissing {
			missing = append(missing, k)
		}
	}
	if missing == nil {
		return data
	}
	out := make(map[string]any, len(data))
	for k, v := range data {
		if v != mapping.DigestMissing {
			out[k] = v
		}
	}
	slices.Sort(missing)
	out["digests_missing"] = missing
	return out
}

// markMissingFields is markMissing for a list payload:
// digests_missing takes the level levels declares for it, as the gate
// would give it in a map payload.
func markMissingFields(fs []redact.Field, levels map[string]redact.Level) []redact.Field {
	n := 0
	for i := range fs {
		if fs[i].Value == mapping.DigestMissing {
			n++
		}
	}
	if n == 0 {
		return fs
	}
	missing := make([]string, 0, n)
	out := make([]redact.Field, 0, len(fs)-n+1)
	for _, f := range fs {
		if f.Value == mapping.DigestMissing {
			missing = append(missing, f.Key)
		} else if f.Key != "digests_missing" {
			out = append(out, f)
		}
	}
	l, ok := levels["digests_missing"]
	if !ok {
		l = redact.Full
	}
	slices.Sort(missing)
	return append(out, redact.Field{Key: "digests_missing", Value: missing, Level: l})
}

// fieldMap is the gated list payload fs as Data: nil when fs is (no
// payload at all).
func fieldMap(fs []redact.Field) map[string]any {
	if fs == nil {
		return nil
	}
	m := make(map[string]any, len(fs))
	for _, f := range fs {
		m[f.Key] = f.Value
	}
	return m
}

// source is the RECOMMENDED source URI; the untrusted session id is encoded
// as one path segment.
func (e *Emitter) source(agent, session string) string {
	s := "aep://" + url.PathEscape(e.Host) + "/agent/" + url.PathEscape(agent)
	if session != "" {
		s += "/session/" + url.PathEscape(session)
	}
	return s
}

// link records the references this event opens and returns its cause: an
// explicit CauseRef, else the start its terminal pairs with.
func (e *Emitter) link(d mapping.Draft, st *SessionState, id string) string {
	var cause string
	if d.CauseRef != "" {
		cause, _ = st.Refs.Get(d.CauseRef)
	}
	if cause == "" {
		cause = d.Cause
	}
	open, closeOf := pairKeys(d)
	if cause == "" && closeOf != "" {
		cause, _ = st.Refs.Get(closeOf)
	}
	if open != "" {
		st.Refs.Set(open, id)
	}
	if d.Mark != "" {
		st.Refs.Set(d.Mark, id)
	}
	return cause
}

// pairKeys names the reference a start event opens or a terminal closes
// (AEP-0002 §2 convention 1): runs by run id, tool calls by call id,
// subagents by subject.
func pairKeys(d mapping.Draft) (open, closes string) {
	switch d.Type {
	case "run.started":
		if d.Run != "" {
			return "run:" + d.Run, ""
		}
	case "run.finished", "run.failed", "run.cancelled":
		if d.Run != "" {
			return "", "run:" + d.Run
		}
	case "tool.requested":
		if c := callID(d); c != "" {
			return "tool:" + c, ""
		}
	case "tool.completed", "tool.failed", "tool.denied":
		if c := callID(d); c != "" {
			return "", "tool:" + c
		}
	case "delegation.subagent.started":
		if d.Subject != "" {
			return "sub:" + d.Subject, ""
		}
	case "delegation.subagent.stopped":
		if d.Subject != "" {
			return "", "sub:" + d.Subject
		}
	}
	return "", ""
}

// terminalKey names the unit a terminal closes, for terminal exclusivity
// (AEP-0002 §2 convention 5): a run's one terminal, a session's one end.
func terminalKey(d mapping.Draft) string {
	switch d.Type {
	case "run.finished", "run.failed", "run.cancelled":
		if d.Run != "" {
			return "end:run:" + d.Run
		}
	case "session.ended":
		return "end:session:" // st is the session's own
	}
	return ""
}

func callID(d mapping.Draft) string {
	tool, _ := d.Data["tool"].(map[string]any)
	if d.Data == nil {
		for _, f := range d.Fields {
			if f.Key == "tool" {
				tool, _ = f.Value.(map[string]any)
			}
		}
	}
	id, _ := tool["call_id"].(string)
	return id
}

// defaultSeverity is the severity a type gets when its draft names none;
// "" leaves the AEP default (info) implicit.
func defaultSeverity(typ string) string {
	switch typ {
	case "attention.requested", "tool.denied":
		return "notice"
	case "tool.failed", "attention.timeout":
		return "warning"
	case "run.failed", "error.raised":
		return "error"
	}
	return ""
}
