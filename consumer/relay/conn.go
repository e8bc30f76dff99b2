package relay

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/consumer/relay/buffer"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

// conn is one streaming connection (an SSE request or a WebSocket): what
// its token grants, its subscriptions, and the bounded queue its one
// writer drains. Subscriptions and claims change only under the hub's
// lock; the queue is filled under it and drained outside it.
type conn struct {
	id      uint64
	binding string // "sse" or "ws"
	grant   *auth.Grant
	remote  string

	// WebSocket hello facts.
	role     string // emitter, consumer or both
	agent    string // hello identity.agent
	instance string
	control  json.RawMessage // the declared capabilities.control, verbatim
	emits    json.RawMessage // the declared capabilities.emits, verbatim
	accepts  []string        // capabilities.control.accepts

	subs   []*sub            // under hub.mu
	claims map[string]*claim // session -> claim, under hub.mu

	q        *queue
	done     chan struct{} // closed when the connection is cut or ends
	doneOnce sync.Once
	reason   atomic.Pointer[string] // why it was cut
	shut     chan struct{}          // closed at server shutdown
	shutOnce sync.Once
}

// shutdown tells the connection's writer the relay is stopping.
func (c *conn) shutdown() { c.shutOnce.Do(func() { close(c.shut) }) }

// sub is one subscription.
type sub struct {
	id      string
	filter  attrmatch.Filter
	ceiling redact.Level
	// last is the last delivered position per session, kept by the
	// writer alone (for the closing frame).
	last map[string]event.Pos
}

// item is one thing for the writer: an event at a ceiling (for the
// subscriptions that matched it), a prepared frame, or a replay.
type item struct {
	ev      *event.Event
	ceiling redact.Level
	subs    []*sub

	frame []byte // a WebSocket frame or an SSE comment, written as is

	replay []step // replay, then live (for sub)
	sub    *sub
	end    bool // live=0: the stream ends after this
	forget *sub // an unsubscribe: stop reporting its positions
}

// step is one step of a replay: an exhaustion marker or an event.
type step struct {
	ev   *event.Event
	mark *buffer.Exhausted
}

func (c *conn) consumes() bool { return c.role != "emitter" }
func (c *conn) emitter() bool  { return c.role == "emitter" || c.role == "both" }

// push queues it; a full queue cuts the connection (AEP-0003 §8.4: deliver
// or disconnect, never stall the relay for one consumer). It reports
// whether it was queued.
func (c *conn) push(it item) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	if c.q.put(it) {
		return true
	}
	c.cut("slow consumer: " + itoa(int(c.q.size())) + " bytes queued, the most is " + itoa(int(c.q.max)) + " (--queue)")
	return false
}

// stopped reports a cut or a shutdown, for a writer to stop between items.
func (c *conn) stopped() bool {
	select {
	case <-c.done:
		return true
	case <-c.shut:
		return true
	default:
		return false
	}
}

// cut ends the connection for reason (the first reason wins).
func (c *conn) cut(reason string) {
	c.doneOnce.Do(func() {
		c.reason.Store(&reason)
		close(c.done)
	})
}

// cutReason is why the connection was cut, "" if it was not.
func (c *conn) cutReason() string {
	if r := c.reason.Load(); r != nil {
		return *r
	}
	return ""
}

// offer queues ev for the subscriptions it matches, once per distinct
// ceiling among them. Called under hub.mu.
func (c *conn) offer(ev *event.Event) {
	if !c.grant.Sees(ev) {
		return
	}
	var by [4][]*sub
	for _, s := range c.subs {
		if s.filter.MatchAttrs(ev) {
			by[s.ceiling] = append(by[s.ceiling], s)
		}
	}
	for l, subs := range by {
		if len(subs) > 0 && !c.push(item{ev: ev, ceiling: redact.Level(l), subs: subs}) {
			return
		}
	}
}

func (c *conn) subByID(id string) (*sub, int) {
	for i, s := range c.subs {
		if s.id == id {
			return s, i
		}
	}
	return nil, -1
}

// delivered notes what the writer just sent, for the closing frame.
func delivered(ev *event.Event, subs ...*sub) {
	if !ev.Sequenced {
		return
	}
	for _, s := range subs {
		if s.last == nil {
			s.last = map[string]event.Pos{}
		}
		s.last[ev.Session] = ev.Pos
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
