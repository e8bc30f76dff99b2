package acp

import (
	"bytes"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// connection is what the observer knows of the ACP connection beyond one
// message: the agent its initialize response named (every later moment
// carries it as Facts.Peer), the session it works in, and the messages
// that came before any session. Those wait for the connection's first
// session and land in its log, so no two connections share a log for
// their handshakes; what no session ever claims goes to the connection's
// own lane.
type connection struct {
	peer    mapping.Peer
	session string
	held    []mapping.Moment
	lane    string
	out     []mapping.Moment // admit's result, reused batch after batch
}

// maxHeld bounds the messages waiting for the connection's first session;
// past it they go to the lane at once.
const maxHeld = 64

// admit gives a batch's moments the connection's facts and returns those
// known). The result is valid until the next call.
func (c *connection) admit(ms []mapping.Moment) []mapping.Moment {
	out := c.out[:0]
	for _, m := range ms {
		c.learn(&m)
		if m.Facts.Session == "" {
			if c.session == "" && len(c.held) < maxHeld {
				m.Raw = bytes.Clone(m.Raw) // the batch's buffers are reused
				c.held = append(c.held, m)
				continue
			}
			m.Facts.Session = c.session
			if m.Facts.Session == "" {
				m.Facts.Session = c.lane
			}
		} else {
			c.session = m.Facts.Session
			out = c.release(out)
		}
		m.Facts.Peer = c.peer
		out = append(out, m)
	}
	c.out = out
	return out
}

// learn reads what a response states about the connection: the agent
// (initialize) and the session it opened (session/new).
func (c *connection) learn(m *mapping.Moment) {
	if m.Facts.Kind != mapping.KindResponse {
		return
	}
	switch m.Facts.Method {
	case "initialize":
		r := gjson.GetManyBytes(m.Raw, "result.agentInfo.name", "result.agentInfo.version")
		if r[0].Str != "" {
			c.peer = mapping.Peer{Name: r[0].Str, Version: r[1].Str}
		}
	case "session/new", "session/load":
		if m.Facts.Session == "" {
			m.Facts.Session = gjson.GetBytes(m.Raw, "result.sessionId").Str
		}
	}
}

// release appends the held moments, now in the connection's session.
func (c *connection) release(out []mapping.Moment) []mapping.Moment {
	for _, h := range c.held {
		h.Facts.Session, h.Facts.Peer = c.session, c.peer
		out = append(out, h)
	}
	c.held = nil
	return out
}

// Why the tee ended an unanswered prompt turn (mapping.TransportACP).
const (
	endExited  = "agent_exited"  // the agent exited or died on its own
	endStopped = "agent_stopped" // the tee forwarded the editor's signal
	endClosed  = "client_closed" // the editor closed the agent's stdin first
)

// finish runs once the queue is drained after the agent exited: what is
// still held goes to the connection's session (or lane), and every prompt
// turn the agent never answered is handed over as a KindEnd moment, for
// the table to close its run by reason, and recorded for doctor.
func (o *observer) finish(reason string) {
	ms := o.conn.release(nil)
	if o.conn.session == "" {
		for i := range ms {
			ms[i].Facts.Session = o.conn.lane
		}
	}
	for _, p := range o.join.unanswered(ClientToAgent) {
		if p.method != "session/prompt" {
			continue
		}
		o.record(shim.Failure{Hook: p.method, Stage: "interrupted",
			Error: fmt.Sprintf("a prompt turn was still open when the tee ended (%s); the tee closed its run", reason)})
		ms = append(ms, mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindEnd, Direction: mapping.ToAgent,
			Method: p.method, ID: p.id, Session: p.session, Instance: o.tee, Peer: o.conn.peer, Reason: reason}, Deltas: o.deltas})
	}
	o.hand(ms)
}
