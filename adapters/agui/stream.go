package agui

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/sse"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// event is one queued observation: an event's data, or a too-long marker.
type event struct {
	data    []byte
	tooLong int
}

// stream observes one event-stream response.
type stream struct {
	p      *Proxy
	parser *sse.Reader // fed the body as it is relayed
	q      chan event
	done   chan struct{} // closed when the body ends
	end    string        // how it ended (set before done is closed)
	scope  scope
	drops  int // events of this stream the full queue dropped
	// lostEnd says the full queue dropped a RUN_FINISHED or RUN_ERROR; open
	// says the observer saw RUN_STARTED and no terminal after it.
	lostEnd bool
	open    bool
	// prev is the thread's stream before this one; observed is closed
	// when this one's observation is over.
	prev     *stream
	observed chan struct{}
}

// How a stream's body ended: the Reason of the KindEnd moment that closes
// a run the stream left open.
const (
	endUpstreamEnded   = "upstream_ended"   // EOF with the run still open
	endUpstreamDropped = "upstream_dropped" // the upstream connection failed
	endClientAborted   = "client_aborted"   // the UI went away
)

func newStream(p *Proxy, sc scope) *stream {
	n := p.QueueEvents
	if n <= 0 {
		n = DefaultQueueEvents
	}
	max := p.MaxEvent
	if max <= 0 {
		max = DefaultMaxEvent
	}
	s := &stream{p: p, q: make(chan event, n), done: make(chan struct{}), observed: make(chan struct{}), scope: sc}
	s.parser = sse.NewReader(nil, max)
	return s
}

// feed frames the next relayed bytes of the body.
func (s *stream) feed(b []byte) { s.parser.Feed(b, s.framed) }

// framed takes one event the parser completed: its data (events without
// data carry nothing to observe), or the size of one over the bound.
func (s *stream) framed(ev sse.Event, err error) {
	var tl *sse.TooLongError
	switch {
	case errors.As(err, &tl):
		s.offer(nil, tl.Size)
	case err == nil && len(ev.Data) > 0:
		s.offer(ev.Data, 0)
	}
}

// offer queues an event without blocking; a full queue drops and counts.
func (s *stream) offer(data []byte, tooLong int) {
	s.p.stats.Events.Add(1)
	if tooLong > 0 {
		s.p.stats.TooLong.Add(1)
	}
	select {
	case s.q <- event{data: data, tooLong: tooLong}:
	default:
		s.drops++ // only the body's reader calls offer
		s.p.stats.Dropped.Add(1)
		if t := mapping.Str(data, "type"); t == "RUN_FINISHED" || t == "RUN_ERROR" {
			s.lostEnd = true
		}
	}
}

// maxBatch bounds the events handed to the handler at once.
const maxBatch = 256

// run observes queued events until the body ends, then what is queued.
// A thread's runs follow one another (the UI reads a run to its end before
// it resumes it or starts the next), but their observers run side by
// side: a stream whose predecessor on the thread has ended waits for its
// observation first, so the table sees the thread's events in order.
func (s *stream) run() {
	defer close(s.observed)
	if prev := s.prev; prev != nil {
		s.prev = nil
		select {
		case <-prev.done:
			<-prev.observed
		default:
		}
	}
	for {
		select {
		case ev := <-s.q:
			s.take(ev)
		case <-s.done:
			for {
				select {
				case ev := <-s.q:
					s.take(ev)
				default:
					if s.drops > 0 {
						s.record(shim.Failure{Stage: "queue", Lost: s.drops,
							Error: fmt.Sprintf("observer queue full: %d events relayed but not observed", s.drops)})
					}
					s.close()
					return
				}
			}
		}
	}
}

func (s *stream) record(f shim.Failure) { s.p.record(f) }

// take observes first and whatever else is already queued (up to
// maxBatch) as one batch, in stream order.
func (s *stream) take(first event) {
	var ms []mapping.Moment
	add := func(ev event) {
		if m, ok := s.moment(ev); ok {
			ms = append(ms, m)
		}
	}
	add(first)
gather:
	for n := 1; n < maxBatch; n++ {
		select {
		case ev := <-s.q:
			add(ev)
		default:
			break gather
		}
	}
	if s.p.Handle == nil || len(ms) == 0 {
		return
	}
	for i := range ms {
		ms[i].Nonce = s.p.Nonce()
	}
	s.p.stats.Observed.Add(int64(len(ms)))
	s.p.Handle.Deliver(ms, func(m mapping.Moment, err error) {
		s.p.stats.Failed.Add(1)
		s.record(shim.Failure{Hook: m.Facts.Name, Stage: "emit", Bytes: len(m.Raw), Error: err.Error()})
	})
}

// moment validates one event and gives it the stream's facts; RUN_STARTED
// sets the stream's thread and run for the events after it.
func (s *stream) moment(ev event) (mapping.Moment, bool) {
	if ev.data == nil {
		s.record(shim.Failure{Stage: "parse", Bytes: ev.tooLong, Error: "event over the bound relayed unobserved"})
		return mapping.Moment{}, false
	}
	if !gjson.ValidBytes(ev.data) || !gjson.ParseBytes(ev.data).IsObject() {
		s.p.stats.Invalid.Add(1)
		s.record(shim.Failure{Stage: "parse", Bytes: len(ev.data), Error: "event data is not a JSON object; relayed unobserved"})
		return mapping.Moment{}, false
	}
	f := eventFacts(ev.data, s.scope)
	switch f.Name {
	case "RUN_STARTED":
		if t := mapping.Str(ev.data, "threadId"); t != "" {
			s.scope.thread = t
		}
		if r := mapping.Str(ev.data, "runId"); r != "" {
			s.scope.run = r
		}
		s.open = true
	case "RUN_FINISHED", "RUN_ERROR":
		s.open = false
	}
	return mapping.Moment{Raw: ev.data, Facts: f, Deltas: s.p.Deltas}, true
}

// close ends a run the stream left open (it ended after RUN_STARTED with
// no terminal): the table closes it by the end's reason, and doctor shows
// it.
func (s *stream) close() {
	if !s.open || s.lostEnd {
		return
	}
	s.open = false
	s.record(shim.Failure{Hook: "RUN_STARTED", Stage: "interrupted",
		Error: fmt.Sprintf("a run's stream ended without RUN_FINISHED or RUN_ERROR (%s); the tee closed the run", s.end)})
	if s.p.Handle == nil {
		return
	}
	m := mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindEnd, Thread: s.scope.thread, Run: s.scope.run,
		Instance: s.scope.stream, Reason: s.end},
		Nonce: s.p.Nonce(), Deltas: s.p.Deltas}
	s.p.stats.Observed.Add(1)
	rs, err := s.p.Handle([]mapping.Moment{m})
	if err == nil && len(rs) > 0 {
		err = rs[0].Err
	}
	if err != nil {
		s.p.stats.Failed.Add(1)
		s.record(shim.Failure{Hook: "end", Stage: "emit", Error: err.Error()})
	}
}

// eventFacts are an event's facts: its type, and its own threadId and runId
// where it has the members, else the stream's (most events carry neither).
func eventFacts(ev []byte, sc scope) mapping.Facts {
	r := gjson.GetManyBytes(ev, "type", "threadId", "runId")
	f := mapping.Facts{Kind: mapping.KindEvent, Name: mapping.StrOf(r[0]), Thread: sc.thread, Run: sc.run, Instance: sc.stream}
	if r[1].Exists() {
		f.Thread = mapping.StrOf(r[1])
	}
	if r[2].Exists() {
		f.Run = mapping.StrOf(r[2])
	}
	return f
}

// Decode turns one JSON line of `aep-hook map` input for the AG-UI table
// (one event, as the pins give it) into its moment, as the tee would hand
// it over on a stream whose identity is not known yet: the event's own
// type, threadId and runId are the facts.
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) || !gjson.ParseBytes(line).IsObject() {
		return nil, fmt.Errorf("agui: event is not a JSON object")
	}
	return []mapping.Moment{{Raw: line, Facts: eventFacts(line, scope{})}}, nil
}
