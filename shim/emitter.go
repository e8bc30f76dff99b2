package shim

import (
	"fmt"
	"net/url"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// Emitter turns a vendor's drafts into AEP events: it is the only code that
// builds envelopes and the only path to a sink, and every payload passes the
// capture gate here.
type Emitter struct {
	Host     string           // the {host} of source URIs
	Policy   redact.Policy    // capture ceilings
	Pipeline *redact.Pipeline // the §9.4 pipeline for redacted fields
	Store    Store
	Sink     Sink
	Now      func() time.Time // nil means time.Now
	IDs      *IDs             // nil means a fresh NewIDs
}

// Result says what one moment produced.
type Result struct {
	Hook       string
	Session    string
	Events     []Event
	Suppressed int // terminals dropped because their unit was already closed
}

// Handle maps one moment with v's table and emits its events, all under the
// session's lock so concurrent processes of one session keep seq order.
func (e *Emitter) Handle(v mapping.Vendor, m mapping.Moment) (Result, error) {
	hook, session := v.Identify(m)
	if session == "" {
		session = mapping.UnknownSession
	}
	if m.Hook == "" {
		m.Hook = hook
	}
	res := Result{Hook: hook, Session: session}
	err := e.Store.Locked(v.Name, session, func(tx *Tx) error {
		drafts, err := v.Map(m, &tx.State.Table)
		if err != nil {
			return fmt.Errorf("map %s %s: %w", v.Name, hook, err)
		}
		if len(drafts) == 0 {
			return nil
		}
		evs, suppressed := e.build(v.Name, session, drafts, tx.State)
		res.Events, res.Suppressed = evs, suppressed
		lines := make([][]byte, 0, len(evs))
		for i := range evs {
			l, err := evs[i].MarshalLine()
			if err != nil {
				return fmt.Errorf("encode %s: %w", evs[i].Type, err)
			}
			lines = append(lines, l)
		}
		if err := tx.Save(); err != nil {
			return err
		}
		if len(lines) == 0 {
			return nil
		}
		return e.Sink.Write(v.Name, session, lines)
	})
	return res, err
}

func (e *Emitter) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// build turns drafts into envelopes, assigning positions from st.
func (e *Emitter) build(agent, session string, drafts []mapping.Draft, st *SessionState) ([]Event, int) {
	if e.IDs == nil {
		e.IDs = NewIDs()
	}
	evs := make([]Event, 0, len(drafts))
	suppressed := 0
	for _, d := range drafts {
		sess := session
		if d.Session != "" {
			sess = d.Session
		}
		if closeKey := terminalKey(d); closeKey != "" {
			if _, done := st.Refs.Get(closeKey); done {
				suppressed++
				continue
			}
			st.Refs.Set(closeKey, "1")
		}
		t := e.now().UTC()
		ev := Event{
			AEP:      Version,
			ID:       e.IDs.New(t),
			Type:     d.Type,
			Subject:  d.Subject,
			Time:     t.Format("2006-01-02T15:04:05.000Z"),
			Agent:    agent,
			Severity: d.Severity,
		}
		if ev.Severity == "" {
			ev.Severity = defaultSeverity(d.Type)
		}
		if d.SubjectRef != "" {
			if id, ok := st.Refs.Get(d.SubjectRef); ok {
				ev.Subject = id
			}
		}
		ceiling := e.Policy.Ceiling(d.Type)
		data, honoured := redact.Gate(redact.Content{
			Type: d.Type, Agent: agent, Subject: ev.Subject,
			Data: d.Data, Meta: d.Meta, Levels: d.Levels,
		}, ceiling, e.Pipeline)
		ev.Data, ev.Capture = data, honoured.String()
		if AgentScoped(d.Type) {
			ev.Source = e.source(agent, "")
		} else {
			ev.Source = e.source(agent, sess)
			ev.Session, ev.Run, ev.Step = sess, d.Run, d.Step
			seq, epoch := st.Next, st.Epoch
			st.Next++
			ev.Seq, ev.Epoch = &seq, &epoch
		}
		ev.Cause = e.link(d, st, ev.ID)
		evs = append(evs, ev)
	}
	return evs, suppressed
}

// source is the RECOMMENDED source URI; the untrusted session id is encoded
// as one path segment.
func (e *Emitter) source(agent, session string) string {
	s := "aep://" + url.PathEscape(e.Host) + "/agent/" + url.PathEscape(agent)
	if session != "" {
		s += "/session/" + url.PathEscape(session)
	}
	return s
}

// link records the references this event opens and returns its cause: an
// explicit CauseRef, else the start its terminal pairs with.
func (e *Emitter) link(d mapping.Draft, st *SessionState, id string) string {
	var cause string
	if d.CauseRef != "" {
		cause, _ = st.Refs.Get(d.CauseRef)
	}
	open, closeOf := pairKeys(d)
	if cause == "" && closeOf != "" {
		cause, _ = st.Refs.Get(closeOf)
	}
	if open != "" {
		st.Refs.Set(open, id)
	}
	if d.Mark != "" {
		st.Refs.Set(d.Mark, id)
	}
	return cause
}

// pairKeys names the reference a start event opens or a terminal closes
// (AEP-0002 §2 convention 1): runs by run id, tool calls by call id,
// subagents by subject.
func pairKeys(d mapping.Draft) (open, closes string) {
	switch d.Type {
	case "run.started":
		if d.Run != "" {
			return "run:" + d.Run, ""
		}
	case "run.finished", "run.failed", "run.cancelled":
		if d.Run != "" {
			return "", "run:" + d.Run
		}
	case "tool.requested":
		if c := callID(d.Data); c != "" {
			return "tool:" + c, ""
		}
	case "tool.completed", "tool.failed", "tool.denied":
		if c := callID(d.Data); c != "" {
			return "", "tool:" + c
		}
	case "delegation.subagent.started":
		if d.Subject != "" {
			return "sub:" + d.Subject, ""
		}
	case "delegation.subagent.stopped":
		if d.Subject != "" {
			return "", "sub:" + d.Subject
		}
	}
	return "", ""
}

// terminalKey names the unit a terminal closes, for terminal exclusivity
// (AEP-0002 §2 convention 5): a run's one terminal, a session's one end.
func terminalKey(d mapping.Draft) string {
	switch d.Type {
	case "run.finished", "run.failed", "run.cancelled":
		if d.Run != "" {
			return "end:run:" + d.Run
		}
	case "session.ended":
		return "end:session:" + d.Session
	}
	return ""
}

func callID(data map[string]any) string {
	tool, _ := data["tool"].(map[string]any)
	id, _ := tool["call_id"].(string)
	return id
}

// defaultSeverity is the severity a type gets when its draft names none;
// "" leaves the AEP default (info) implicit.
func defaultSeverity(typ string) string {
	switch typ {
	case "attention.requested", "tool.denied":
		return "notice"
	case "tool.failed", "attention.timeout":
		return "warning"
	case "run.failed", "error.raised":
		return "error"
	}
	return ""
}
