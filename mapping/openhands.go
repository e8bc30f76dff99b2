package mapping

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// OpenHands is the AEP-0002 Annex A.15 table for the OpenHands agent
// server's events (software-agent-sdk v1.35.0, their transport dump), as
// `aep-hook follow openhands` reads them from each conversation's events
// socket (TransportOpenHands): one moment is one event in Raw, its kind in
// Facts.Name, its id in Facts.ID, the conversation (the AEP session) in
// Facts.Session.
//
// Runs are synthesized from the server's own execution_status transitions
// (openhandsStatus): entering running opens one, finished closes
// run.finished, error and stuck run.failed, deleting run.cancelled and the
// session (killed); running → idle closes honestly with reason idle, paused
// and waiting_for_confirmation never close. Entering waiting_for_confirmation
// is attention.requested (no options, no respond path: the bridge never
// answers); leaving it resolves the request (answered, or dismissed when the
// exit is paused or deleting). Observations split on their typed is_error;
// AgentErrorEvent fails its call; a hook's UserRejectObservation denies the
// call by policy, while a user's stays vendor-scoped (a human decision, not
// a policy block). llm_response_id stamps the envelope step. Every event
// carries the vendor's naive timestamp and event id at metadata (vendor_ts,
// vendor_event_id); the envelope time is the bridge's. Everything else rides
// x.openhands.{family}.{leaf} at debug, named mechanically from the kind;
// streaming deltas only behind the opt-in; TokenEvent maps to nothing, ever.
func OpenHands() Vendor {
	return Vendor{
		Name:      "openhands",
		Summary:   "OpenHands agent-server events WebSocket (aep-hook follow openhands), read-only",
		Transport: TransportOpenHands,
		Identify:  identifyFacts,
		Map:       mapOpenHands,
		Seed:      seedOpenHands,
	}
}

// Table-state keys of the openhands table: the session announced, the last
// execution status seen, the open run, how many runs were opened, the step
// and tool name of each call, the pending confirmation.
const (
	ohSeen    = "oh.seen"
	ohStatus  = "oh.status"
	ohRuns    = "oh.runs"
	ohStep    = "oh.step:"
	ohWaiting = "attn:oh:confirmation"
)

// seedOpenHands prepares what the event pins presume: the conversation
// already announced, and a state update's execution status already the
// one it carries (the event pins state mapEvent alone; the transitions are
// the status_transitions pins').
func seedOpenHands(_ []byte, m Moment, st *State) {
	st.Set(ohSeen, "1")
	if m.Facts.Name == "ConversationStateUpdateEvent" {
		if s := ohEventStatus(m.Raw); s != "" {
			st.Set(ohStatus, s)
		}
	}
}

// ohEventStatus is the execution status a state update carries, "" when
// it carries none.
func ohEventStatus(raw []byte) string {
	if Str(raw, "key") == "full_state" {
		return Str(raw, "value.execution_status")
	}
	if Str(raw, "key") == "execution_status" {
		return Str(raw, "value")
	}
	return ""
}

// ohVendorType is the mechanical x.openhands type of a kind: snake-cased,
// a trailing "_event" dropped, family split from leaf at the last
// underscore, ".event" appended to a single segment.
func ohVendorType(kind string) string {
	s := SnakeCase(kind)
	if t := strings.TrimSuffix(s, "_event"); t != "" {
		s = t
	}
	if i := strings.LastIndexByte(s, '_'); i > 0 {
		return vendorEventType("openhands", s[:i], s[i+1:])
	}
	return vendorEventType("openhands", s)
}

func mapOpenHands(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	kind := m.Facts.Name
	var ds []Draft
	if _, seen := st.Get(ohSeen); !seen {
		st.Set(ohSeen, "1")
		ds = append(ds, Draft{Type: "session.started", Data: map[string]any{
			"client": map[string]any{"name": "openhands-agent-server"},
		}})
	}
	// Every event names the vendor's own time and id, at metadata.
	base := func(kv ...any) map[string]any {
		return Data(append([]any{"vendor_ts", Str(raw, "timestamp"), "vendor_event_id", Str(raw, "id")}, kv...)...)
	}
	run := currentRun(st)
	ext := func(kv ...any) Draft {
		d := Draft{Type: ohVendorType(kind), Run: run, Severity: debug, Data: base(kv...)}
		d.Levels = extLevels(redact.Metadata, "vendor_ts", "vendor_event_id")
		return d
	}
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_call_id")
	step := ""
	if call != "" {
		step, _ = st.Get(ohStep + call)
	}
	switch kind {
	case "ActionEvent":
		step = Str(raw, "llm_response_id")
		if call != "" && step != "" {
			st.Set(ohStep+call, step)
		}
		d := toolRequested(raw, tool, call, "action")
		risk := Str(raw, "security_risk")
		if risk == "UNKNOWN" {
			risk = ""
		}
		d.Data = mergeData(base("risk", risk), d.Data)
		d.Run, d.Step = run, step
		return append(ds, d), nil
	case "ObservationEvent":
		var d Draft
		if gjson.GetBytes(raw, "observation.is_error").Bool() {
			d = toolFailed(tool, call, "tool_error", ohText(raw, "observation.content"))
		} else {
			// The result's digest is its text's; the whole observation
			// rides for the gate to keep only at full.
			d = toolCompleted(raw, tool, call, "observation")
			d.Data["result_digest"] = textDigest(raw, "observation.content")
		}
		st.Del(ohStep + call)
		d.Data = mergeData(base(), d.Data)
		d.Run, d.Step = run, step
		return append(ds, d), nil
	case "AgentErrorEvent":
		d := toolFailed(tool, call, "agent_error", Str(raw, "error"))
		st.Del(ohStep + call)
		d.Data = mergeData(base(), d.Data)
		d.Run, d.Step = run, step
		return append(ds, d), nil
	case "UserRejectObservation":
		st.Del(ohStep + call)
		if Str(raw, "rejection_source") == "hook" {
			return append(ds, Draft{Type: "tool.denied", Subject: tool, Run: run, Step: step,
				Data: base("tool", ToolRef(tool, call), "by", "policy")}), nil
		}
		// A user's rejection is a human decision, not a policy block:
		// tool.denied's "by" has no user. The reason is the user's words.
		d := ext("tool", ToolRef(tool, call), "reason", Str(raw, "rejection_reason"))
		d.Subject, d.Step = tool, step
		d.Levels["tool"], d.Levels["reason"] = redact.Metadata, redact.Redacted
		return append(ds, d), nil
	case "MessageEvent":
		d := ext("role", Str(raw, "llm_message.role"), "skills", ohCount(raw, "activated_skills"),
			"content", Value(raw, "llm_message.content"))
		d.Step = Str(raw, "llm_response_id")
		d.Levels["role"], d.Levels["skills"], d.Levels["content"] = redact.Metadata, redact.Metadata, redact.Redacted
		return append(ds, d), nil
	case "Condensation":
		return append(ds, Draft{Type: "session.compacted", Run: run,
			Data: base("forgotten", ohCount(raw, "forgotten_event_ids"))}), nil
	case "CondensationSummaryEvent":
		d := ext("summary", Value(raw, "summary"))
		d.Levels["summary"] = redact.Redacted
		return append(ds, d), nil
	case "ConversationStateUpdateEvent":
		key := Str(raw, "key")
		if key == "full_state" {
			ds = append(ds, Draft{Type: "state.snapshot", Run: run, Data: base("state", Value(raw, "value"))})
		} else {
			ds = append(ds, Draft{Type: "state.delta", Run: run, Data: base("key", key, "delta", Value(raw, "value"))})
		}
		if status := ohEventStatus(raw); status != "" {
			ds = append(ds, openhandsStatus(m, st, status)...)
		}
		return ds, nil
	case "ConversationErrorEvent":
		// The run's close comes from the status plane; the detail is the
		// vendor's text, gated at redacted.
		return append(ds, Draft{Type: "error.raised", Run: run,
			Data: base("code", Str(raw, "code"), "error", omitEmpty(Data("message", Str(raw, "detail"))))}), nil
	case "StreamingDeltaEvent":
		if !m.Deltas {
			return ds, nil // not persisted by the vendor: a replay lacks them too
		}
		d := ext("delta", Value(raw, "content"))
		d.Levels["delta"] = redact.Redacted
		return append(ds, d), nil
	case "TokenEvent":
		return ds, nil // raw token-id planes are not observability
	}
	return append(ds, ext()), nil
}

// openhandsStatus is the pure status-transition table behind run synthesis
// and the confirmation loop: the moments of going from the last status
// seen (none at first) to next.
func openhandsStatus(m Moment, st *State, next string) []Draft {
	prev, _ := st.Get(ohStatus)
	if prev == next {
		return nil
	}
	st.Set(ohStatus, next)
	var ds []Draft
	if prev == "waiting_for_confirmation" {
		res := "answered"
		if next == "paused" || next == "deleting" {
			res = "dismissed"
		}
		if _, ok := st.Get(attnPendingPrefix + ohWaiting); ok {
			ds = append(ds, settleAttention(st, ohWaiting, res, ""))
		} else {
			ds = append(ds, Draft{Type: "attention.resolved", Data: map[string]any{"resolution": res}})
		}
	}
	active := prev == "running" || prev == "paused" || prev == "waiting_for_confirmation"
	switch next {
	case "running", "waiting_for_confirmation":
		if !active {
			if open := currentRun(st); open != "" {
				// A run a waiting → idle exit left open closes before the
				// next one opens.
				ds = append(ds, Draft{Type: "run.finished", Run: sessionRuns.end(st, m.Nonce), Data: map[string]any{"reason": "idle"}})
			}
			n, _ := strconv.Atoi(must(st.Get(ohRuns)))
			st.Set(ohRuns, strconv.Itoa(n+1))
			id := m.Facts.Session + ":" + strconv.Itoa(n+1)
			if m.Facts.Session == "" {
				id = m.Nonce
			}
			sessionRuns.begin(st, id)
			ds = append(ds, Draft{Type: "run.started", Run: id, Data: map[string]any{}})
		}
		if next == "waiting_for_confirmation" {
			run := currentRun(st)
			ds = append(ds, raiseAttention(st, ohWaiting, run)...)
			ds = append(ds, Draft{Type: "attention.requested", Run: run, Mark: ohWaiting, Data: map[string]any{
				"kind": "permission", "prompt": "Awaiting confirmation for a pending action",
			}})
		}
	case "finished":
		ds = append(ds, ohClose(m, st, "run.finished", map[string]any{})...)
	case "error", "stuck":
		ds = append(ds, ohClose(m, st, "run.failed", map[string]any{"reason": next})...)
	case "idle":
		if prev == "running" {
			ds = append(ds, ohClose(m, st, "run.finished", map[string]any{"reason": "idle"})...)
		}
	case "deleting":
		ds = append(ds, ohClose(m, st, "run.cancelled", map[string]any{"reason": "deleting"})...)
		ds = append(ds, Draft{Type: "session.ended", Data: map[string]any{"reason": "killed"}})
	}
	return ds
}

// ohClose closes the open run with the terminal typ (nothing when no run is
// open).
func ohClose(m Moment, st *State, typ string, data map[string]any) []Draft {
	if currentRun(st) == "" {
		return nil
	}
	return []Draft{{Type: typ, Run: sessionRuns.end(st, m.Nonce), Data: data}}
}

// must drops the presence flag of a state lookup.
func must(v string, _ bool) string { return v }

// ohCount is the length of the array at path, nil when there is none.
func ohCount(raw []byte, path string) any {
	r := gjson.GetBytes(raw, path)
	if !r.IsArray() {
		return nil
	}
	return int64(len(r.Array()))
}

// ohText joins the text parts of the content list at path.
func ohText(raw []byte, path string) string {
	return contentText(gjson.GetBytes(raw, path))
}

// mergeData adds b's members to a (b wins) and returns a.
func mergeData(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}
