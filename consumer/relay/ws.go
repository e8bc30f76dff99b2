package relay

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

func (s *Server) newConn(binding string, g *auth.Grant, remote string) *conn {
	return &conn{id: s.hub.nextConn.Add(1), binding: binding, grant: g, remote: remote, role: "consumer",
		q: newQueue(s.opts.Queue), done: make(chan struct{}), shut: make(chan struct{})}
}

// socket is the WebSocket binding (AEP-0003 §3.5).
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	g := GrantFrom(r.Context())
	// The guard has checked Origin against the listener's own and the
	// allowed ones; the library's own check would refuse those allowed.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ws.SetReadLimit(s.opts.MaxFrame)
	c := s.newConn("ws", g, r.RemoteAddr)
	if err := s.hub.register(c, s.opts.MaxConns); err != nil {
		ws.Close(websocket.StatusTryAgainLater, "too many connections")
		return
	}
	s.streams.Add(1)
	defer s.streams.Done()
	defer s.hub.unregister(c)
	s.audit.record(Audit{Kind: auditConnect, Conn: c.id, Binding: "ws", Identity: g.Identity, Remote: r.RemoteAddr})
	var lastRead atomic.Int64
	lastRead.Store(time.Now().UnixNano())
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		s.wsWriter(c, ws, &lastRead)
	}()
	reason := s.wsReader(c, ws, &lastRead)
	c.cut(reason)
	select {
	case <-wrote:
	case <-time.After(s.opts.Drain):
		ws.CloseNow()
		<-wrote
	}
	s.audit.record(Audit{Kind: auditDisconnect, Conn: c.id, Binding: "ws", Identity: g.Identity, Remote: r.RemoteAddr, Role: c.role, Agent: c.agent, Reason: c.cutReason()})
}

// wsReader reads frames until the peer goes or the connection is cut,
// and returns why.
func (s *Server) wsReader(c *conn, ws *websocket.Conn, lastRead *atomic.Int64) string {
	// The read ends when the peer goes, or when the writer's close
	// handshake (after a cut or at shutdown) is through.
	ctx := context.Background()
	helloDone := false
	for {
		typ, b, err := ws.Read(ctx)
		if err != nil {
			if r := c.cutReason(); r != "" {
				return r
			}
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return "peer closed (" + strconv.Itoa(int(ce.Code)) + ")"
			}
			if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
				return "peer silent"
			}
			return "read failed"
		}
		lastRead.Store(time.Now().UnixNano())
		if typ != websocket.MessageText {
			// Binary frames are reserved in 0.1 and rejected (AEP-0003 §3.5.2).
			c.push(item{frame: errorFrame("", "", "binary-unsupported", "binary frames are reserved in AEP 0.1; send text frames")})
			c.cut("binary frame")
			return "binary frame"
		}
		f, ev, perr := parseText(b)
		if !helloDone {
			if f == nil || f.Type != "hello" {
				c.push(item{frame: errorFrame("", "", "hello-required", "the first frame is a hello (AEP-0003 §3.5.1)")})
				c.cut("no hello first")
				return "no hello first"
			}
			if !s.wsHello(c, f) {
				return c.cutReason()
			}
			helloDone = true
			continue
		}
		switch {
		case perr != nil:
			var inv *event.Invalid
			if errors.As(perr, &inv) {
				cause := idOf(b)
				s.audit.record(Audit{Kind: auditEventRejected, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Code: "invalid-event", Reason: inv.Error(), Event: cause})
				c.push(item{frame: errorFrame("", cause, "invalid-event", inv.Error())})
			} else {
				c.push(item{frame: errorFrame("", "", "invalid-frame", perr.Error())})
			}
		case ev != nil:
			s.wsEvent(c, ev)
		default:
			s.wsFrame(c, f)
		}
	}
}

// idOf is the id member of a refused event, for the error frame's cause.
func idOf(b []byte) string {
	var v struct {
		ID any `json:"id"`
	}
	json.Unmarshal(b, &v)
	s, _ := v.ID.(string)
	if len(s) > 128 {
		return ""
	}
	return s
}

// wsHello answers the peer's hello (AEP-0003 §4): one version from the
// intersection, or version-unsupported and close; an emitter's identity
// must be the token's.
func (s *Server) wsHello(c *conn, f *frame) bool {
	h, bad := parseHello(f)
	refuse := func(code, detail string, extra map[string]any) bool {
		s.audit.record(Audit{Kind: auditHelloRefused, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Code: code, Reason: detail, Role: h.role, Agent: h.agent})
		m := map[string]any{"type": "error", "code": code, "detail": detail}
		for k, v := range extra {
			m[k] = v
		}
		c.push(item{frame: frameJSON(m)})
		c.cut(code)
		return false
	}
	if !slices.Contains(h.versions, event.Version) {
		return refuse("version-unsupported", "this relay speaks AEP "+event.Version, map[string]any{"versions": []string{event.Version}})
	}
	if bad != "" {
		return refuse("hello-required", bad, nil)
	}
	if h.role != "consumer" {
		if err := c.grant.Emits(h.agent); err != nil {
			return refuse(codeUnauthorized, err.Error(), nil)
		}
	}
	s.hub.mu.Lock()
	c.role, c.agent, c.instance = h.role, h.agent, h.instance
	c.control, c.emits, c.accepts = h.control, h.emits, h.accepts
	s.hub.mu.Unlock()
	host, _ := os.Hostname()
	c.push(item{frame: frameJSON(map[string]any{
		"type":         "hello",
		"versions":     []string{event.Version},
		"role":         "both",
		"identity":     map[string]any{"agent": "aep-hook-relay", "instance": host + "/" + strconv.Itoa(os.Getpid())},
		"capabilities": s.capabilities(),
	})})
	s.audit.record(Audit{Kind: "hello", Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Role: h.role, Agent: h.agent})
	return true
}

// wsEvent takes an event frame: a command is routed, anything else
// ingested like a POST, and an emitter's sequenced event claims its
// session.
func (s *Server) wsEvent(c *conn, ev *event.Event) {
	if err := c.grant.Writes(ev); err != nil {
		kind := auditEventRejected
		if ev.Command() {
			kind = auditCommandRefused
		}
		s.audit.record(eventAudit(Audit{Kind: kind, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Code: codeUnauthorized, Reason: err.Error()}, ev))
		c.push(item{frame: errorFrame("", ev.ID, codeUnauthorized, err.Error())})
		return
	}
	if ev.Command() {
		s.command(c, ev)
		return
	}
	if _, _, err := s.hub.ingest([]*event.Event{ev}, fromWS); err != nil {
		code := "invalid-event"
		if !errors.Is(err, errConflict) {
			s.errs.Record(shimFailure(err))
			code = "store-unavailable"
		}
		s.audit.record(eventAudit(Audit{Kind: auditEventRejected, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Code: code, Reason: err.Error()}, ev))
		c.push(item{frame: errorFrame("", ev.ID, code, err.Error())})
		return
	}
	s.hub.claimFor(c, ev)
}

// command routes a command (AEP-0004 §4), stores and fans out a routed
// one (it belongs to the session history the relay serves, §4.4), and
// answers a refusal with the cause-correlated error frame, which is never
// stored or fanned out (§8).
//
// The command is stored before it is delivered: the target may ack at
// once, and its ack must not be served ahead of the command it answers.
func (s *Server) command(c *conn, cmd *event.Event) {
	refuse := func(ref *refusal) {
		s.audit.record(eventAudit(Audit{Kind: auditCommandRefused, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Code: ref.code, Reason: ref.detail}, cmd))
		c.push(item{frame: ref.frame(cmd)})
	}
	target, ref := s.hub.route(cmd, c)
	if ref != nil {
		refuse(ref)
		return
	}
	if _, _, err := s.hub.ingest([]*event.Event{cmd}, fromWS); err != nil {
		s.errs.Record(shimFailure(err))
	}
	if ref := handOver(cmd, target); ref != nil {
		refuse(ref)
		return
	}
	s.audit.record(eventAudit(Audit{Kind: auditCommandRouted, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Target: target.id}, cmd))
}

// wsFrame handles a frame after the hello; unknown types are ignored
// (AEP-0003 §2).
func (s *Server) wsFrame(c *conn, f *frame) {
	switch f.Type {
	case "subscribe":
		s.wsSubscribe(c, f)
	case "unsubscribe":
		id, _ := f.str("id")
		s.unsubscribe(c, id, frameJSON(map[string]any{"type": "unsubscribed", "id": id}))
		s.audit.record(Audit{Kind: auditUnsubscribe, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Sub: id})
	case "roster":
		id, ok := f.str("id")
		if !ok || id == "" {
			c.push(item{frame: errorFrame("", "", codeInvalidFilter, "roster needs a string id")})
			return
		}
		if !c.consumes() {
			s.audit.record(Audit{Kind: auditRosterRefused, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Sub: id, Code: codeUnauthorized})
			c.push(item{frame: errorFrame(id, "", codeUnauthorized, "the roster is answered on consumer connections (AEP-0003 §4.1)")})
			return
		}
		entries := s.hub.roster(c)
		s.audit.record(Audit{Kind: auditRoster, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Sub: id, Count: len(entries)})
		c.push(item{frame: frameJSON(map[string]any{"type": "roster", "id": id, "entries": entries})})
	case "ping":
		t, ok := f.raw("t")
		m := map[string]any{"type": "pong"}
		if ok {
			m["t"] = t
		}
		c.push(item{frame: frameJSON(m)})
	case "closing":
		// The peer is leaving; its close handshake follows.
	}
}

func (s *Server) wsSubscribe(c *conn, f *frame) {
	req, serr := subscribeRequest(f, s.opts.MaxFrom)
	if serr == nil && !c.consumes() {
		serr = &subError{codeUnauthorized, "an emitter connection does not subscribe; hello as consumer or both"}
	}
	var sb *sub
	if serr == nil {
		sb, serr = s.subscribe(c, req, frameJSON(map[string]any{"type": "subscribed", "id": req.id}), false)
	}
	filter, _ := f.raw("filter")
	if serr != nil {
		s.audit.record(Audit{Kind: auditSubscribeRefuse, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Sub: req.id, Code: serr.code, Reason: serr.detail, Filter: string(filter)})
		c.push(item{frame: errorFrame(req.id, "", serr.code, serr.detail)})
		return
	}
	s.audit.record(Audit{Kind: auditSubscribe, Conn: c.id, Binding: "ws", Identity: c.grant.Identity, Sub: req.id, Filter: string(filter), Capture: sb.ceiling.String()})
}

// wsWriter drains c's queue to the socket, pings the peer, and on a cut or
// at shutdown sends the closing frame with the delivered positions, then
// closes (1001 at shutdown).
func (s *Server) wsWriter(c *conn, ws *websocket.Conn, lastRead *atomic.Int64) {
	subs := map[*sub]bool{}
	write := func(b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.WriteWait)
		defer cancel()
		return ws.Write(ctx, websocket.MessageText, b)
	}
	goodbye := func(reason string, code websocket.StatusCode) {
		write(closingFrame(reason, subs))
		ws.Close(code, reason[:min(len(reason), 120)])
	}
	ping := time.NewTicker(s.opts.Ping)
	defer ping.Stop()
	for {
		select {
		case <-c.shut:
			goodbye("shutting-down", websocket.StatusGoingAway)
			c.cut("shutting down")
			return
		case <-c.done:
			reason := c.cutReason()
			// A refusal queued just before the cut goes out first.
			for it, ok := c.q.pop(); ok; it, ok = c.q.pop() {
				if it.frame != nil && it.ev == nil && it.replay == nil {
					write(it.frame)
				}
			}
			code := websocket.StatusPolicyViolation
			switch reason {
			case "binary frame":
				code = websocket.StatusUnsupportedData
			case "version-unsupported", "no hello first", "hello-required", codeUnauthorized:
				code = websocket.StatusPolicyViolation
			default:
				switch {
				case strings.HasPrefix(reason, "slow"):
					code = websocket.StatusTryAgainLater
				case strings.HasPrefix(reason, "peer closed"), reason == "read failed":
					// The peer is gone: nobody to tell.
					ws.CloseNow()
					return
				}
			}
			goodbye(reason, code)
			return
		case <-ping.C:
			if time.Since(time.Unix(0, lastRead.Load())) > s.opts.PongTimeout {
				c.cut("peer silent for " + s.opts.PongTimeout.String())
				continue
			}
			if write(frameJSON(map[string]any{"type": "ping", "t": time.Now().UnixMilli()})) != nil {
				c.cut("write failed")
			}
		case <-c.q.ready:
			for it, ok := c.q.pop(); ok; it, ok = c.q.pop() {
				if err := s.wsItem(c, it, subs, write); err != nil {
					c.cut("write failed")
				}
				if c.stopped() {
					break
				}
			}
		}
	}
}

func (s *Server) wsItem(c *conn, it item, subs map[*sub]bool, write func([]byte) error) error {
	switch {
	case it.ev != nil:
		for _, sb := range it.subs {
			subs[sb] = true
		}
		if err := write(render(it.ev, it.ceiling)); err != nil {
			return err
		}
		delivered(it.ev, it.subs...)
	case it.replay != nil:
		subs[it.sub] = true
		for _, st := range it.replay {
			select {
			case <-c.done:
				return nil
			case <-c.shut:
				return nil
			default:
			}
			if st.mark != nil {
				err := write(frameJSON(map[string]any{"type": "replay-exhausted", "sub": it.sub.id, "session": st.mark.Session,
					"earliest": map[string]int64{"epoch": st.mark.Earliest.Epoch, "seq": st.mark.Earliest.Seq}}))
				if err != nil {
					return err
				}
				continue
			}
			if c.grant.Sees(st.ev) && it.sub.filter.MatchAttrs(st.ev) {
				if err := write(render(st.ev, it.sub.ceiling)); err != nil {
					return err
				}
				delivered(st.ev, it.sub)
			}
		}
	case it.frame != nil:
		if it.forget != nil {
			delete(subs, it.forget)
		}
		return write(it.frame)
	}
	return nil
}

// closingFrame is the orderly-close frame (AEP-0003 §3.5.4) with the last
// delivered position per subscription and session.
func closingFrame(reason string, subs map[*sub]bool) []byte {
	type pos struct {
		Sub     string `json:"sub"`
		Session string `json:"session"`
		Epoch   int64  `json:"epoch"`
		Seq     int64  `json:"seq"`
	}
	list := []pos{}
	for sb := range subs {
		for session, p := range sb.last {
			list = append(list, pos{sb.id, session, p.Epoch, p.Seq})
		}
	}
	slices.SortFunc(list, func(a, b pos) int {
		if a.Sub != b.Sub {
			return compare(a.Sub, b.Sub)
		}
		return compare(a.Session, b.Session)
	})
	return frameJSON(map[string]any{"type": "closing", "reason": reason, "delivered": list})
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
