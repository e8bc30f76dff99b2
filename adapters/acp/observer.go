package acp

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// maxPending bounds the unanswered requests remembered per direction; the
// oldest is forgotten first (its response then rides the fallback plane).
const maxPending = 4096

// pending is a request awaiting its response.
type pending struct {
	method, session string
}

// joiner remembers each direction's open requests by JSON-RPC id, so a
// response (which carries neither method nor session) can be wrapped with
// the request's. It is used by the one observer goroutine only.
type joiner struct {
	open  [2]map[string]pending
	order [2][]string // insertion order, for bounding
}

func newJoiner() *joiner {
	return &joiner{open: [2]map[string]pending{{}, {}}}
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

// Message is one observed JSON-RPC message, classified and joined.
type Message struct {
	Dir     Direction
	Kind    string // request, response or notification
	Method  string // for a response, the joined request's method ("" if unmatched)
	ID      []byte // the raw JSON-RPC id, nil for notifications
	Session string // params.sessionId, or the joined request's
}

// classify reads the JSON-RPC shape of line and joins a response to its
// request. line must be valid JSON.
func (j *joiner) classify(d Direction, line []byte) (Message, error) {
	r := gjson.GetManyBytes(line, "method", "id", "params.sessionId", "result", "error")
	if !gjson.ParseBytes(line).IsObject() {
		return Message{}, fmt.Errorf("JSON-RPC message is not an object")
	}
	msg := Message{Dir: d, Method: r[0].String(), Session: r[2].String()}
	hasID := r[1].Exists() && r[1].Type != gjson.Null
	if hasID {
		msg.ID = []byte(r[1].Raw)
	}
	switch {
	case r[0].Exists() && hasID:
		msg.Kind = "request"
		j.remember(d, r[1].Raw, pending{method: msg.Method, session: msg.Session})
	case r[0].Exists():
		msg.Kind = "notification"
	case hasID && (r[3].Exists() || r[4].Exists()):
		msg.Kind = "response"
		if p, ok := j.answer(d, r[1].Raw); ok {
			msg.Method, msg.Session = p.method, p.session
		}
	default:
		return Message{}, fmt.Errorf("not a JSON-RPC request, response or notification")
	}
	return msg, nil
}

// Wrap builds the ACP table's moment input for msg: the kind, method, id,
// session and tee token beside the message's params, result or error, which
// are copied as they are (never re-encoded).
func Wrap(msg Message, tee string, line []byte) []byte {
	r := gjson.GetManyBytes(line, "params", "result", "error")
	n := 96 + len(msg.Method) + len(msg.Session) + len(tee) + len(msg.ID)
	for _, x := range r {
		n += len(x.Raw) + 12
	}
	b := make([]byte, 0, n)
	b = append(b, `{"kind":`...)
	b = appendString(b, msg.Kind)
	if msg.Method != "" {
		b = append(b, `,"method":`...)
		b = appendString(b, msg.Method)
	}
	if msg.ID != nil {
		b = append(b, `,"id":`...)
		b = append(b, msg.ID...)
	}
	if msg.Session != "" {
		b = append(b, `,"sessionId":`...)
		b = appendString(b, msg.Session)
	}
	if tee != "" {
		b = append(b, `,"tee":`...)
		b = appendString(b, tee)
	}
	for i, name := range []string{"params", "result", "error"} {
		if r[i].Exists() {
			b = append(b, `,"`...)
			b = append(b, name...)
			b = append(b, `":`...)
			b = append(b, r[i].Raw...)
		}
	}
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, q...)
}

// Handler receives each observed message as a moment of the ACP table. It
// is called from one goroutine, in wire order per direction.
type Handler func(mapping.Moment) error

// observer consumes the queue: it validates, classifies, joins and wraps
// each line and hands the moment to the handler, recording failures
// without content.
type observer struct {
	q       *queue
	join    *joiner
	handle  Handler
	errs    Recorder
	stats   *Stats
	tee     string
	deltas  bool
	nonce   func() string
	maxLine int
}

// Recorder keeps internal failures (shim.ErrorLog satisfies it).
type Recorder interface {
	Record(shim.Failure) bool
}

func (o *observer) record(f shim.Failure) {
	f.Adapter = "acp"
	if o.errs != nil {
		o.errs.Record(f)
	}
}

// observe handles one queued item.
func (o *observer) observe(it item) {
	if it.line == nil {
		o.record(shim.Failure{Hook: it.dir.String(), Stage: "parse", Bytes: it.tooLong,
			Error: fmt.Sprintf("line over %d bytes passed through unobserved", o.maxLine)})
		return
	}
	if !gjson.ValidBytes(it.line) {
		o.stats.Invalid.Add(1)
		o.record(shim.Failure{Hook: it.dir.String(), Stage: "parse", Bytes: len(it.line),
			Error: "line is not JSON; passed through unobserved"})
		return
	}
	msg, err := o.join.classify(it.dir, it.line)
	if err != nil {
		o.stats.Invalid.Add(1)
		o.record(shim.Failure{Hook: it.dir.String(), Stage: "parse", Bytes: len(it.line), Error: err.Error()})
		return
	}
	if o.handle == nil {
		return
	}
	m := mapping.Moment{Raw: Wrap(msg, o.tee, it.line), Nonce: o.nonce(), Deltas: o.deltas}
	o.stats.Observed.Add(1)
	if err := o.handle(m); err != nil {
		o.stats.Failed.Add(1)
		o.record(shim.Failure{Hook: msg.Kind + ":" + msg.Method, Stage: "emit", Bytes: len(it.line), Error: err.Error()})
	}
}
