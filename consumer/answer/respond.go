package answer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/shim"
)

// Answer is a human's answer: an option, text, or a form's values
// (AEP-0004 §5 control.attention.respond).
type Answer struct {
	Option string         `json:"option,omitempty"`
	Text   string         `json:"text,omitempty"`
	Values map[string]any `json:"values,omitempty"`
}

// The ways a command settles (Outcome.Ack).
const (
	Accepted = "accepted" // control.accepted
	Rejected = "rejected" // control.rejected: Reason and Detail say why
	Refused  = "refused"  // the relay refused it on the target's behalf (an error frame): Reason is its code
	Timeout  = "timeout"  // silence past the window (AEP-0004 §3, synthesized here, never sent)
)

// Outcome is how one command settled, and what the target recorded.
type Outcome struct {
	Command string `json:"command"` // the command's id (the same on every retry)
	Ack     string `json:"ack"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Sent    int    `json:"sent"` // deliveries of the command (1 + retries)
	// Answered and Resolved are the target's outcome events, as the relay
	// delivered them (nil when they did not arrive in time).
	Answered json.RawMessage `json:"answered,omitempty"`
	Resolved json.RawMessage `json:"resolved,omitempty"`
}

// retries is how many times an unacknowledged command is sent again, with
// the same id, within the window.
const retries = 2

// Respond answers r and waits for the outcome: the ack within the window
// (the same command re-sent, byte-identical, while none arrives), then,
// once accepted, the attention.answered and attention.resolved that
// settle r. A relay-behalf refusal, a rejection and a timeout are
// outcomes, not errors; the error is the connection's.
func (cn *Conn) Respond(ctx context.Context, r Request, a Answer) (Outcome, error) {
	cmd, id, err := cn.command(r, a)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Command: id}
	// The inbox opens before the subscription is asked for: its answer,
	// and everything after, is this call's to see.
	box := cn.listen()
	defer cn.forget(box)
	sub := cn.subID("answer")
	if err := cn.write(ctx, map[string]any{"type": "subscribe", "id": sub,
		"filter": map[string]any{"source": []string{r.Source}, "type": []string{"control.*", "attention.*"}}}); err != nil {
		return out, err
	}
	defer cn.write(context.Background(), map[string]any{"type": "unsubscribe", "id": sub})
	if err := cn.await(ctx, box, func(m msg) (bool, error) {
		if m.Type == "subscribed" && m.ID == sub {
			return true, nil
		}
		if m.Type == "error" && m.ID == sub {
			return true, fmt.Errorf("the relay refused the subscription: %s (%s)", m.Code, m.Detail)
		}
		return false, nil
	}); err != nil {
		return out, err
	}
	window := cn.c.window()
	deadline := time.Now().Add(window)
	var answered, resolved json.RawMessage
	outcome := func(m msg) {
		if m.Subject != r.ID {
			return
		}
		switch m.Type {
		case "attention.answered":
			answered = m.Raw
		case "attention.resolved", "attention.timeout":
			resolved = m.Raw
		}
	}
	for out.Ack == "" {
		if err := cn.ws.Write(ctx, websocket.MessageText, cmd); err != nil {
			return out, err
		}
		out.Sent++
		wait := window / (retries + 1)
		if out.Sent > retries {
			wait = time.Until(deadline)
		}
		wctx, cancel := context.WithTimeout(ctx, max(wait, 0))
		err := cn.await(wctx, box, func(m msg) (bool, error) {
			outcome(m)
			switch {
			case m.Type == "error" && m.Cause == id:
				out.Ack, out.Reason, out.Detail = Refused, m.Code, m.Detail
			case (m.Type == "control.accepted" || m.Type == "control.rejected") && causeOf(m.Raw) == id:
				out.Ack = strings.TrimPrefix(m.Type, "control.")
				if out.Ack == Rejected {
					var d struct {
						Reason string `json:"reason"`
						Detail string `json:"detail"`
					}
					json.Unmarshal(m.Data, &d)
					out.Reason, out.Detail = d.Reason, d.Detail
				}
			default:
				return false, nil
			}
			return true, nil
		})
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return out, err
		}
		if out.Ack == "" && out.Sent > retries {
			out.Ack = Timeout
		}
	}
	if out.Ack != Accepted {
		return out, nil
	}
	octx, cancel := context.WithTimeout(ctx, cn.c.outcomeWait())
	defer cancel()
	err = cn.await(octx, box, func(m msg) (bool, error) {
		outcome(m)
		return answered != nil && resolved != nil, nil
	})
	out.Answered, out.Resolved = answered, resolved
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return out, err
	}
	return out, nil
}

func (c *Client) outcomeWait() time.Duration {
	if c.Outcome > 0 {
		return c.Outcome
	}
	return DefaultOutcome
}

// await reads box's messages until done says so (or fails) or ctx ends.
func (cn *Conn) await(ctx context.Context, box *inbox, done func(m msg) (bool, error)) error {
	for {
		m, err := cn.next(ctx, box)
		if err != nil {
			return err
		}
		ok, err := done(m)
		if err != nil || ok {
			return err
		}
	}
}

func causeOf(raw []byte) string {
	var e struct {
		Cause string `json:"cause"`
	}
	json.Unmarshal(raw, &e)
	return e.Cause
}

// command builds the control.attention.respond event answering r
// (AEP-0004 §2, §6): addressed to r's session, no seq, subject and cause
// the request's id, agent the sender.
func (cn *Conn) command(r Request, a Answer) ([]byte, string, error) {
	if cn.c.Agent == "" {
		return nil, "", errors.New("the sender has no name (the consumer token's NAME): give --as NAME")
	}
	now := time.Now().UTC()
	id := shim.NewIDs().New(now)
	capture := "metadata"
	if a.Text != "" || len(a.Values) > 0 {
		capture = "full" // a person's own words and values, as typed
	}
	ev := shim.Event{
		AEP: shim.Version, ID: id, Type: "control.attention.respond", Subject: r.ID,
		Time:   now.Format("2006-01-02T15:04:05.000Z"),
		Source: "aep://" + url.PathEscape(cn.c.host()) + "/agent/" + url.PathEscape(cn.c.Agent),
		Agent:  cn.c.Agent, Session: r.Session, Cause: r.ID, Capture: capture, Tenant: cn.c.Tenant,
		Data: map[string]any{"answer": a.data()},
	}
	line, err := ev.MarshalLine()
	if err != nil {
		return nil, "", err
	}
	return bytes.TrimSuffix(line, []byte("\n")), id, nil
}

func (a Answer) data() map[string]any {
	m := map[string]any{}
	if a.Option != "" {
		m["option"] = a.Option
	}
	if a.Text != "" {
		m["text"] = a.Text
	}
	if a.Values != nil {
		m["values"] = a.Values
	}
	return m
}

// The option ids that allow once or refuse, whatever the vendor calls them:
// Allow and Deny pick a request's own option with them.
var (
	allowIDs = []string{"allow", "yes", "once", "proceed_once", "approved", "approve", "accept"}
	denyIDs  = []string{"deny", "no", "reject", "cancel", "rejected", "decline", "abort"}
)

// Allow is the answer that allows r once, in r's own options; for a
// request whose options name no such choice, the word allow (AEP-0008: the
// receiver maps an option word, never free text to the permissive
// choice).
func Allow(r Request) (Answer, error) {
	if r.Kind == "form" {
		return Answer{}, errors.New("a form is answered with --values (or --option decline)")
	}
	if id := pick(r.Options, allowIDs); id != "" {
		return Answer{Option: id}, nil
	}
	return Answer{Text: "allow"}, nil
}

// Deny is the answer that refuses r in its own options (a form: decline),
// with reason as the refusal's text when given.
func Deny(r Request, reason string) (Answer, error) {
	if r.Kind == "form" {
		return Answer{Option: "decline"}, nil
	}
	if id := pick(r.Options, denyIDs); id != "" {
		return Answer{Option: id, Text: reason}, nil
	}
	if reason != "" {
		return Answer{Text: reason}, nil
	}
	return Answer{Text: "deny"}, nil
}

// pick is the one option whose id is among ids (the first of ids that
// matches).
func pick(opts []Option, ids []string) string {
	for _, want := range ids {
		for _, o := range opts {
			if strings.EqualFold(o.ID, want) {
				return o.ID
			}
		}
	}
	return ""
}
