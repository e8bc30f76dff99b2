package mapping

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// AGUI is the AEP-0002 Annex A.14 table for AG-UI run-event streams
// (@ag-ui/core 0.0.57), observed by the HTTP tee proxy (TransportAGUI). One
// moment is one event in Raw; the tee's facts carry its type (Facts.Name)
// and the stream's threadId and runId (Facts.Thread, Facts.Run: the event's
// own, else the stream's, since most events do not carry them), so threadId
// is the session and runId the run, real vendor ids with no synthesis.
// Lifecycle, steps, tools and state map to core; STEP_* stamps the envelope
// step; the tool name of a result is joined from TOOL_CALL_START; token
// deltas are suppressed unless the moment opts into deltas; everything else
// rides mechanically in x.agui.* and REASONING_ENCRYPTED_VALUE maps to
// nothing, ever.
func AGUI() Vendor {
	return Vendor{
		Name:      "agui",
		Summary:   "AG-UI HTTP/SSE tee: run, step, tool and state events of an agent's event stream",
		Transport: TransportAGUI,
		Identify:  aguiIdentify,
		Map:       aguiMap,
	}
}

func aguiIdentify(m Moment) (string, string) {
	s := m.Facts.Thread
	if s == "" {
		s = UnknownSession
	}
	return aguiType(m.Facts.Name), s
}

// aguiType returns an event type with deprecated aliases resolved.
func aguiType(t string) string {
	switch t {
	case "THINKING_START", "THINKING_END":
		return "REASONING_" + t[len("THINKING_"):]
	case "THINKING_TEXT_MESSAGE_START", "THINKING_TEXT_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_END":
		// The deprecated aliases map identically to their replacements.
		return "REASONING_MESSAGE_" + t[len("THINKING_TEXT_MESSAGE_"):]
	}
	return t
}

// aguiDelta reports whether t is a token-delta event, kept only behind
// the opt-in.
func aguiDelta(t string) bool {
	switch t {
	case "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK", "REASONING_MESSAGE_CONTENT",
		"REASONING_MESSAGE_CHUNK", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK":
		return true
	}
	return false
}

// Table-state keys: tool names by call id, message roles by message id, the
// step in progress, the runs started under a wire runId and the AEP run it
// stands for now (a reused runId), interrupts awaiting their resume.
const aguiStepKey = "agui.step"

func aguiToolKey(id string) string        { return "agui.tool:" + id }
func aguiRoleKey(id string) string        { return "agui.role:" + id }
func aguiRunKey(stream, id string) string { return "agui.run:" + stream + ":" + id }
func aguiRunsKey(id string) string        { return "agui.runs:" + id }
func aguiIntMark(id string) string        { return "agui.int:" + id }
func aguiIntKey(id string) string         { return "agui.intr:" + id }

// aguiRun is the AEP run a wire runId stands for on a stream (Instance):
// itself, or for the n-th run reusing it (n > 1), "runId#n", so that a
// reused runId opens and closes a run of its own instead of being folded
// into the first (two streams' events may interleave: the mapping is the
// stream's).
func aguiRun(st *State, f Facts) string {
	if r, ok := st.Get(aguiRunKey(f.Instance, f.Run)); ok {
		return r
	}
	return f.Run
}

// aguiStartRun opens the run of a RUN_STARTED: the wire runId the first
// time, qualified by its count after.
func aguiStartRun(st *State, f Facts) string {
	wire := f.Run
	if wire == "" {
		return ""
	}
	v, _ := st.Get(aguiRunsKey(wire))
	n, _ := strconv.Atoi(v)
	st.Set(aguiRunsKey(wire), strconv.Itoa(n+1))
	if n == 0 {
		return wire
	}
	run := wire + "#" + strconv.Itoa(n+1)
	st.Set(aguiRunKey(f.Instance, wire), run)
	return run
}

// aguiOutcome is RUN_FINISHED's outcome: "success", "interrupt" or
// "cancelled" (@ag-ui/core 0.0.57 and 1.0.0 state it as an object with a
// type; a bare string is read the same way); "" when absent.
func aguiOutcome(raw []byte) string {
	o := gjson.GetBytes(raw, "outcome")
	if o.Type == gjson.String {
		return o.Str
	}
	return o.Get("type").String()
}

// aguiInterrupts lists what a run finishing with outcome interrupt waits
// for: outcome.interrupts, else interrupts or interrupt.
func aguiInterrupts(raw []byte) []gjson.Result {
	for _, p := range []string{"outcome.interrupts", "interrupts", "interrupt"} {
		r := gjson.GetBytes(raw, p)
		if r.IsArray() {
			return r.Array()
		}
		if r.IsObject() {
			return []gjson.Result{r}
		}
	}
	return nil
}

// aguiFinished maps RUN_FINISHED by its outcome: an interrupt asks for
// each interrupt's answer and finishes the run (resuming is a new run),
// cancelled cancels it, anything else finishes it with the result as its
// summary.
func aguiFinished(raw []byte, st *State, run string) []Draft {
	switch aguiOutcome(raw) {
	case "cancelled":
		return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "user")}}
	case "interrupt":
		var ds []Draft
		for _, in := range aguiInterrupts(raw) {
			id, reason, call := in.Get("id").String(), in.Get("reason").String(), in.Get("toolCallId").String()
			kind := "input"
			if call != "" || strings.Contains(reason, "approv") || strings.Contains(reason, "permission") {
				kind = "permission"
			}
			prompt := in.Get("message").String()
			if prompt == "" {
				prompt = "Interrupt: " + reason
			}
			d := Draft{Type: "attention.requested", Subject: call, Run: run, Data: Data("kind", kind, "prompt", prompt)}
			if id != "" {
				d.Mark = aguiIntMark(id)
				st.Set(aguiIntKey(id), "1")
			}
			ds = append(ds, d)
		}
		return append(ds, Draft{Type: "run.finished", Run: run, Data: Data("stop_reason", "interrupt")})
	}
	return []Draft{{Type: "run.finished", Run: run, Data: Data("summary", aguiSummary(raw))}}
}

// aguiSummary is the run's result as run.finished.summary, a string: the
// result itself when it is one, else its JSON text.
func aguiSummary(raw []byte) any {
	r := gjson.GetBytes(raw, "result")
	switch {
	case !r.Exists() || r.Type == gjson.Null:
		return nil
	case r.Type == gjson.String:
		return r.Str
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(r.Raw)) != nil {
		return r.Raw
	}
	return b.String()
}

// aguiResumed maps the resume entries a run's input carries (RUN_STARTED
// echoes it as input): each answers an interrupt of an earlier run of the
// thread, resolved (answered) or cancelled (dismissed).
func aguiResumed(raw []byte, st *State, run string) []Draft {
	var ds []Draft
	for _, e := range gjson.GetBytes(raw, "input.resume").Array() {
		id := e.Get("interruptId").String()
		mark := aguiIntMark(id)
		_, seen := st.Get(aguiIntKey(id))
		st.Del(aguiIntKey(id))
		resolved := Draft{Type: "attention.resolved", Run: run, SubjectRef: mark, CauseRef: mark}
		if e.Get("status").String() != "resolved" {
			resolved.Data = Data("resolution", "dismissed")
			ds = append(ds, resolved)
			continue
		}
		ds = append(ds, Draft{Type: "attention.answered", Run: run, SubjectRef: mark, CauseRef: mark,
			Data: Data("answer", Data("option", "resolved"), "via", "oob")})
		if seen {
			resolved.Data = Data("resolution", "answered")
			ds = append(ds, resolved)
		}
	}
	return ds
}

// aguiVendorType lowers an UPPER_SNAKE event type and splits family from
// leaf at the last underscore: TEXT_MESSAGE_CONTENT → x.agui.text_message.content.
func aguiVendorType(t string) string {
	s := SnakeCase(strings.ToLower(t))
	if i := strings.LastIndexByte(s, '_'); i > 0 {
		return vendorEventType("agui", s[:i], s[i+1:])
	}
	return vendorEventType("agui", s)
}

func aguiMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	t := aguiType(m.Facts.Name)
	run := aguiRun(st, m.Facts)
	step, _ := st.Get(aguiStepKey)
	if m.Facts.Kind == KindEnd {
		// The stream ended after RUN_STARTED with no terminal.
		st.Del(aguiStepKey)
		if m.Facts.Reason == "client_aborted" {
			return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "user", "reason", m.Facts.Reason)}}, nil
		}
		return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", m.Facts.Reason, "error", Data("type", m.Facts.Reason))}}, nil
	}
	vendor := func(d map[string]any, lv map[string]redact.Level) []Draft {
		if d == nil {
			d = map[string]any{}
		}
		return []Draft{{Type: aguiVendorType(t), Run: run, Step: step, Severity: debug, Data: d, Levels: lv}}
	}
	if aguiDelta(t) {
		if !m.Deltas {
			return nil, nil
		}
		return vendor(Data("delta", Value(raw, "delta")), deltaLevels(redact.Redacted)), nil
	}
	switch t {
	case "RUN_STARTED":
		st.Del(aguiStepKey)
		run = aguiStartRun(st, m.Facts)
		ds := []Draft{{Type: "run.started", Run: run, Data: Data("trigger", "user", "parent_run", Str(raw, "parentRunId"))}}
		return append(ds, aguiResumed(raw, st, run)...), nil
	case "RUN_FINISHED":
		st.Del(aguiStepKey)
		return aguiFinished(raw, st, run), nil
	case "RUN_ERROR":
		st.Del(aguiStepKey)
		reason := Str(raw, "code")
		if reason == "" {
			reason = "error"
		}
		return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", reason,
			"error", Data("message", Str(raw, "message")))}}, nil
	case "STEP_STARTED", "STEP_FINISHED":
		name := Str(raw, "stepName")
		typ := "run.step.started"
		if t == "STEP_FINISHED" {
			typ = "run.step.finished"
			st.Del(aguiStepKey)
		} else if name != "" {
			st.Set(aguiStepKey, name)
		}
		d := map[string]any{}
		if t == "STEP_STARTED" {
			d = Data("name", name)
		}
		return []Draft{{Type: typ, Subject: name, Run: run, Step: name, Data: d}}, nil
	case "TOOL_CALL_START":
		callID, name := Str(raw, "toolCallId"), Str(raw, "toolCallName")
		if callID != "" && name != "" {
			st.Set(aguiToolKey(callID), name)
		}
		if name == "" {
			name = "unknown"
		}
		return []Draft{{Type: "tool.requested", Subject: name, Run: run, Step: step, Data: Data("tool", ToolRef(name, callID))}}, nil
	case "TOOL_CALL_RESULT":
		callID := Str(raw, "toolCallId")
		name := Str(raw, "toolCallName")
		if name == "" {
			name, _ = st.Get(aguiToolKey(callID))
		}
		if name == "" {
			name = "unknown"
		}
		st.Del(aguiToolKey(callID))
		d := Data("tool", ToolRef(name, callID))
		if c := gjson.GetBytes(raw, "content"); c.Exists() && c.Type != gjson.Null {
			d["result_digest"] = redact.DigestJSON([]byte(c.Raw))
			d["result"] = c.Value()
		}
		return []Draft{{Type: "tool.completed", Subject: callID, Run: run, Step: step, Data: d}}, nil
	case "TEXT_MESSAGE_START":
		id, role := Str(raw, "messageId"), Str(raw, "role")
		if id != "" && role != "" {
			st.Set(aguiRoleKey(id), role)
		}
		return []Draft{{Type: aguiVendorType(t), Subject: id, Run: run, Step: step, Severity: debug,
			Data: Data("role", role), Levels: extLevels(redact.Metadata, "role")}}, nil
	case "TEXT_MESSAGE_END":
		id, role := Str(raw, "messageId"), Str(raw, "role")
		if r, ok := st.Get(aguiRoleKey(id)); ok && role == "" {
			role = r
		}
		st.Del(aguiRoleKey(id))
		if role != "" && role != "assistant" {
			return nil, nil // the UI's own side; the agent's replies are the observable
		}
		return []Draft{{Type: aguiVendorType(t), Subject: id, Run: run, Step: step, Severity: debug, Data: map[string]any{}}}, nil
	case "REASONING_ENCRYPTED_VALUE":
		return nil, nil
	case "STATE_SNAPSHOT":
		return []Draft{{Type: "state.snapshot", Run: run, Step: step, Data: Data("state", Value(raw, "snapshot"))}}, nil
	case "STATE_DELTA":
		d := Data("delta", Value(raw, "delta"))
		if p := gjson.GetBytes(raw, "delta"); p.IsArray() {
			d["ops"] = len(p.Array())
		}
		return []Draft{{Type: "state.delta", Run: run, Step: step, Data: d}}, nil
	case "MESSAGES_SNAPSHOT":
		return vendor(Data("messages", Value(raw, "messages")), extLevels(redact.Redacted, "messages")), nil
	case "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA":
		return vendor(Data("content", Value(raw, "content"), "patch", Value(raw, "patch")),
			extLevels(redact.Redacted, "content", "patch")), nil
	case "RAW":
		// The raw payload never rides below full: undeclared means full.
		return vendor(Data("event", Value(raw, "event")), nil), nil
	case "CUSTOM":
		d := Data("name", Str(raw, "name"), "value", Value(raw, "value"))
		return vendor(d, map[string]redact.Level{"name": redact.Metadata, "value": redact.Redacted}), nil
	}
	return vendor(nil, nil), nil
}
