package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aep-hook/aep-hook/consumer/relay/buffer"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/consumer/relay/store"
	"github.com/aep-hook/aep-hook/internal/lru"
)

// origin is where an event came in.
type origin int

const (
	fromLog  origin = iota + 1 // a local log line (the relay's own re-read: its repeats are not forwarded)
	fromHTTP                   // POST /events
	fromWS                     // an event frame
)

type idKey struct{ source, id string }

// hub is the relay's shared state: the buffers, the streaming connections
// and the emitter claims, under one lock. Store writes happen under it
// too, so the store, the buffers and the fan-out see events in one order.
type hub struct {
	mu     sync.Mutex
	bufs   buffer.Buffers
	seen   *lru.Set[idKey] // unbuffered events admitted, for dedupe
	conns  map[*conn]struct{}
	claims map[string][]*claim // by session
	closed bool

	store *store.Store
	audit *auditLog

	nextConn atomic.Uint64
	ingested atomic.Int64
	dups     atomic.Int64
}

// claim is one live (connection, session) pair: an emitter connection
// that sent a sequenced event of the session (it owns the session's
// order). Commands for the session route to its claimant.
type claim struct {
	c       *conn
	session string
	source  string
	tenant  string
}

func newHub(bufs buffer.Buffers, st *store.Store, a *auditLog) *hub {
	return &hub{bufs: bufs, seen: lru.New[idKey](65536), conns: map[*conn]struct{}{},
		claims: map[string][]*claim{}, store: st, audit: a}
}

// errConflict marks an event at a position another event holds.
var errConflict = errors.New("another event holds this (epoch, seq) position in its session")

// checked is an event classified before it is stored.
type checked struct {
	ev  *event.Event
	dup bool
}

// admit classifies a batch against what is held, under h.mu: duplicates
// (by (source, id)) are marked, a position conflict is an error naming the
// event's index. Nothing is changed.
func (h *hub) admit(evs []*event.Event) ([]checked, int, error) {
	out := make([]checked, len(evs))
	batch := map[idKey]bool{}
	for i, ev := range evs {
		k := idKey{ev.Source, ev.ID}
		dup := batch[k]
		if !dup {
			if ev.Sequenced {
				dup = h.bufs.Has(ev.Source, ev.Session, ev.ID)
				if !dup && h.bufs.Check(ev) == buffer.Conflict {
					return nil, i, errConflict
				}
			} else {
				dup = h.seen.Has(k)
			}
		}
		batch[k] = true
		out[i] = checked{ev: ev, dup: dup}
	}
	return out, -1, nil
}

// ingest admits a batch: events from the network are written to the store
// first (one write per session), then every new event is buffered, and
// every event is fanned out live as received, except a repeat of a local
// log line. It returns how many were new. A position conflict refuses the
// whole batch before anything is written.
func (h *hub) ingest(evs []*event.Event, from origin) (added int, idx int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, idx, err := h.admit(evs)
	if err != nil {
		return 0, idx, err
	}
	if from != fromLog {
		if err := h.write(cs); err != nil {
			return 0, -1, err
		}
	}
	for _, c := range cs {
		if !c.dup {
			if c.ev.Sequenced {
				h.bufs.Add(c.ev)
			} else {
				h.seen.Add(idKey{c.ev.Source, c.ev.ID})
			}
			added++
		} else {
			h.dups.Add(1)
			if from == fromLog {
				continue
			}
		}
		h.fanout(c.ev)
	}
	h.ingested.Add(int64(added))
	return added, -1, nil
}

// write appends the new events of cs to the store, grouped by session in
// order.
func (h *hub) write(cs []checked) error {
	type group struct {
		agent, session string
		lines          [][]byte
	}
	var groups []*group
	index := map[[2]string]*group{}
	for _, c := range cs {
		if c.dup {
			continue
		}
		k := [2]string{c.ev.Agent, c.ev.Session}
		g := index[k]
		if g == nil {
			g = &group{agent: c.ev.Agent, session: c.ev.Session}
			index[k] = g
			groups = append(groups, g)
		}
		g.lines = append(g.lines, c.ev.Raw)
	}
	for _, g := range groups {
		if err := h.store.Append(g.agent, g.session, g.lines...); err != nil {
			return fmt.Errorf("the relay's store: %w", err)
		}
	}
	return nil
}

// fanout offers ev to every subscribed connection. Called under h.mu.
func (h *hub) fanout(ev *event.Event) {
	for c := range h.conns {
		if len(c.subs) > 0 {
			c.offer(ev)
		}
	}
}

// load buffers an event read back from a store or log at start (nothing
// is connected yet: no fan-out).
func (h *hub) load(ev *event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Sequenced {
		h.bufs.Add(ev)
	} else {
		h.seen.Add(idKey{ev.Source, ev.ID})
	}
}

// register adds a streaming connection; it fails once the hub is shut or
// when max connections are open.
func (h *hub) register(c *conn, max int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errShutdown
	}
	if len(h.conns) >= max {
		return fmt.Errorf("limit-exceeded: %d connections are open (the relay's --max-conns)", max)
	}
	h.conns[c] = struct{}{}
	return nil
}

var errShutdown = errors.New("the relay is shutting down")

// unregister drops c and its claims.
func (h *hub) unregister(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c)
	for s, cl := range c.claims {
		list := h.claims[s]
		for i, x := range list {
			if x == cl {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(h.claims, s)
		} else {
			h.claims[s] = list
		}
	}
	c.claims = nil
	c.subs = nil
}

// claimFor records that emitter connection c speaks for ev's session.
func (h *hub) claimFor(c *conn, ev *event.Event) {
	if !ev.Sequenced || !c.emitter() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[c]; !ok {
		return
	}
	if c.claims == nil {
		c.claims = map[string]*claim{}
	}
	if _, ok := c.claims[ev.Session]; ok {
		return
	}
	cl := &claim{c: c, session: ev.Session, source: ev.Source, tenant: ev.Tenant}
	c.claims[ev.Session] = cl
	h.claims[ev.Session] = append(h.claims[ev.Session], cl)
}

// rosterEntry is one live claim as the roster frame reports it
// (AEP-0003 §4.1): declarations verbatim, nothing inferred.
type rosterEntry struct {
	Session  string          `json:"session"`
	Agent    string          `json:"agent,omitempty"`
	Instance string          `json:"instance,omitempty"`
	Control  json.RawMessage `json:"control,omitempty"`
	Emits    json.RawMessage `json:"emits,omitempty"`
}

// roster lists the live claims c's grant may know of: its tenant's, with
// sources within its read scopes.
func (h *hub) roster(c *conn) []rosterEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []rosterEntry{}
	for _, list := range h.claims {
		for _, cl := range list {
			if !c.grant.SeesTenant(cl.tenant) || !c.grant.Reads(cl.source) {
				continue
			}
			out = append(out, rosterEntry{Session: cl.session, Agent: cl.c.agent, Instance: cl.c.instance,
				Control: cl.c.control, Emits: cl.c.emits})
		}
	}
	return out
}

// stats are the counts /healthz reports.
type stats struct {
	Sessions    int   `json:"sessions"`
	Buffered    int   `json:"buffered_events"`
	Subscribers int   `json:"subscribers"`
	Connections int   `json:"connections"`
	Emitters    int   `json:"emitters"`
	Claims      int   `json:"claims"`
	Ingested    int64 `json:"ingested"`
	Duplicates  int64 `json:"duplicates"`
}

func (h *hub) stats() stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := stats{Sessions: h.bufs.Sessions(), Buffered: h.bufs.Events(), Connections: len(h.conns),
		Ingested: h.ingested.Load(), Duplicates: h.dups.Load()}
	for c := range h.conns {
		if len(c.subs) > 0 {
			s.Subscribers++
		}
		if c.emitter() && c.binding == "ws" {
			s.Emitters++
		}
	}
	for _, l := range h.claims {
		s.Claims += len(l)
	}
	return s
}

// shutdown refuses new connections and tells every open one to end.
func (h *hub) shutdown() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	out := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		out = append(out, c)
	}
	return out
}
