package agui

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"

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
	parser *sseParser
	q      chan event
	done   chan struct{} // closed when the body ends
	scope  scope
	drops  int // events of this stream the full queue dropped
}

func newStream(p *Proxy, sc scope) *stream {
	n := p.QueueEvents
	if n <= 0 {
		n = DefaultQueueEvents
	}
	max := p.MaxEvent
	if max <= 0 {
		max = DefaultMaxEvent
	}
	s := &stream{p: p, q: make(chan event, n), done: make(chan struct{}), scope: sc}
	s.parser = &sseParser{max: max, emit: s.offer}
	return s
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
	}
}

// run observes queued events until the body ends, then what is queued.
func (s *stream) run() {
	for {
		select {
		case ev := <-s.q:
			s.handle(ev)
		case <-s.done:
			for {
				select {
				case ev := <-s.q:
					s.handle(ev)
				default:
					if s.drops > 0 {
						s.record(shim.Failure{Stage: "queue", Lost: s.drops,
							Error: fmt.Sprintf("observer queue full: %d events relayed but not observed", s.drops)})
					}
					return
				}
			}
		}
	}
}

func (s *stream) record(f shim.Failure) {
	f.Adapter = "agui"
	if s.p.Errors != nil {
		s.p.Errors.Record(f)
	}
}

// handle validates one event, scopes it to the stream and maps it.
func (s *stream) handle(ev event) {
	if ev.data == nil {
		s.record(shim.Failure{Stage: "parse", Bytes: ev.tooLong, Error: "event over the bound relayed unobserved"})
		return
	}
	if !gjson.ValidBytes(ev.data) || !gjson.ParseBytes(ev.data).IsObject() {
		s.p.stats.Invalid.Add(1)
		s.record(shim.Failure{Stage: "parse", Bytes: len(ev.data), Error: "event data is not a JSON object; relayed unobserved"})
		return
	}
	if str(ev.data, "type") == "RUN_STARTED" {
		if t := str(ev.data, "threadId"); t != "" {
			s.scope.thread = t
		}
		if r := str(ev.data, "runId"); r != "" {
			s.scope.run = r
		}
	}
	if s.p.Handle == nil {
		return
	}
	raw := Scope(ev.data, s.scope.thread, s.scope.run)
	s.p.stats.Observed.Add(1)
	m := mapping.Moment{Raw: raw, Nonce: s.p.Nonce(), Deltas: s.p.Deltas}
	if err := s.p.Handle(m); err != nil {
		s.p.stats.Failed.Add(1)
		s.record(shim.Failure{Hook: str(ev.data, "type"), Stage: "emit", Bytes: len(ev.data), Error: err.Error()})
	}
}

// Scope returns the event object with threadId and runId added where it
// lacks them (and they are known), so the mapping table reads the stream's
// identity from every event. The event's own members stay as they are.
func Scope(ev []byte, thread, run string) []byte {
	var add []byte
	for _, kv := range [2][2]string{{"threadId", thread}, {"runId", run}} {
		if kv[1] == "" || gjson.GetBytes(ev, kv[0]).Exists() {
			continue
		}
		k, _ := json.Marshal(kv[0])
		v, _ := json.Marshal(kv[1])
		add = append(append(append(add, k...), ':'), v...)
		add = append(add, ',')
	}
	if add == nil {
		return ev
	}
	body := bytes.TrimSpace(ev)
	rest := bytes.TrimSpace(body[1:])
	out := make([]byte, 0, len(body)+len(add)+1)
	out = append(out, '{')
	if len(rest) > 0 && rest[0] == '}' {
		add = add[:len(add)-1]
	}
	out = append(out, add...)
	return append(out, rest...)
}

// str returns the string at path in raw, "" when absent.
func str(raw []byte, path string) string {
	r := gjson.GetBytes(raw, path)
	if r.Type != gjson.String {
		return ""
	}
	return r.Str
}
