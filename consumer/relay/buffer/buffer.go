// Package buffer holds the relay's bounded replay buffers (AEP-0003 §5):
// for each session stream the most recent events in (epoch, seq) order, at
// most Depth of them, with admission deduplicated on (source, id). Streams
// are keyed by (source, session), since session names are unique only
// within their emitter (AEP-0001 §5.2); resume positions name the bare
// session, so a replay covers every stream of that name. At most
// MaxSessions streams are kept, and at most MaxBytes of events across
// them: past either bound the stream written least recently is dropped
// whole. A replay asked from a position older than what a stream still
// holds reports the stream exhausted, with its earliest held position; a
// stream dropped whole is remembered (its last position let go) and a
// replay into it reports it exhausted too.
//
// Buffers is not safe for concurrent use: the relay's hub holds it under
// its lock.
package buffer

import (
	"container/list"
	"sort"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// Defaults for a Buffers' zero fields.
const (
	DefaultDepth       = 1000
	DefaultMaxSessions = 500
	DefaultMaxBytes    = 512 << 20
)

// Outcome is what Add did with an event.
type Outcome int

// The outcomes of Add.
const (
	// Added: the event is buffered.
	Added Outcome = iota + 1
	// Duplicate: an event of the same (source, id) is buffered already.
	Duplicate
	// Conflict: another event holds the same position in the stream (an
	// emitter fault, AEP-0001 §7.2); the event is not buffered.
	Conflict
	// Stale: the event's position lies at or below what the stream has
	// already let go of; it is not buffered (a replay could never reach
	// it without reporting the gap anyway).
	Stale
	// Unbuffered: the event has no position (agent-scoped, a command, a
	// foreign-emitter event): it is live-only.
	Unbuffered
)

type key struct{ source, session string }

type stream struct {
	key       key
	evs       []*event.Event // ascending by Pos
	ids       map[string]struct{}
	bytes     int64
	truncated bool      // something older than evs[0] was let go
	floor     event.Pos // the newest position let go, when truncated
	elem      *list.Element
}

// Buffers is the set of session streams.
type Buffers struct {
	Depth       int   // events per stream; 0: DefaultDepth
	MaxSessions int   // streams; 0: DefaultMaxSessions
	MaxBytes    int64 // across streams; 0: DefaultMaxBytes

	streams   map[key]*stream
	bySession map[string][]*stream
	recency   *list.List // front: written most recently
	bytes     int64
	events    int
	// tombs remember, for streams dropped whole, the newest position let
	// go, so a stream that comes back still declares its gap.
	tombs     map[key]event.Pos
	tombOrder []key
	tombNames map[string][]key // the tombs by session name
}

func (b *Buffers) init() {
	if b.streams == nil {
		b.streams = map[key]*stream{}
		b.bySession = map[string][]*stream{}
		b.recency = list.New()
	}
}

func (b *Buffers) depth() int {
	if b.Depth <= 0 {
		return DefaultDepth
	}
	return b.Depth
}

func (b *Buffers) maxSessions() int {
	if b.MaxSessions <= 0 {
		return DefaultMaxSessions
	}
	return b.MaxSessions
}

func (b *Buffers) maxBytes() int64 {
	if b.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return b.MaxBytes
}

// Sessions is the number of streams held.
func (b *Buffers) Sessions() int { return len(b.streams) }

// Events is the number of events held.
func (b *Buffers) Events() int { return b.events }

// Bytes is the size of the events held.
func (b *Buffers) Bytes() int64 { return b.bytes }

// Add admits ev into its stream.
func (b *Buffers) Add(ev *event.Event) Outcome {
	if !ev.Sequenced {
		return Unbuffered
	}
	b.init()
	k := key{ev.Source, ev.Session}
	s := b.streams[k]
	if s != nil {
		if _, dup := s.ids[ev.ID]; dup {
			return Duplicate
		}
		if s.truncated && !s.floor.Less(ev.Pos) {
			return Stale
		}
	}
	if s == nil {
		for len(b.streams) >= b.maxSessions() {
			b.dropOldest()
		}
		s = &stream{key: k, ids: map[string]struct{}{}}
		if floor, ok := b.tombs[k]; ok {
			s.truncated, s.floor = true, floor
			if !floor.Less(ev.Pos) {
				return Stale
			}
		}
		s.elem = b.recency.PushFront(s)
		b.streams[k] = s
		b.bySession[k.session] = append(b.bySession[k.session], s)
	}
	i := len(s.evs)
	if i > 0 && !s.evs[i-1].Pos.Less(ev.Pos) {
		i = sort.Search(len(s.evs), func(j int) bool { return !s.evs[j].Pos.Less(ev.Pos) })
		if i < len(s.evs) && s.evs[i].Pos == ev.Pos {
			return Conflict
		}
	}
	s.evs = append(s.evs, nil)
	copy(s.evs[i+1:], s.evs[i:])
	s.evs[i] = ev
	s.ids[ev.ID] = struct{}{}
	n := ev.Size()
	s.bytes += n
	b.bytes += n
	b.events++
	b.recency.MoveToFront(s.elem)
	for len(s.evs) > b.depth() {
		b.trim(s)
	}
	for b.bytes > b.maxBytes() {
		if b.recency.Len() > 1 {
			b.dropOldest()
		} else if len(s.evs) > 1 {
			b.trim(s)
		} else {
			break
		}
	}
	return Added
}

// trim lets go of the oldest event of s.
func (b *Buffers) trim(s *stream) {
	old := s.evs[0]
	s.evs[0] = nil
	s.evs = s.evs[1:]
	delete(s.ids, old.ID)
	n := old.Size()
	s.bytes -= n
	b.bytes -= n
	b.events--
	if !s.truncated || s.floor.Less(old.Pos) {
		s.floor = old.Pos
	}
	s.truncated = true
}

// dropOldest lets go of the stream written least recently.
func (b *Buffers) dropOldest() {
	e := b.recency.Back()
	if e == nil {
		return
	}
	s := e.Value.(*stream)
	b.recency.Remove(e)
	delete(b.streams, s.key)
	list := b.bySession[s.key.session]
	for i, x := range list {
		if x == s {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(b.bySession, s.key.session)
	} else {
		b.bySession[s.key.session] = list
	}
	b.bytes -= s.bytes
	b.events -= len(s.evs)
	floor := s.floor
	if n := len(s.evs); n > 0 && (!s.truncated || floor.Less(s.evs[n-1].Pos)) {
		floor = s.evs[n-1].Pos
	}
	b.tomb(s.key, floor)
}

// tomb remembers a dropped stream's floor; at most 4 × MaxSessions are
// kept, oldest forgotten first.
func (b *Buffers) tomb(k key, floor event.Pos) {
	if b.tombs == nil {
		b.tombs = map[key]event.Pos{}
	}
	if _, ok := b.tombs[k]; !ok {
		b.tombOrder = append(b.tombOrder, k)
		if b.tombNames == nil {
			b.tombNames = map[string][]key{}
		}
		b.tombNames[k.session] = append(b.tombNames[k.session], k)
	}
	b.tombs[k] = floor
	for len(b.tombOrder) > 4*b.maxSessions() {
		old := b.tombOrder[0]
		delete(b.tombs, old)
		b.tombOrder = b.tombOrder[1:]
		names := b.tombNames[old.session]
		for i, x := range names {
			if x == old {
				names = append(names[:i], names[i+1:]...)
				break
			}
		}
		if len(names) == 0 {
			delete(b.tombNames, old.session)
		} else {
			b.tombNames[old.session] = names
		}
	}
}

// Truncate marks the stream of ev as having let go of everything up to
// and including floor: the relay loading a log's tail knows the log holds
// older events it did not load.
func (b *Buffers) Truncate(source, session string, floor event.Pos) {
	b.init()
	s := b.streams[key{source, session}]
	if s == nil {
		return
	}
	if !s.truncated || s.floor.Less(floor) {
		s.floor = floor
	}
	s.truncated = true
}

// Exhausted says a replay asked from a position the stream no longer
// covers: Earliest is the first position it still holds.
type Exhausted struct {
	Session  string
	Source   string
	Earliest event.Pos
}

// Since returns the events of every stream named session strictly after
// from, stream by stream in (epoch, seq) order, and the streams whose
// let-go events lie after from (AEP-0003 §5: the gap is declared, then
// what is held is delivered). A stream dropped whole that let go of
// events after from is declared too, though it holds nothing: its
// Earliest is the position after the last one let go, from which on
// delivery would be whole again, so a resume never meets silence where
// events were lost.
func (b *Buffers) Since(session string, from event.Pos) ([]*event.Event, []Exhausted) {
	var out []*event.Event
	var ex []Exhausted
	for _, s := range b.bySession[session] {
		if len(s.evs) == 0 {
			continue
		}
		if s.truncated && from.Less(s.floor) {
			ex = append(ex, Exhausted{Session: session, Source: s.key.source, Earliest: s.evs[0].Pos})
		}
		i := sort.Search(len(s.evs), func(j int) bool { return from.Less(s.evs[j].Pos) })
		out = append(out, s.evs[i:]...)
	}
	for _, k := range b.tombNames[session] {
		if _, held := b.streams[k]; held {
			continue
		}
		if floor := b.tombs[k]; from.Less(floor) {
			ex = append(ex, Exhausted{Session: session, Source: k.source, Earliest: event.Pos{Epoch: floor.Epoch, Seq: floor.Seq + 1}})
		}
	}
	return out, ex
}

// All returns every held event, stream by stream (least recently written
// first), each from its earliest held position: replay-all (AEP-0003 §5).
func (b *Buffers) All() []*event.Event {
	if b.recency == nil {
		return nil
	}
	out := make([]*event.Event, 0, b.events)
	for e := b.recency.Back(); e != nil; e = e.Prev() {
		out = append(out, e.Value.(*stream).evs...)
	}
	return out
}

// Check is what Add would do with ev, without doing it: Duplicate,
// Conflict, Stale, Unbuffered, or Added.
func (b *Buffers) Check(ev *event.Event) Outcome {
	if !ev.Sequenced {
		return Unbuffered
	}
	k := key{ev.Source, ev.Session}
	s := b.streams[k]
	if s == nil {
		if floor, ok := b.tombs[k]; ok && !floor.Less(ev.Pos) {
			return Stale
		}
		return Added
	}
	if _, dup := s.ids[ev.ID]; dup {
		return Duplicate
	}
	if s.truncated && !s.floor.Less(ev.Pos) {
		return Stale
	}
	i := sort.Search(len(s.evs), func(j int) bool { return !s.evs[j].Pos.Less(ev.Pos) })
	if i < len(s.evs) && s.evs[i].Pos == ev.Pos {
		return Conflict
	}
	return Added
}

// Has reports whether an event of (source, id) in session is buffered.
func (b *Buffers) Has(source, session, id string) bool {
	s := b.streams[key{source, session}]
	if s == nil {
		return false
	}
	_, ok := s.ids[id]
	return ok
}
