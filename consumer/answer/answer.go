// Package answer is the AEP-0004 control sender: what waits for a human
// across the fleet (the attention requests a relay holds with no terminal
// yet, and which of them its target can answer over control now), and an
// answer to one of them, sent as control.attention.respond with the same
// id on every retry, acknowledged within the window or settled as a
// timeout, its outcome read back as events. The CLI's pending and answer
// verbs, the fleet console and the notification actions answer through
// it.
package answer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/shim"
)

// Defaults of a Client.
const (
	// DefaultWindow is AEP-0004's default ack window.
	DefaultWindow = 10 * time.Second
	// DefaultOutcome bounds the wait for the outcome events once the
	// command was accepted.
	DefaultOutcome = 10 * time.Second
)

// Client reaches one relay's WebSocket binding as a consumer that sends
// commands (role both).
type Client struct {
	// URL is the relay's socket, ws://HOST:PORT/socket (or wss://).
	URL string
	// Token is the bearer token: its scopes must cover subscribing to and
	// reading attention.* and control.*, and control:control.attention.respond.
	Token string
	// Agent is the sender's name, the commands' envelope agent: a consumer
	// token's NAME (consumer:NAME) or an agent its write scopes name.
	Agent string
	// Host is the {host} of the commands' source URI (default: this
	// machine's name).
	Host string
	// Tenant, when set, is stamped on the commands (the relay only routes
	// a tenant's commands to its own targets).
	Tenant string
	// Window is the ack window (DefaultWindow when 0): silence past it is
	// a timeout.
	Window time.Duration
	// Outcome bounds the wait for the outcome events (DefaultOutcome when
	// 0).
	Outcome time.Duration
}

// Conn is one open connection to the relay. It is safe for concurrent
// use: every call sees each message the relay sends while it runs (a
// Respond still waiting for its outcome events must not take the frames a
// Pending or another Respond beside it waits for), and the relay's pings
// are answered whether or not a call is running.
type Conn struct {
	c  *Client
	ws *websocket.Conn
	// seq numbers the subscriptions the calls open.
	seq atomic.Int64

	mu sync.Mutex
	// calls are the running calls' inboxes: the reader hands every
	// message to each.
	calls map[*inbox]struct{}
	// dead is closed when the reader ends; err is why.
	dead chan struct{}
	err  error
}

// inbox is one call's view of the messages, from its start on.
type inbox struct {
	in   chan []byte
	gone chan struct{} // closed when the call returns
}

// Dial opens the connection and exchanges hellos.
func (c *Client) Dial(ctx context.Context) (*Conn, error) {
	h := http.Header{}
	if c.Token != "" {
		h.Set("Authorization", "Bearer "+c.Token)
	}
	ws, _, err := websocket.Dial(ctx, c.URL, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, fmt.Errorf("relay %s: %w", redactURL(c.URL), err)
	}
	ws.SetReadLimit(16 << 20)
	cn := &Conn{c: c, ws: ws, calls: map[*inbox]struct{}{}, dead: make(chan struct{})}
	box := cn.listen()
	defer cn.forget(box)
	hello := map[string]any{"type": "hello", "versions": []string{"0.1"}, "role": "both",
		"identity":     map[string]any{"agent": c.Agent, "instance": c.host() + "/" + fmt.Sprint(os.Getpid())},
		"capabilities": map[string]any{"emits": []string{"control"}, "control": map[string]any{"accepts": []string{}}}}
	if err := cn.write(ctx, hello); err != nil {
		ws.CloseNow()
		return nil, err
	}
	go cn.read()
	m, err := cn.next(ctx, box)
	if err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("relay hello: %w", err)
	}
	switch m.Type {
	case "hello":
	case "error":
		ws.CloseNow()
		return nil, fmt.Errorf("the relay refused the connection: %s (%s)", m.Code, m.Detail)
	default:
		ws.CloseNow()
		return nil, errors.New("relay hello: the relay's first frame is not a hello")
	}
	return cn, nil
}

func (c *Client) host() string {
	if c.Host != "" {
		return c.Host
	}
	return shim.Config{}.HostName()
}

func (c *Client) window() time.Duration {
	if c.Window > 0 {
		return c.Window
	}
	return DefaultWindow
}

// redactURL drops a URL's query (an access_token) for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the relay URL"
	}
	u.RawQuery, u.User = "", nil
	return u.String()
}

// Close ends the connection.
func (cn *Conn) Close() error { return cn.ws.Close(websocket.StatusNormalClosure, "done") }

func (cn *Conn) write(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return cn.ws.Write(ctx, websocket.MessageText, b)
}

// pongWait bounds the reader's answer to one of the relay's pings.
const pongWait = 10 * time.Second

// read takes every message off the socket: a ping is answered here, once,
// and anything else handed to each running call. A call that has
// returned is skipped, so a slow one never holds the others up past its
// own end.
func (cn *Conn) read() {
	for {
		_, b, err := cn.ws.Read(context.Background())
		if err != nil {
			cn.mu.Lock()
			cn.err = err
			close(cn.dead)
			cn.mu.Unlock()
			return
		}
		var head struct {
			Type string `json:"type"`
			T    any    `json:"t"`
		}
		if json.Unmarshal(b, &head) == nil && head.Type == "ping" {
			ctx, cancel := context.WithTimeout(context.Background(), pongWait)
			cn.write(ctx, map[string]any{"type": "pong", "t": head.T})
			cancel()
			continue
		}
		cn.mu.Lock()
		boxes := make([]*inbox, 0, len(cn.calls))
		for box := range cn.calls {
			boxes = append(boxes, box)
		}
		cn.mu.Unlock()
		for _, box := range boxes {
			select {
			case box.in <- b:
			case <-box.gone:
			}
		}
	}
}

// listen starts a call's inbox: it receives every message read from now
// on, until forget.
func (cn *Conn) listen() *inbox {
	box := &inbox{in: make(chan []byte, 1024), gone: make(chan struct{})}
	cn.mu.Lock()
	cn.calls[box] = struct{}{}
	cn.mu.Unlock()
	return box
}

// forget ends a call's inbox.
func (cn *Conn) forget(box *inbox) {
	cn.mu.Lock()
	delete(cn.calls, box)
	cn.mu.Unlock()
	close(box.gone)
}

// subID names a new subscription of a call.
func (cn *Conn) subID(prefix string) string {
	return prefix + "-" + strconv.FormatInt(cn.seq.Add(1), 10)
}

// msg is one message's head.
type msg struct {
	Raw     []byte
	Type    string `json:"type"`
	ID      string `json:"id"`
	Sub     string `json:"sub"`
	Cause   string `json:"cause"`
	Code    string `json:"code"`
	Detail  string `json:"detail"`
	Subject string `json:"subject"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Source  string `json:"source"`
	Time    string `json:"time"`
	Data    json.RawMessage
	Entries []RosterEntry `json:"entries"`
}

// next is box's next message; once the connection has ended and box
// holds nothing more, its error.
func (cn *Conn) next(ctx context.Context, box *inbox) (msg, error) {
	for {
		var b []byte
		select {
		case <-ctx.Done():
			return msg{}, ctx.Err()
		case b = <-box.in:
		case <-cn.dead:
			select {
			case b = <-box.in:
			default:
				return msg{}, cn.err
			}
		}
		var m msg
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		var d struct {
			Data json.RawMessage `json:"data"`
		}
		json.Unmarshal(b, &d)
		m.Raw, m.Data = b, d.Data
		return m, nil
	}
}

// RosterEntry is one live claim the relay terminates (AEP-0003 §4.1).
type RosterEntry struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Control struct {
		Accepts []string `json:"accepts"`
	} `json:"control"`
}

// Request is an attention request with no terminal yet.
type Request struct {
	ID      string          `json:"id"`
	Agent   string          `json:"agent"`
	Session string          `json:"session"`
	Source  string          `json:"source"`
	Subject string          `json:"subject,omitempty"`
	Time    string          `json:"time"`
	Kind    string          `json:"kind"`
	Prompt  string          `json:"prompt,omitempty"`
	Options []Option        `json:"options,omitempty"`
	Fields  json.RawMessage `json:"fields,omitempty"`
	// RespondVia is the request's own declaration (AEP-0008).
	RespondVia []string `json:"respond_via,omitempty"`
	// Answerable says the request declares control and a live target
	// claims its session accepting control.attention.respond now.
	Answerable bool `json:"answerable"`
}

// Option is one of a request's options.
type Option struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Pending lists what waits for a human now: every attention.requested the
// relay's buffers hold with no attention.resolved or attention.timeout,
// oldest first, each marked answerable when a live target can take an
// answer over control (the roster). The replay ends where the relay
// answers a ping sent after the subscription: it queues its frames in
// order.
func (cn *Conn) Pending(ctx context.Context) ([]Request, error) {
	box := cn.listen()
	defer cn.forget(box)
	sub := cn.subID("pending")
	if err := cn.write(ctx, map[string]any{"type": "subscribe", "id": sub, "from": "all",
		"filter": map[string]any{"type": []string{"attention.*"}}}); err != nil {
		return nil, err
	}
	if err := cn.write(ctx, map[string]any{"type": "roster", "id": sub}); err != nil {
		return nil, err
	}
	mark := time.Now().UnixNano()
	if err := cn.write(ctx, map[string]any{"type": "ping", "t": mark}); err != nil {
		return nil, err
	}
	open := map[string]*Request{}
	var roster []RosterEntry
	for {
		m, err := cn.next(ctx, box)
		if err != nil {
			return nil, err
		}
		switch m.Type {
		case "error":
			if m.ID == sub {
				return nil, fmt.Errorf("the relay refused the subscription: %s (%s)", m.Code, m.Detail)
			}
		case "roster":
			if m.ID == sub {
				roster = m.Entries
			}
		case "attention.requested":
			r := requestOf(m)
			open[r.Source+"\x00"+r.ID] = &r
		case "attention.resolved", "attention.timeout":
			delete(open, m.Source+"\x00"+m.Subject)
		case "pong":
			var p struct {
				T int64 `json:"t"`
			}
			json.Unmarshal(m.Raw, &p)
			if p.T != mark {
				continue
			}
			cn.write(ctx, map[string]any{"type": "unsubscribe", "id": sub})
			out := make([]Request, 0, len(open))
			for _, r := range open {
				r.Answerable = declares(r.RespondVia, "control") && live(roster, r.Agent, r.Session)
				out = append(out, *r)
			}
			sort.Slice(out, func(i, j int) bool {
				if out[i].Time != out[j].Time {
					return out[i].Time < out[j].Time
				}
				return out[i].ID < out[j].ID
			})
			return out, nil
		}
	}
}

func requestOf(m msg) Request {
	var d struct {
		Kind       string          `json:"kind"`
		Prompt     string          `json:"prompt"`
		Options    []Option        `json:"options"`
		Fields     json.RawMessage `json:"fields"`
		RespondVia []string        `json:"respond_via"`
	}
	json.Unmarshal(m.Data, &d)
	return Request{ID: m.ID, Agent: m.Agent, Session: m.Session, Source: m.Source, Subject: m.Subject, Time: m.Time,
		Kind: d.Kind, Prompt: d.Prompt, Options: d.Options, Fields: d.Fields, RespondVia: d.RespondVia}
}

func declares(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func live(roster []RosterEntry, agent, session string) bool {
	for _, e := range roster {
		if e.Session == session && e.Agent == agent && declares(e.Control.Accepts, "control.attention.respond") {
			return true
		}
	}
	return false
}

// Find returns the pending request whose id is id (or, when unique, whose
// id starts with it).
func (cn *Conn) Find(ctx context.Context, id string) (Request, error) {
	rs, err := cn.Pending(ctx)
	if err != nil {
		return Request{}, err
	}
	var found []Request
	for _, r := range rs {
		if r.ID == id {
			return r, nil
		}
		if strings.HasPrefix(r.ID, id) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Request{}, fmt.Errorf("no pending request %s (aep-hook pending lists them)", id)
	}
	return Request{}, fmt.Errorf("%d pending requests start with %s; give more of the id", len(found), id)
}
