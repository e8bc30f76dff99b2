package relay

import (
	"bufio"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

// sse is GET /stream (AEP-0003 §3.3): the subscription in the query
// (filter, capture, from, live=0) or a Last-Event-ID header, replayed
// then live, each event as `event: type`, `id: session:epoch:seq` (for
// sequenced events) and `data: event`.
func (s *Server) sse(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		jsonError(w, http.StatusMethodNotAllowed, "method-not-allowed", "GET the stream", -1)
		return
	}
	g := GrantFrom(r.Context())
	q := r.URL.Query()
	req := request{id: "sse", capture: q.Get("capture")}
	if f := q.Get("filter"); f != "" {
		req.filter = []byte(f)
	}
	live := q.Get("live") != "0" && q.Get("live") != "false"
	refuse := func(e *subError) {
		status := http.StatusBadRequest
		if e.code == codeUnauthorized {
			status = http.StatusForbidden
		}
		s.audit.record(Audit{Kind: auditSubscribeRefuse, Binding: "sse", Identity: g.Identity, Remote: r.RemoteAddr, Code: e.code, Reason: e.detail, Filter: q.Get("filter")})
		jsonError(w, status, e.code, e.detail, -1)
	}
	if from := q.Get("from"); from != "" {
		raw := []byte(from)
		if from == "all" {
			raw = []byte(`"all"`)
		}
		list, all, err := parseFrom(raw, s.opts.MaxFrom)
		if err != nil {
			refuse(err)
			return
		}
		req.from, req.all = list, all
	} else if id := r.Header.Get("Last-Event-ID"); id != "" {
		pos, ok := lastEventID(id)
		if !ok {
			refuse(&subError{codeInvalidFilter, "Last-Event-ID is not session:epoch:seq"})
			return
		}
		req.from = []resume{pos}
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		jsonError(w, http.StatusInternalServerError, "internal", "streaming unsupported", -1)
		return
	}
	c := s.newConn("sse", g, r.RemoteAddr)
	if err := s.hub.register(c, s.opts.MaxConns); err != nil {
		status := http.StatusServiceUnavailable
		jsonError(w, status, codeLimitExceeded, err.Error(), -1)
		return
	}
	s.streams.Add(1)
	defer s.streams.Done()
	defer s.hub.unregister(c)
	sb, serr := s.subscribe(c, req, nil, !live)
	if serr != nil {
		refuse(serr)
		return
	}
	s.audit.record(Audit{Kind: auditSubscribe, Conn: c.id, Binding: "sse", Identity: g.Identity, Remote: r.RemoteAddr, Sub: "sse", Filter: q.Get("filter"), Capture: sb.ceiling.String()})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, 32<<10)
	reason := s.sseLoop(c, r, bw, fl, rc)
	s.audit.record(Audit{Kind: auditDisconnect, Conn: c.id, Binding: "sse", Identity: g.Identity, Remote: r.RemoteAddr, Reason: reason})
}

// sseLoop writes what the connection's queue brings until the client
// goes, the stream is cut or ends, or the relay shuts down; it returns
// why it stopped.
func (s *Server) sseLoop(c *conn, r *http.Request, bw *bufio.Writer, fl http.Flusher, rc *http.ResponseController) string {
	ping := time.NewTicker(s.opts.Ping)
	defer ping.Stop()
	flush := func() error {
		rc.SetWriteDeadline(time.Now().Add(s.opts.WriteWait))
		if err := bw.Flush(); err != nil {
			return err
		}
		fl.Flush()
		return nil
	}
	for {
		select {
		case <-r.Context().Done():
			return "the client went away"
		case <-c.shut:
			bw.WriteString(": shutting-down\n\n")
			flush()
			return "shutting down"
		case <-c.done:
			reason := c.cutReason()
			bw.WriteString(": closing " + oneLine(reason) + "\n\n")
			flush()
			return reason
		case <-ping.C:
			bw.WriteString(": ping\n\n")
			if flush() != nil {
				return "write failed"
			}
		case <-c.q.ready:
			var end bool
			var err error
			for it, ok := c.q.pop(); ok && err == nil && !end && !c.stopped(); it, ok = c.q.pop() {
				end, err = s.sseItem(c, bw, it)
			}
			if err == nil {
				err = flush()
			}
			if err != nil {
				return "write failed"
			}
			if end {
				return "replay done (live=0)"
			}
		}
	}
}

// sseItem writes one queued item.
func (s *Server) sseItem(c *conn, bw *bufio.Writer, it item) (end bool, err error) {
	switch {
	case it.ev != nil:
		writeSSE(bw, it.ev, it.ceiling)
		delivered(it.ev, it.subs...)
	case it.replay != nil || it.end:
		for _, st := range it.replay {
			select {
			case <-c.done:
				return false, errors.New("cut")
			case <-c.shut:
				return false, errors.New("shutting down")
			default:
			}
			if st.mark != nil {
				bw.WriteString(": replay-exhausted " + oneLine(st.mark.Session) + " " + strconv.FormatInt(st.mark.Earliest.Epoch, 10) + ":" + strconv.FormatInt(st.mark.Earliest.Seq, 10) + "\n\n")
				continue
			}
			if c.grant.Sees(st.ev) && it.sub.filter.MatchAttrs(st.ev) {
				writeSSE(bw, st.ev, it.sub.ceiling)
				delivered(st.ev, it.sub)
			}
			if bw.Buffered() > 16<<10 {
				if err := bw.Flush(); err != nil {
					return false, err
				}
			}
		}
		return it.end, nil
	case it.frame != nil:
		bw.Write(it.frame)
	}
	return false, nil
}

// writeSSE writes one event message. An id line is written for sequenced
// events whose session name can ride in one (no line breaks or NUL).
func writeSSE(bw *bufio.Writer, ev *event.Event, ceiling redact.Level) {
	bw.WriteString("event: ")
	bw.WriteString(ev.Type)
	bw.WriteByte('\n')
	if ev.Sequenced && !strings.ContainsAny(ev.Session, "\r\n\x00") {
		bw.WriteString("id: ")
		bw.WriteString(ev.Session)
		bw.WriteByte(':')
		bw.WriteString(strconv.FormatInt(ev.Pos.Epoch, 10))
		bw.WriteByte(':')
		bw.WriteString(strconv.FormatInt(ev.Pos.Seq, 10))
		bw.WriteByte('\n')
	}
	bw.WriteString("data: ")
	bw.Write(render(ev, ceiling))
	bw.WriteString("\n\n")
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == 0 {
			return ' '
		}
		return r
	}, s)
}
