package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// capabilities is the hello capability shape the relay declares, in hello
// and in the discovery document (AEP-0003 §3.4, §4): exactly what it
// implements. control appears only when commands can be routed (a tokens
// file is configured): the relay accepts no command itself, it routes.
func (s *Server) capabilities() map[string]any {
	c := map[string]any{
		"filters":      []string{"attr-match"},
		"replay":       map[string]any{"buffer": s.opts.Buffer, "all": true},
		"capture":      []string{"none", "metadata", "redacted", "full"},
		"roster":       map[string]any{},
		"experimental": map[string]any{},
	}
	if s.opts.Tokens != nil {
		c["control"] = map[string]any{"accepts": []string{}}
	}
	return c
}

func (s *Server) discoveryDoc() map[string]any {
	return map[string]any{
		"aep":          []string{event.Version},
		"role":         "collector",
		"endpoints":    map[string]string{"events": "/events", "stream": "/stream", "socket": "/socket"},
		"capabilities": s.capabilities(),
	}
}

func (s *Server) discovery(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		jsonError(w, http.StatusMethodNotAllowed, "method-not-allowed", "GET the discovery document", -1)
		return
	}
	writeJSON(w, http.StatusOK, s.discoveryDoc())
}

// events is GET (discovery) and POST (ingest) /events (AEP-0003 §3.2).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.discovery(w, r)
	case http.MethodPost:
		s.post(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		jsonError(w, http.StatusMethodNotAllowed, "method-not-allowed", "POST events or GET the discovery document", -1)
	}
}

// post ingests one event (application/json) or a batch, one per line
// (application/x-ndjson). The whole batch is checked before any of it is
// taken: one refused event refuses the batch, naming its index.
func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	g := GrantFrom(r.Context())
	refuse := func(status int, code, detail string, idx int) {
		s.audit.record(Audit{Kind: auditEventRejected, Binding: "http", Identity: g.Identity, Remote: r.RemoteAddr, Status: status, Code: code, Reason: detail})
		jsonError(w, status, code, detail, idx)
	}
	v := r.Header.Get("AEP-Version")
	switch {
	case v == "":
		refuse(http.StatusBadRequest, "version-required", "the AEP-Version request header is required (AEP-0003 §3.2.2)", -1)
		return
	case v != event.Version && !strings.HasPrefix(v, event.Version+"."):
		s.audit.record(Audit{Kind: auditEventRejected, Binding: "http", Identity: g.Identity, Remote: r.RemoteAddr, Status: http.StatusUpgradeRequired, Code: "version-unsupported"})
		writeJSON(w, http.StatusUpgradeRequired, map[string]any{"versions": []string{event.Version}})
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	batch := mt == "application/x-ndjson"
	if err != nil || (mt != "application/json" && !batch) {
		refuse(http.StatusUnsupportedMediaType, "unsupported-media-type", "send application/json (one event) or application/x-ndjson (one event a line)", -1)
		return
	}
	if r.ContentLength > s.opts.MaxBody {
		refuse(http.StatusRequestEntityTooLarge, "payload-too-large", fmt.Sprintf("the body is %d bytes; at most %d (--max-body)", r.ContentLength, s.opts.MaxBody), -1)
		closeAfter(w)
		return
	}
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
	lines, err := readLines(body, batch, s.opts.MaxBatch)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		refuse(http.StatusRequestEntityTooLarge, "payload-too-large", fmt.Sprintf("the body exceeds %d bytes (--max-body)", s.opts.MaxBody), -1)
		closeAfter(w)
		return
	case errors.Is(err, errTooMany):
		refuse(http.StatusRequestEntityTooLarge, "too-many-events", fmt.Sprintf("a batch holds at most %d events (--max-batch); nothing was taken", s.opts.MaxBatch), -1)
		closeAfter(w)
		return
	case err != nil:
		refuse(http.StatusBadRequest, "invalid-event", "reading the body: "+err.Error(), -1)
		return
	}
	if len(lines) == 0 {
		refuse(http.StatusBadRequest, "invalid-event", "no event in the body", -1)
		return
	}
	evs := make([]*event.Event, len(lines))
	for i, l := range lines {
		ev, err := event.Parse(l)
		if err != nil {
			refuse(http.StatusBadRequest, "invalid-event", lineDetail(batch, i, err.Error()), i)
			return
		}
		if ev.Command() {
			refuse(http.StatusBadRequest, "invalid-event", lineDetail(batch, i, "control commands flow only on the WebSocket binding (AEP-0004 §4.1)"), i)
			return
		}
		if err := g.Writes(ev); err != nil {
			s.audit.record(eventAudit(Audit{Kind: auditEventRejected, Binding: "http", Identity: g.Identity, Remote: r.RemoteAddr, Status: http.StatusForbidden, Code: "unauthorized", Reason: err.Error()}, ev))
			jsonError(w, http.StatusForbidden, "unauthorized", lineDetail(batch, i, err.Error()), i)
			return
		}
		evs[i] = ev
	}
	added, idx, err := s.hub.ingest(evs, fromHTTP)
	switch {
	case errors.Is(err, errConflict):
		refuse(http.StatusBadRequest, "invalid-event", lineDetail(batch, idx, err.Error()+" [AEP-0001 §7.2]"), idx)
		return
	case err != nil:
		s.errs.Record(shimFailure(err))
		refuse(http.StatusServiceUnavailable, "store-unavailable", "the relay could not store the events; nothing was acknowledged, retry", -1)
		return
	}
	s.audit.record(Audit{Kind: auditPost, Binding: "http", Identity: g.Identity, Remote: r.RemoteAddr, Count: len(evs)})
	writeJSON(w, http.StatusAccepted, map[string]any{"accepted": len(evs), "new": added, "duplicates": len(evs) - added})
}

func lineDetail(batch bool, i int, msg string) string {
	if !batch {
		return msg
	}
	return fmt.Sprintf("line %d: %s", i+1, msg)
}

// closeAfter ends the connection after a refusal sent before the body was
// read through, so the client is not left writing into a closed request.
func closeAfter(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

var errTooMany = errors.New("too many events")

// readLines reads the body: one event, or non-blank lines up to max (the
// reading stops at the first line past it).
func readLines(r io.Reader, batch bool, max int) ([][]byte, error) {
	if !batch {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, nil
		}
		return [][]byte{b}, nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var out [][]byte
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if len(out) == max {
				return nil, errTooMany
			}
			out = append(out, line)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// healthz is liveness: bare {"ok":true} without a valid token, the counts
// with one (they are topology information).
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	g := GrantFrom(r.Context())
	if g == nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
		return
	}
	st := s.hub.stats()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "uptime_s": int64(time.Since(s.started).Seconds()),
		"sessions": st.Sessions, "buffered_events": st.Buffered, "subscribers": st.Subscribers,
		"connections": st.Connections, "emitters": st.Emitters, "claims": st.Claims,
		"ingested": st.Ingested, "duplicates": st.Duplicates})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// jsonError is {"error": code, "detail": ..., "index": i} (index when a
// batch line is named).
func jsonError(w http.ResponseWriter, status int, code, detail string, idx int) {
	body := map[string]any{"error": code, "detail": detail}
	if idx >= 0 {
		body["index"] = idx
	}
	writeJSON(w, status, body)
}
