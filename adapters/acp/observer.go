package acp

import (
	"fmt"

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
// valid JSON.
func (j *joiner) classify(d Direction, line []byte) (mapping.Facts, error) {
	r := gjson.GetManyBytes(line, "method", "id", "params.sessionId", "result", "error")
	if !gjson.ParseBytes(line).IsObject() {
		return mapping.Facts{}, fmt.Errorf("JSON-RPC message is not an object")
	}
	f := mapping.Facts{Direction: d.fact(), Method: r[0].String(), Session: r[2].String()}
	hasID := r[1].Exists() && r[1].Type != gjson.Null
	if hasID {
		f.ID = r[1].String()
	}
	switch {
	case r[0].Exists() && hasID:
		f.Kind = mapping.KindRequest
		j.remember(d, r[1].Raw, pending{method: f.Method, session: f.Session, id: f.ID})
	case r[0].Exists():
		f.Kind = mapping.KindNotification
	case hasID && (r[3].Exists() || r[4].Exists()):
		f.Kind = mapping.KindResponse
		if p, ok := j.answer(d, r[1].Raw); ok {
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
		f := mapping.Facts{Kind: k, Method: str(r[1]), Session: str(r[3]), Instance: str(r[5]), Reason: str(r[6])}
		if f.Session == "" {
			f.Session = str(r[4])
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

// str is a JSON string's content, "" for anything else.
func str(r gjson.Result) string {
	if r.Type != gjson.String {
		return ""
	}
	return r.Str
}

// observer consumes the queue: it validates, classifies and joins each line
// and hands the moments to the handler a batch at a time, recording
// failures without content.
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

	conn  connection       // what the connection stated so far
	batch []item           // the items being observed
	ms    []mapping.Moment // their moments
}

// maxBatch bounds the messages handed to the handler at once.
const maxBatch = 256

func (o *observer) record(f shim.Failure) {
	f.Adapter = "acp"
	if o.errs != nil {
		o.errs.Record(f)
	}
}

// take observes first and whatever else is already queued (up to maxBatch)
// as one batch. The items' bytes stay counted against the queue's bound
// until the batch is done.
func (o *observer) take(first item) {
	o.batch = append(o.batch[:0], first)
gather:
	for len(o.batch) < maxBatch {
		select {
		case it := <-o.q.ch:
			o.batch = append(o.batch, it)
		default:
			break gather
		}
	}
	o.observe(o.batch)
	for i := range o.batch {
		o.q.taken(o.batch[i])
		o.batch[i] = item{}
	}
}

// observe turns a batch of queued items into moments and hands them over.
func (o *observer) observe(items []item) {
	o.ms = o.ms[:0]
	for _, it := range items {
		if f, ok := o.facts(it); ok {
			o.ms = append(o.ms, mapping.Moment{Raw: it.line, Facts: f, Deltas: o.deltas})
		}
	}
	o.hand(o.conn.admit(o.ms))
	clear(o.ms) // the lines belong to the relay's buffers
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
	results, err := o.handle(ms)
	for i, m := range ms {
		ferr := err
		if i < len(results) {
			ferr = results[i].Err
		}
		if ferr != nil {
			o.stats.Failed.Add(1)
			o.record(shim.Failure{Hook: m.Facts.Kind.String() + ":" + m.Facts.Method, Stage: "emit",
				Bytes: len(m.Raw), Error: ferr.Error()})
		}
	}
}

// facts validates and classifies one queued item.
func (o *observer) facts(it item) (mapping.Facts, bool) {
	if it.line == nil {
		o.record(shim.Failure{Hook: it.dir.String(), Stage: "parse", Bytes: it.tooLong,
			Error: fmt.Sprintf("line over %d bytes passed through unobserved", o.maxLine)})
		return mapping.Facts{}, false
	}
	if !gjson.ValidBytes(it.line) {
		o.stats.Invalid.Add(1)
		o.record(shim.Failure{Hook: it.dir.String(), Stage: "parse", Bytes: len(it.line),
			Error: "line is not JSON; passed through unobserved"})
		return mapping.Facts{}, false
	}
	f, err := o.join.classify(it.dir, it.line)
	if err != nil {
		o.stats.Invalid.Add(1)
		o.record(shim.Failure{Hook: it.dir.String(), Stage: "parse", Bytes: len(it.line), Error: err.Error()})
		return mapping.Facts{}, false
	}
	f.Instance = o.tee
	return f, true
}
