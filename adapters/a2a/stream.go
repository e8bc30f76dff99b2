package a2a

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/httptee"
	"github.com/aep-hook/aep-hook/adapters/sse"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// streamObserver frames a relayed event stream off the relay path: the
// relay copies each chunk into a bounded queue without waiting, and a
// goroutine reads the queue with the shared SSE reader. A queue that
// overflows gives the stream's observation up (the rest is relayed
// unobserved and recorded as lost); a half-framed stream is never guessed
// at.
type streamObserver struct {
	p *Proxy
	x *exchange

	mu     sync.Mutex
	q      chan []byte
	closed bool
	lost   bool
	why    error // the body's end
	// aborted says the client had gone when the body ended.
	aborted bool
	// fed counts the chunks queued, taken those the reader took; idle
	// says the reader waits for the next chunk, so every event the taken
	// chunks completed has been handed over; finished says run has
	// handed over all it will. changed, when a request waits for them
	// (caughtUp), is closed as idle or finished is set.
	fed, taken     int
	idle, finished bool
	changed        chan struct{}
}

func newStreamObserver(p *Proxy, x *exchange) *streamObserver {
	n := p.QueueChunks
	if n <= 0 {
		n = DefaultQueueChunks
	}
	s := &streamObserver{p: p, x: x, q: make(chan []byte, n)}
	p.streamsMu.Lock()
	p.streams[s] = struct{}{}
	p.streamsMu.Unlock()
	go s.run()
	return s
}

func (s *streamObserver) feed(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.lost {
		return
	}
	select {
	case s.q <- bytes.Clone(b):
		s.fed++
	default:
		s.lost = true
		close(s.q)
		s.closed = true
	}
}

func (s *streamObserver) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.why = err
	// The client's context ends with its exchange: read it now, while
	// the relay is still in it.
	s.aborted = s.x.client.Err() != nil
	if !s.closed {
		s.closed = true
		close(s.q)
	}
}

// chunkReader serves the queued chunks to the SSE reader.
type chunkReader struct {
	s    *streamObserver
	rest []byte
}

func (c *chunkReader) Read(buf []byte) (int, error) {
	if len(c.rest) == 0 {
		b, ok := c.s.next()
		if !ok {
			return 0, io.EOF
		}
		c.rest = b
	}
	n := copy(buf, c.rest)
	c.rest = c.rest[n:]
	return n, nil
}

// next takes the next queued chunk for the SSE reader, which asks only
// once it has handed over every event the chunks before completed: while
// it waits, the stream is observed as far as it was relayed.
func (s *streamObserver) next() ([]byte, bool) {
	s.mu.Lock()
	s.idle = true
	s.signal()
	s.mu.Unlock()
	b, ok := <-s.q
	s.mu.Lock()
	s.idle = false
	if ok {
		s.taken++
	}
	s.mu.Unlock()
	return b, ok
}

// signal wakes the requests waiting in caughtUp; s.mu is held.
func (s *streamObserver) signal() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// queued is how many chunks the relay has queued so far.
func (s *streamObserver) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fed
}

// caughtUp waits until the events of the first fed chunks are handed over
// (or the stream's observation ended), or until giveUp; it reports which.
func (s *streamObserver) caughtUp(fed int, giveUp <-chan time.Time) bool {
	for {
		s.mu.Lock()
		if s.finished || s.idle && s.taken >= fed {
			s.mu.Unlock()
			return true
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-giveUp:
			return false
		}
	}
}

// eventState is the task state an event states, "" for none.
func eventState(m mapping.Moment) string {
	if m.Facts.Name != CaseTask && m.Facts.Name != CaseStatus {
		return ""
	}
	res := gjson.GetBytes(m.Raw, "result")
	return payload(res, m.Facts.Name).Get("status.state").String()
}

func maxOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func (s *streamObserver) run() {
	p, x := s.p, s.x
	defer p.observed.Done()
	rd := sse.NewReader(&chunkReader{s: s}, maxOr(p.MaxEvent, DefaultMaxEvent))
	requested := x.sent
	last := ""
	for {
		ev, err := rd.Next()
		var tooLong *sse.TooLongError
		if errors.As(err, &tooLong) {
			p.stats.Lost.Add(1)
			p.record(shim.Failure{Hook: x.method, Stage: "parse", Bytes: tooLong.Size, Error: "stream event over the bound relayed unobserved"})
			continue
		}
		if err != nil {
			break
		}
		p.stats.Events.Add(1)
		m, ok := p.answer(x, mapping.KindEvent, ev.Data)
		if !ok {
			p.stats.Invalid.Add(1)
			p.record(shim.Failure{Hook: x.method, Stage: "parse", Bytes: len(ev.Data), Error: "stream event is not a JSON-RPC response; relayed unobserved"})
			continue
		}
		if st := eventState(m); st != "" {
			last = st
		}
		ms := []mapping.Moment{m}
		if !requested {
			requested = true
			ms = []mapping.Moment{x.request(), m}
		}
		p.hand(ms)
	}
	s.mu.Lock()
	lost, why, aborted := s.lost, s.why, s.aborted
	s.mu.Unlock()
	var ms []mapping.Moment
	if !requested {
		ms = append(ms, x.request())
	}
	if lost {
		p.stats.Lost.Add(1)
		p.record(shim.Failure{Hook: x.method, Stage: "queue", Lost: 1, Error: "observer queue full: the rest of the stream relayed but not observed"})
	}
	if reason := cut(last, lost, aborted, why); reason != "" && x.task != "" {
		ms = append(ms, mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindEnd, Method: x.method, ID: x.id,
			Session: x.ctx, Run: x.task, Reason: reason}})
	}
	p.hand(ms)
	p.streamsMu.Lock()
	delete(p.streams, s)
	p.streamsMu.Unlock()
	s.mu.Lock()
	s.finished = true
	s.signal()
	s.mu.Unlock()
}

// cut says why a stream ended before its task reached a terminal or an
// interrupted state ("" when it did).
func cut(last string, lost, aborted bool, why error) string {
	switch mapping.A2AState(last) {
	case "completed", "failed", "rejected", "canceled", "input_required", "auth_required":
		return ""
	}
	switch {
	case lost:
		return "observer_lost"
	case aborted || errors.Is(why, httptee.ErrClosed):
		return "client_aborted"
	case why != nil:
		return "upstream_dropped"
	}
	return "upstream_ended"
}
