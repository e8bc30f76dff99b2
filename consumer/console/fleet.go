package console

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/consumer/relay"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// FleetPath is the endpoint the page's first load reads: the fleet as a
// summary of what the relay holds for the signed-in token.
const FleetPath = "/console/fleet"

// fleet is the first load's summary: per session (per stream, as the page
// keys them) the counts the page shows and only those of its events that
// decide the fleet view (its state, since when, what waits for a human),
// in the order the stream delivers them. The page folds those events
// with the same code that folds the stream, so the rules of a session's
// state live in one place; the rest of a session's events are fetched
// when it is opened.
type fleet struct {
	// Events is how many events the summarized sessions hold.
	Events   int            `json:"events"`
	Sessions []fleetSession `json:"sessions"`
}

type fleetSession struct {
	Source  string `json:"source"`
	Session string `json:"session"`
	// Count, Captures, Tools and ToolsFailed are what folding every event
	// of the stream counts.
	Count       int            `json:"count"`
	Captures    map[string]int `json:"captures"`
	Tools       int            `json:"tools"`
	ToolsFailed int            `json:"tools_failed"`
	// Pos is the newest position held: the socket resumes from it.
	Pos struct {
		Epoch int64 `json:"epoch"`
		Seq   int64 `json:"seq"`
	} `json:"pos"`
	// Events are the deciding events, as the stream delivers them.
	Events []json.RawMessage `json:"events"`
}

// fleetHandler serves FleetPath: GET with the same filter and capture
// query as GET /stream, refused the same way.
func (h *handler) fleetHandler(w http.ResponseWriter, r *http.Request) {
	g := relay.GrantFrom(r.Context())
	sn := relay.SnapshotterFrom(r.Context())
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if g == nil {
		jsonReply(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized", "detail": "a token is required"})
		return
	}
	if sn == nil {
		jsonReply(w, http.StatusNotFound, map[string]string{"error": "not-found", "detail": "no relay serves this console"})
		return
	}
	q := r.URL.Query()
	var filter []byte
	if f := q.Get("filter"); f != "" {
		filter = []byte(f)
	}
	snap, err := sn.Snapshot(g, filter, q.Get("capture"))
	if err != nil {
		code, status := "invalid-filter", http.StatusBadRequest
		if c, ok := err.(interface{ Code() string }); ok {
			code = c.Code()
		}
		if code == "unauthorized" {
			status = http.StatusForbidden
		}
		jsonReply(w, status, map[string]string{"error": code, "detail": err.Error()})
		return
	}
	jsonReply(w, http.StatusOK, summarize(snap.Events, snap.Body))
}

func jsonReply(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// summarize is the fleet summary of evs (in stream order), body being an
// event as delivered. It keeps of each session's events those the
// page's fold needs for the fleet view:
//
//   - the first (the session's agent and tenant), the earliest and the
//     newest by time (first and last activity);
//   - every session.started, session.ended and delegation event (parents,
//     subagents);
//   - run.started of runs never finished, and the last finished one
//     (running, or failed and since when);
//   - fatal error.raised;
//   - attention requests still pending (asked before any session.ended,
//     settled by no later resolution or end) and their answers, and of
//     the fleet the last ten requests settled (the page lists them).
//
// Every event is counted as the fold counts it.
func summarize(evs []*event.Event, body func(*event.Event) []byte) fleet {
	var out fleet
	idx := map[string]int{}
	var groups [][]*event.Event
	for _, ev := range evs {
		if !ev.Sequenced {
			continue
		}
		i, ok := idx[ev.Source]
		if !ok {
			i = len(groups)
			idx[ev.Source] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], ev)
	}
	parts := make([]*sessionPart, len(groups))
	var settled [][2]int // session, settled group within it
	for i, g := range groups {
		parts[i] = summarizeSession(g, body)
		out.Events += len(g)
		for j := range parts[i].settled {
			settled = append(settled, [2]int{i, j})
		}
	}
	// The page lists the last few requests settled, in the stream's order.
	for _, k := range settled[max(0, len(settled)-settledCap):] {
		for _, i := range parts[k[0]].settled[k[1]] {
			parts[k[0]].keep[i] = true
		}
	}
	out.Sessions = make([]fleetSession, len(parts))
	for i, p := range parts {
		for j, k := range p.keep {
			if k {
				p.fs.Events = append(p.fs.Events, p.bodies[j])
			}
		}
		out.Sessions[i] = p.fs
	}
	return out
}

// settledCap is how many settled requests the page lists.
const settledCap = 10

// sessionPart is one session's summary on its way: its counts, which of
// its events are kept, and the requests it settled (each the indexes of
// its request and answers).
type sessionPart struct {
	fs      fleetSession
	keep    []bool
	bodies  [][]byte
	settled [][]int
}

func summarizeSession(evs []*event.Event, body func(*event.Event) []byte) *sessionPart {
	fs := fleetSession{Source: evs[0].Source, Session: evs[0].Session, Captures: map[string]int{}}
	keep := make([]bool, len(evs))
	keep[0] = true
	bodies := make([][]byte, len(evs))
	var last time.Time
	var first time.Time
	lastAt, firstAt, lastTerminal := -1, -1, -1
	var settled [][]int
	type run struct {
		starts []int
		done   bool
	}
	runs := map[string]*run{}
	var runOrder []string
	tools := map[string]bool{}
	pending := map[string]int{}   // request id -> index
	answers := map[string][]int{} // request id -> indexes of its answers
	ended := false
	for i, ev := range evs {
		b := body(ev)
		bodies[i] = b
		// The envelope's capture unless the ceiling rewrote the event;
		// data is read only for the few types that need it.
		capture := ev.Capture
		if len(b) != len(ev.Raw) || len(b) > 0 && &b[0] != &ev.Raw[0] {
			capture = gjson.GetBytes(b, "capture").String()
		}
		if capture == "" {
			capture = "metadata"
		}
		fs.Count++
		fs.Captures[capture]++
		if p := ev.Pos; i == 0 || (event.Pos{Epoch: fs.Pos.Epoch, Seq: fs.Pos.Seq}).Less(p) {
			fs.Pos.Epoch, fs.Pos.Seq = p.Epoch, p.Seq
		}
		if tm := gjson.GetBytes(b, "time"); tm.Type == gjson.String {
			if t, err := time.Parse(time.RFC3339Nano, tm.Str); err == nil {
				if lastAt < 0 || !t.Before(last) {
					last, lastAt = t, i
				}
				if firstAt < 0 || t.Before(first) {
					first, firstAt = t, i
				}
			}
		}
		callID := ""
		if strings.HasPrefix(ev.Type, "tool.") {
			if c := gjson.GetBytes(b, "data.tool.call_id"); c.Type == gjson.String {
				callID = c.Str
			}
		}
		switch ev.Type {
		case "session.started", "delegation.subagent.started", "delegation.subagent.stopped":
			keep[i] = true
		case "session.ended":
			keep[i] = true
			ended = true
			// Settled in the order they were asked, as the page settles them.
			ids := make([]string, 0, len(pending))
			for id := range pending {
				ids = append(ids, id)
			}
			slices.SortFunc(ids, func(a, b string) int { return pending[a] - pending[b] })
			for _, id := range ids {
				settled = append(settled, append([]int{pending[id]}, answers[id]...))
			}
			clear(pending)
		case "run.started":
			if ev.Run != "" {
				r := runs[ev.Run]
				if r == nil {
					r = &run{}
					runs[ev.Run] = r
					runOrder = append(runOrder, ev.Run)
				}
				r.starts = append(r.starts, i)
			}
		case "run.finished", "run.failed", "run.cancelled":
			if ev.Run != "" {
				r := runs[ev.Run]
				if r == nil {
					r = &run{}
					runs[ev.Run] = r
					runOrder = append(runOrder, ev.Run)
				}
				r.done = true
				lastTerminal = i
			}
		case "tool.requested":
			key := callID
			if key == "" {
				key = ev.ID
			}
			tools[key], tools[ev.ID] = true, true
			fs.Tools++
		case "tool.completed", "tool.failed", "tool.denied":
			if !(callID != "" && tools[callID]) && !(ev.Cause != "" && tools[ev.Cause]) {
				fs.Tools++
			}
			if ev.Type != "tool.completed" {
				fs.ToolsFailed++
			}
		case "error.raised":
			keep[i] = gjson.GetBytes(b, "data.fatal").Type == gjson.True
		case "attention.requested":
			if !ended {
				pending[ev.ID] = i
			}
		case "attention.answered":
			if _, ok := pending[ev.Subject]; ok {
				answers[ev.Subject] = append(answers[ev.Subject], i)
			}
		case "attention.resolved", "attention.timeout":
			if j, ok := pending[ev.Subject]; ok {
				settled = append(settled, append([]int{j, i}, answers[ev.Subject]...))
				delete(pending, ev.Subject)
			}
		}
	}
	if lastAt >= 0 {
		keep[lastAt] = true
	}
	if firstAt >= 0 {
		keep[firstAt] = true
	}
	if lastTerminal >= 0 {
		keep[lastTerminal] = true
	}
	for _, id := range runOrder {
		if r := runs[id]; !r.done {
			for _, i := range r.starts {
				keep[i] = true
			}
		}
	}
	for id, i := range pending {
		keep[i] = true
		for _, j := range answers[id] {
			keep[j] = true
		}
	}
	return &sessionPart{fs: fs, keep: keep, bodies: bodies, settled: settled}
}
