package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Identity is how an emitter connection introduces itself in its hello
// (AEP-0003 §4).
type Identity struct {
	Agent    string // the envelope agent of the events it sends
	Instance string // host/pid: which process
}

// Offer is what the connection declares it accepts (AEP-0004 §4.2: the
// declaration is authoritative) and how fast it acknowledges.
type Offer struct {
	Accepts   []string
	AckWindow time.Duration
}

// maxMessage bounds one message from the relay (a command is small).
const maxMessage = 1 << 20

// Link is one emitter connection to the relay's WebSocket binding: the
// hello exchange done, events out, commands and frames in.
type Link struct {
	ws *wsConn
	// Relay is the relay's hello as received.
	Relay json.RawMessage
}

// Msg is one message from the relay: an Event (a command, its type has a
// dot) or a connection-scoped frame.
type Msg struct {
	Raw   []byte
	Type  string
	Event bool
	// Cause is an error frame's cause (the id of the event it refuses).
	Cause string
	// Code and Detail are an error frame's.
	Code, Detail string
}

// Dial connects to the relay at url (ws:// or wss://) with token and
// exchanges hellos within timeout: the relay's must select AEP 0.1, an
// error frame instead (version-unsupported, unauthorized) fails the dial.
// secure speaks TLS to a wss:// relay; nil refuses one ([ErrNoTLS]).
func Dial(ctx context.Context, url, token string, id Identity, o Offer, timeout time.Duration, secure Secure) (*Link, error) {
	ws, err := dialWS(ctx, url, token, timeout, maxMessage, secure)
	if err != nil {
		return nil, err
	}
	l := &Link{ws: ws}
	accepts := o.Accepts
	if accepts == nil {
		accepts = []string{}
	}
	hello := map[string]any{
		"type": "hello", "versions": []string{"0.1"}, "role": "emitter",
		"identity": map[string]any{"agent": id.Agent, "instance": id.Instance},
		"capabilities": map[string]any{
			"emits":   []string{"attention", "control"},
			"control": map[string]any{"accepts": accepts, "ack_window_ms": o.AckWindow.Milliseconds()},
		},
	}
	b, _ := json.Marshal(hello)
	// The hello is bounded by timeout and by ctx: a relay that took the
	// connection and then says nothing must not hold up a caller that is
	// stopping, for the whole timeout.
	ws.conn.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { ws.conn.SetDeadline(time.Now()) })
	helloErr := func(err error) error {
		ws.conn.Close()
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return fmt.Errorf("relay hello: %w", err)
	}
	if err := ws.WriteText(b); err != nil {
		stop()
		return nil, helloErr(err)
	}
	m, err := l.Next()
	if !stop() && err == nil {
		// ctx ended as the hello came: the deadline it set may be on the
		// link by now.
		err = context.Cause(ctx)
	}
	if err != nil {
		return nil, helloErr(err)
	}
	switch {
	case m.Type == "error":
		ws.conn.Close()
		return nil, fmt.Errorf("%w: %s (%s)", ErrRefused, m.Code, m.Detail)
	case m.Type != "hello" || !selects(m.Raw, "0.1"):
		ws.conn.Close()
		return nil, errors.New("relay hello: the relay's first frame is not a hello selecting AEP 0.1")
	}
	ws.conn.SetDeadline(time.Time{})
	l.Relay = m.Raw
	return l, nil
}

// selects reports whether a hello's versions is exactly [v].
func selects(hello []byte, v string) bool {
	var h struct {
		Versions []string `json:"versions"`
	}
	return json.Unmarshal(hello, &h) == nil && len(h.Versions) == 1 && h.Versions[0] == v
}

// Send writes one event (its JSON, without the log's newline).
func (l *Link) Send(line []byte) error {
	return l.ws.WriteText(bytes.TrimSuffix(line, []byte("\n")))
}

// Next reads the next message. AEP ping frames are answered with pong and
// binary messages skipped on the way; a message that is not one JSON
// object with a string type is skipped too (the relay never sends one).
func (l *Link) Next() (Msg, error) {
	for {
		op, b, err := l.ws.ReadMessage()
		if err != nil {
			return Msg{}, err
		}
		if op != opText {
			continue
		}
		var head struct {
			Type   string `json:"type"`
			Cause  string `json:"cause"`
			Code   string `json:"code"`
			Detail string `json:"detail"`
			T      any    `json:"t"`
		}
		if json.Unmarshal(b, &head) != nil || head.Type == "" {
			continue
		}
		if head.Type == "ping" {
			pong := map[string]any{"type": "pong"}
			if head.T != nil {
				pong["t"] = head.T
			}
			p, _ := json.Marshal(pong)
			if err := l.ws.WriteText(p); err != nil {
				return Msg{}, err
			}
			continue
		}
		return Msg{Raw: b, Type: head.Type, Event: strings.Contains(head.Type, "."),
			Cause: head.Cause, Code: head.Code, Detail: head.Detail}, nil
	}
}

// Deadline bounds the reads and writes that follow (zero: none).
func (l *Link) Deadline(t time.Time) { l.ws.conn.SetDeadline(t) }

// Close says goodbye (a closing frame, then the close handshake) and
// closes the connection.
func (l *Link) Close(reason string) {
	b, _ := json.Marshal(map[string]any{"type": "closing", "reason": reason, "delivered": []any{}})
	l.ws.conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	l.ws.WriteText(b)
	l.ws.Close()
}
