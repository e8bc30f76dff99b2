package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// The subscribe refusal codes, a closed set (AEP-0003 §6.5).
const (
	codeInvalidFilter = "invalid-filter"
	codeLimitExceeded = "limit-exceeded"
)

// subError is a refused subscription.
type subError struct{ code, detail string }

func (e *subError) Error() string { return e.code + ": " + e.detail }

// request is a subscription as asked, on either binding.
type request struct {
	id      string
	filter  []byte // attr-match JSON; nil: {}
	from    []resume
	all     bool
	capture string // "" : as stored
}

type resume struct {
	Session string `json:"session"`
	Epoch   *int64 `json:"epoch"`
	Seq     *int64 `json:"seq"`
}

// parseFrom reads a from value: the JSON array of {session, epoch, seq},
// or the string "all".
func parseFrom(raw []byte, max int) ([]resume, bool, *subError) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == `"all"` {
		return nil, true, nil
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false, &subError{codeInvalidFilter, `from is an array of {"session","epoch","seq"} positions or the string "all"`}
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false, &subError{codeInvalidFilter, "from is not a JSON array"}
	}
	if len(list) > max {
		return nil, false, &subError{codeLimitExceeded, fmt.Sprintf("from names %d positions; the relay replays at most %d per request (--max-from)", len(list), max)}
	}
	out := make([]resume, 0, len(list))
	for i, m := range list {
		var r resume
		dec := json.NewDecoder(bytes.NewReader(m))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || r.Session == "" || r.Epoch == nil || r.Seq == nil || *r.Epoch < 0 || *r.Seq < -1 {
			return nil, false, &subError{codeInvalidFilter, fmt.Sprintf("from[%d] is not a {\"session\",\"epoch\",\"seq\"} position", i)}
		}
		out = append(out, r)
	}
	return out, false, nil
}

// lastEventID reads an SSE Last-Event-ID, {session}:{epoch}:{seq} (the
// session may itself hold colons).
func lastEventID(s string) (resume, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return resume{}, false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j <= 0 {
		return resume{}, false
	}
	e, err1 := strconv.ParseInt(s[j+1:i], 10, 64)
	q, err2 := strconv.ParseInt(s[i+1:], 10, 64)
	if err1 != nil || err2 != nil || e < 0 || q < 0 {
		return resume{}, false
	}
	return resume{Session: s[:j], Epoch: &e, Seq: &q}, true
}

// subscribe checks a request against c's grant and registers it, queueing
// reply (when set), then the replay, under the hub's lock, so no live
// event falls between the replay and the live tail.
func (s *Server) subscribe(c *conn, req request, reply []byte, end bool) (*sub, *subError) {
	f, ceiling, serr := checkRequest(c.grant, req.filter, req.capture)
	if serr != nil {
		return nil, serr
	}
	sb := &sub{id: req.id, filter: f, ceiling: ceiling}
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[c]; !ok {
		return nil, &subError{codeLimitExceeded, "the connection is closing"}
	}
	if old, _ := c.subByID(req.id); old != nil {
		return nil, &subError{codeInvalidFilter, "subscription id " + quoteID(req.id) + " is in use on this connection"}
	}
	if len(c.subs) >= s.opts.MaxSubs {
		return nil, &subError{codeLimitExceeded, fmt.Sprintf("%d subscriptions are open on this connection (--max-subs)", s.opts.MaxSubs)}
	}
	var steps []step
	switch {
	case req.all:
		for _, ev := range h.bufs.All() {
			steps = append(steps, step{ev: ev})
		}
	default:
		for _, r := range req.from {
			evs, ex := h.bufs.Since(r.Session, event.Pos{Epoch: *r.Epoch, Seq: *r.Seq})
			for i := range ex {
				steps = append(steps, step{mark: &ex[i]})
			}
			for _, ev := range evs {
				steps = append(steps, step{ev: ev})
			}
		}
	}
	if reply != nil && !c.push(item{frame: reply}) {
		return nil, &subError{codeLimitExceeded, "the connection is not reading"}
	}
	if len(steps) > 0 || end {
		if !c.push(item{replay: steps, sub: sb, end: end}) {
			return nil, &subError{codeLimitExceeded, "the connection is not reading"}
		}
	}
	if !end {
		c.subs = append(c.subs, sb)
	}
	return sb, nil
}

// unsubscribe removes the subscription id, queueing reply.
func (s *Server) unsubscribe(c *conn, id string, reply []byte) bool {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	sb, i := c.subByID(id)
	if sb != nil {
		c.subs = append(c.subs[:i:i], c.subs[i+1:]...)
	}
	c.push(item{frame: reply, forget: sb})
	return sb != nil
}
