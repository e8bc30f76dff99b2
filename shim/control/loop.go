package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// The command types a held request's loop knows.
const (
	Respond = "control.attention.respond"
	Cancel  = "control.cancel"
)

// Request is one held request the loop may answer: the attention.requested
// the table raised for a held moment, its Hold, and how the vendor is
// handed its reply.
type Request struct {
	// ID is the attention.requested event's id: a command's subject.
	ID      string
	Session string
	Hold    *mapping.Hold
	// Deliver hands the vendor an applied answer's reply (a hook keeps it
	// for its stdout; a stream bridge sends it to the server); an error
	// refuses the command.
	Deliver func(reply []byte) error

	done   bool
	Answer mapping.Answer // the answer applied, once done by an answer
	By     string         // who answered: the command's agent
	// Lost, once done without an answer, says why (the relay refused the
	// request event).
	Lost error
}

// Done reports whether the request is settled over the loop.
func (r *Request) Done() bool { return r.done }

// Command is a control event as the loop reads it.
type Command struct {
	Raw     []byte
	ID      string `json:"id"`
	Type    string `json:"type"`
	Source  string `json:"source"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Run     string `json:"run"`
	Subject string `json:"subject"`
	Data    struct {
		Answer *mapping.Answer `json:"answer"`
		Scope  string          `json:"scope"`
		Reason string          `json:"reason"`
	} `json:"data"`
}

// Handler takes a command of a type other than control.attention.respond
// (control.cancel on the stream bridges) and says whether it is carried
// out: a non-empty reason refuses it (control.rejected{reason, detail}),
// else it is accepted and drafts, built on the session's table state, are
// its recorded outcome besides the ack.
type Handler func(c Command, st *mapping.State) (drafts []mapping.Draft, reason, detail string)

// Loop answers held requests over one Link (AEP-0004 §2-§3): commands are
// deduplicated on (source, id), each gets exactly one acknowledgement,
// recorded and re-sent byte-identically when the command comes again, and
// an answer's outcome (attention.answered via control, then
// attention.resolved) is written to the session's log and sent to the
// relay. Every event goes through the emitter: the loop never builds an
// envelope.
type Loop struct {
	Link    *Link
	Emitter *shim.Emitter
	Vendor  mapping.Vendor
	// Accepts is what the connection declared (its hello): commands of any
	// other type are refused unsupported.
	Accepts []string
	// Handlers take the other accepted command types.
	Handlers map[string]Handler
	// Failed records an internal failure (never content).
	Failed func(stage string, err error)
	// Nonce mints a moment nonce for the loop's events.
	Nonce func() string
	// Sessions, when set, reports a session this target speaks for even
	// with no request held in it (a stream bridge follows whole sessions):
	// a command for it is decided (a cancel carried out, an answer to no
	// held request refused) rather than ignored.
	Sessions func(session string) bool

	mu   sync.Mutex
	reqs map[string]*Request
	acks map[[2]string][]byte
	// order is the acks' keys, oldest first, for the bound.
	order [][2]string
}

// maxAcks bounds the acknowledgements a long-lived loop keeps for
// redeliveries: a sender retries within its window, long before this many
// later commands.
const maxAcks = 4096

// link is the connection the loop serves now.
func (l *Loop) link() *Link {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Link
}

// Attach makes link the connection the loop answers on: a long-lived
// target that reconnects keeps its requests and recorded acks across
// connections, so a command redelivered on the new one gets its ack again.
func (l *Loop) Attach(link *Link) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Link = link
}

// Forget drops the request id: it settled by other means (the agent's own
// UI answered it, its turn ended), and a later command for it is refused
// as naming no held request.
func (l *Loop) Forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.reqs, id)
}

// Held reports whether the loop still holds request id.
func (l *Loop) Held(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reqs[id]
	return r != nil && !r.done
}

// Offer registers r and sends its request event (line, as the log holds
// it) to the relay, which claims r's session for this connection.
func (l *Loop) Offer(r *Request, line []byte) error {
	l.mu.Lock()
	if l.reqs == nil {
		l.reqs = map[string]*Request{}
	}
	l.reqs[r.ID] = r
	link := l.Link
	l.mu.Unlock()
	if link == nil {
		return errors.New("no relay connection")
	}
	return link.Send(line)
}

// Serve reads and answers the relay's messages until done reports true,
// ctx ends, or the connection fails (returned). Messages are handled one
// at a time, in order.
func (l *Loop) Serve(ctx context.Context, done func() bool) error {
	link := l.link()
	stop := context.AfterFunc(ctx, func() { link.Deadline(time.Now()) })
	defer stop()
	for !done() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m, err := link.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		switch {
		case m.Event && strings.HasPrefix(m.Type, "control."):
			l.command(m.Raw)
		case m.Type == "error" && m.Cause != "":
			l.refused(m)
		case m.Type == "closing":
			return errors.New("the relay is closing the connection")
		}
	}
	return nil
}

// refused settles a request the relay would not take (an error frame
// naming its event): nothing can answer it over this connection.
func (l *Loop) refused(m Msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.reqs[m.Cause]; r != nil && !r.done {
		r.done, r.Lost = true, fmt.Errorf("the relay refused the request: %s (%s)", m.Code, m.Detail)
	}
}

// command handles one command: a redelivery gets its recorded ack again;
// anything else exactly one decision, recorded with the command itself in
// the session's log.
func (l *Loop) command(raw []byte) {
	var c Command
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" || c.Source == "" {
		l.fail("command", errors.New("a control event without id or source"))
		return
	}
	c.Raw = raw
	key := [2]string{c.Source, c.ID}
	l.mu.Lock()
	if ack, ok := l.acks[key]; ok {
		l.mu.Unlock()
		l.send(ack)
		return
	}
	r := l.reqs[c.Subject]
	session := c.Session
	if r == nil {
		for _, x := range l.reqs {
			if x.Session == c.Session {
				r = x
				break
			}
		}
		switch {
		case r != nil:
			session = r.Session
		case l.Sessions != nil && l.Sessions(c.Session):
		default:
			l.mu.Unlock()
			l.fail("command", fmt.Errorf("a command for session %q, which this connection holds nothing of", clip(c.Session)))
			return
		}
		r = nil
	}
	l.mu.Unlock()
	switch {
	case !slices.Contains(l.Accepts, c.Type):
		l.reject(key, c, session, "", "unsupported", "this target accepts "+strings.Join(l.Accepts, ", "))
	case c.Type == Respond:
		l.respond(key, c, session, r)
	default:
		h := l.Handlers[c.Type]
		if h == nil {
			l.reject(key, c, session, "", "unsupported", "this target carries out no "+c.Type)
			return
		}
		l.record(key, c, session, func(st *mapping.State) []mapping.Draft {
			ds, why, detail := h(c, st)
			if why != "" {
				return []mapping.Draft{mapping.AckDraft(st, "", c.ID, why, detail)}
			}
			return append([]mapping.Draft{mapping.AckDraft(st, "", c.ID, "", "")}, ds...)
		})
	}
}

// respond applies an answer to the request it names, or refuses it: an
// answer that does not fit stays a refusal (invalid) and the request
// stays pending for a better one.
func (l *Loop) respond(key [2]string, c Command, session string, r *Request) {
	if r == nil {
		l.reject(key, c, session, "", "invalid", "no request "+clip(c.Subject)+" is held here (answered, expired or never asked)")
		return
	}
	l.mu.Lock()
	done := r.done
	l.mu.Unlock()
	if done {
		l.reject(key, c, session, r.Hold.Key, "invalid", "request "+clip(r.ID)+" is already settled")
		return
	}
	if c.Data.Answer == nil {
		l.reject(key, c, session, r.Hold.Key, "invalid", "the command carries no answer")
		return
	}
	a, err := r.Hold.Resolve(*c.Data.Answer)
	if err != nil {
		l.reject(key, c, session, r.Hold.Key, "invalid", err.Error())
		return
	}
	// The reply is handed over under the session's lock, with the request
	// seen still pending in the table's state: an answer the agent's own
	// UI gave first (a stream bridge maps the vendor's report of it in
	// the same session) settles the request, and the command is refused,
	// never applied on top of it.
	l.record(key, c, session, func(st *mapping.State) []mapping.Draft {
		k := r.Hold.Key
		if k != "" && !mapping.Pending(st, k) {
			l.settle(r, mapping.Answer{}, "")
			return []mapping.Draft{mapping.AckDraft(st, k, c.ID, "invalid", "request "+clip(r.ID)+" is already settled")}
		}
		reply, err := r.Hold.Reply(a)
		if err == nil {
			err = r.Deliver(reply)
		}
		if err != nil {
			return []mapping.Draft{mapping.AckDraft(st, k, c.ID, "refused", err.Error())}
		}
		l.settle(r, a, c.Agent)
		if r.Hold.Observed {
			return r.Hold.NoteDrafts(st, a, c.Agent, c.ID)
		}
		return r.Hold.OutcomeDrafts(st, a, c.Agent, c.ID)
	})
}

// settle marks r done, answered by by with a ("" when it settled
// otherwise).
func (l *Loop) settle(r *Request, a mapping.Answer, by string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.done, r.Answer, r.By = true, a, by
}

// reject records and sends control.rejected{reason, detail} for c.
func (l *Loop) reject(key [2]string, c Command, session, reqKey, reason, detail string) {
	l.record(key, c, session, func(st *mapping.State) []mapping.Draft {
		return []mapping.Draft{mapping.AckDraft(st, reqKey, c.ID, reason, detail)}
	})
}

// record writes the command and the drafts fn makes (its ack first) to
// the session's log, sends the events to the relay and keeps the ack for
// redeliveries.
func (l *Loop) record(key [2]string, c Command, session string, fn func(st *mapping.State) []mapping.Draft) {
	res, err := l.Emitter.Apply(l.Vendor, session, l.Nonce(), [][]byte{c.Raw}, fn)
	if err != nil {
		l.fail("emit", err)
	}
	for i := range res.Events {
		line, err := res.Events[i].MarshalLine()
		if err != nil {
			l.fail("encode", err)
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if i == 0 {
			l.keep(key, line)
		}
		l.send(line)
	}
}

// keep records the ack of command key, within maxAcks.
func (l *Loop) keep(key [2]string, ack []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acks == nil {
		l.acks = map[[2]string][]byte{}
	}
	if _, ok := l.acks[key]; !ok {
		l.order = append(l.order, key)
	}
	l.acks[key] = ack
	for len(l.order) > maxAcks {
		delete(l.acks, l.order[0])
		l.order = l.order[1:]
	}
}

// Send sends one event line to the relay, when connected.
func (l *Loop) Send(line []byte) error {
	link := l.link()
	if link == nil {
		return errors.New("no relay connection")
	}
	return link.Send(line)
}

func (l *Loop) send(line []byte) {
	if err := l.Send(line); err != nil {
		l.fail("send", err)
	}
}

func (l *Loop) fail(stage string, err error) {
	if l.Failed != nil {
		l.Failed(stage, err)
	}
}

// clip bounds an identifier quoted in a detail.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
