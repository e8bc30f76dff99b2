package mapping

import (
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
// step in progress.
const aguiStepKey = "agui.step"

func aguiToolKey(id string) string { return "agui.tool:" + id }
func aguiRoleKey(id string) string { return "agui.role:" + id }

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
	run := m.Facts.Run
	step, _ := st.Get(aguiStepKey)
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
		return []Draft{{Type: "run.started", Run: run, Data: Data("trigger", "user", "parent_run", Str(raw, "parentRunId"))}}, nil
	case "RUN_FINISHED":
		st.Del(aguiStepKey)
		return []Draft{{Type: "run.finished", Run: run, Data: Data("summary", Value(raw, "result"))}}, nil
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
