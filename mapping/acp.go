package mapping

import (
	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// ACP is the AEP-0002 Annex A.13 table for the Agent Client Protocol
// (editor↔agent newline-delimited JSON-RPC), observed read-only through the
// stdio tee (TransportACP). One moment is one JSON-RPC message in Raw; the
// tee's facts say its kind, method and id, the session it names (for a
// response, the session and method of the request it answers, joined by
// JSON-RPC id per direction) and the tee's own token (Facts.Instance), which
// qualifies run ids across tee restarts. The session/prompt turn is the run
// (its request id is the run id), stopReason picks the terminal,
// tool_call/tool_call_update statuses fork onto the tool trio, the editor's
// permission gate is observed read-only, plans stay in x.acp.* as counts,
// and message/thought chunks are suppressed unless the moment opts into
// deltas.
func ACP() Vendor {
	return Vendor{
		Name:      "acp",
		Summary:   "Agent Client Protocol stdio tee: prompt-turn runs, tool status forks, the read-only permission gate",
		Transport: TransportACP,
		Identify:  acpIdentify,
		Map:       acpMap,
	}
}

func acpIdentify(m Moment) (string, string) {
	hook := m.Facts.Kind.String() + ":" + m.Facts.Method
	if s := m.Facts.Session; s != "" {
		return hook, s
	}
	if s := Str(m.Raw, "result.sessionId"); s != "" {
		return hook, s
	}
	return hook, UnknownSession
}

// Table-state keys: the run a prompt request opened (by rpc id), the turn
// in progress, tool names by call id, permission requests seen (by rpc id).
const acpCurRun = "acp.cur"

func acpRunKey(id string) string  { return "acp.run:" + id }
func acpToolKey(id string) string { return "acp.tool:" + id }
func acpPermKey(id string) string { return "acp.perm:" + id }

// acpAttnMark is the emitter reference of a permission request's event.
func acpAttnMark(id string) string { return "acp.attn:" + id }

// acpRunID is the run id of the prompt turn with rpc id id: the wire id,
// qualified by the tee's token when the tee gave one; the nonce when the
// moment has no id at all.
func acpRunID(m Moment, id string) string {
	if id == "" {
		return m.Nonce
	}
	if t := m.Facts.Instance; t != "" {
		return t + ":" + id
	}
	return id
}

func acpMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	method, id := m.Facts.Method, m.Facts.ID
	cur, _ := st.Get(acpCurRun)
	switch m.Facts.Kind {
	case KindEnd:
		// A unit the transport saw end without its terminal: mapped by the
		// interrupted-turn rule (issue 11); until then it maps to nothing.
		return nil, nil
	case KindResponse:
		return acpResponse(m, st, method, id), nil
	default:
		switch method {
		case "session/prompt":
			run := acpRunID(m, id)
			if id != "" {
				st.Set(acpRunKey(id), run)
			}
			st.Set(acpCurRun, run)
			d := Data("trigger", "user")
			if p := gjson.GetBytes(raw, "params.prompt"); p.Exists() {
				d["message_digest"] = redact.DigestJSON([]byte(p.Raw))
				d["prompt"] = p.Value()
			}
			return []Draft{{Type: "run.started", Run: run, Data: d}}, nil
		case "session/request_permission":
			return []Draft{acpPermission(raw, st, id, cur)}, nil
		case "session/update":
			return acpUpdate(m, st, cur), nil
		case "session/close", "session/delete":
			return []Draft{{Type: "session.ended", Data: Data("reason", SnakeCase(method[len("session/"):]))}}, nil
		}
		return []Draft{{Type: vendorEventType("acp", wireSegments(method)...), Run: cur, Severity: debug, Data: map[string]any{}}}, nil
	}
}

// acpPermission maps the editor's permission gate, observed read-only: no
// options claim and no respond_via, the option list as a count.
func acpPermission(raw []byte, st *State, id, run string) Draft {
	title := Str(raw, "params.toolCall.title")
	prompt := "Permission requested"
	if title != "" {
		prompt += ": " + title
	}
	d := Data("kind", "permission", "prompt", prompt)
	if opts := gjson.GetBytes(raw, "params.options"); opts.IsArray() {
		d["options_count"] = len(opts.Array())
	}
	dr := Draft{Type: "attention.requested", Subject: Str(raw, "params.toolCall.toolCallId"), Run: run, Data: d}
	if id != "" {
		st.Set(acpPermKey(id), "1")
		dr.Mark = acpAttnMark(id)
	}
	return dr
}

// acpResponse maps a response by the method of the request it answers.
func acpResponse(m Moment, st *State, method, id string) []Draft {
	raw := m.Raw
	failed := gjson.GetBytes(raw, "error").Exists()
	switch method {
	case "session/new", "session/load":
		if failed {
			return nil
		}
		return []Draft{{Type: "session.started", Data: Data("client", Data("name", "acp"))}}
	case "session/prompt":
		run := ""
		if id != "" {
			run, _ = st.Get(acpRunKey(id))
			st.Del(acpRunKey(id))
		}
		if run == "" {
			run = acpRunID(m, id)
		}
		if cur, _ := st.Get(acpCurRun); cur == run {
			st.Del(acpCurRun)
		}
		if failed {
			return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", "error",
				"error", Data("type", "rpc_error", "message", Str(raw, "error.message")))}}
		}
		switch reason := Str(raw, "result.stopReason"); reason {
		case "cancelled":
			return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "user")}}
		case "refusal":
			return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", "refusal")}}
		default:
			// end_turn, max_tokens, max_turn_requests and any later bounded
			// termination: completions with the reason as metadata.
			return []Draft{{Type: "run.finished", Run: run, Data: Data("stop_reason", reason)}}
		}
	case "session/request_permission":
		return acpPermissionOutcome(raw, st, id, failed)
	case "":
		return []Draft{{Type: "x.acp.response.unmatched", Severity: debug, Data: map[string]any{}}}
	}
	// Machinery responses: the request was recorded; the answer adds nothing.
	return nil
}

// acpPermissionOutcome maps the editor's answer to the gate: the selected
// option verbatim via oob (then resolved, when the request was seen), or a
// dismissal.
func acpPermissionOutcome(raw []byte, st *State, id string, failed bool) []Draft {
	mark := ""
	seen := false
	if id != "" {
		mark = acpAttnMark(id)
		_, seen = st.Get(acpPermKey(id))
		st.Del(acpPermKey(id))
	}
	resolved := func(res string) Draft {
		return Draft{Type: "attention.resolved", SubjectRef: mark, CauseRef: mark, Data: Data("resolution", res)}
	}
	if failed || Str(raw, "result.outcome.outcome") != "selected" {
		return []Draft{resolved("dismissed")}
	}
	ds := []Draft{{Type: "attention.answered", SubjectRef: mark, CauseRef: mark,
		Data: Data("answer", Data("option", Str(raw, "result.outcome.optionId")), "via", "oob")}}
	if seen {
		ds = append(ds, resolved("answered"))
	}
	return ds
}

// acpUpdate maps one session/update notification by its sessionUpdate.
func acpUpdate(m Moment, st *State, run string) []Draft {
	raw := m.Raw
	u := gjson.GetBytes(raw, "params.update")
	kind := u.Get("sessionUpdate").String()
	ur := []byte(u.Raw)
	switch kind {
	case "tool_call":
		callID := Str(ur, "toolCallId")
		name := Str(ur, "title")
		if name == "" {
			name = "unknown"
		}
		if callID != "" {
			st.Set(acpToolKey(callID), name)
		}
		d := Data("tool", ToolRef(name, callID), "kind", Str(ur, "kind"))
		if in := gjson.GetBytes(ur, "rawInput"); in.Exists() && in.Type != gjson.Null {
			d["args_digest"] = redact.DigestJSON([]byte(in.Raw))
			d["args"] = in.Value()
		}
		ds := []Draft{{Type: "tool.requested", Subject: callID, Run: run, Data: d}}
		return append(ds, acpToolStatus(ur, st, run, callID, name, false)...)
	case "tool_call_update":
		callID := Str(ur, "toolCallId")
		name, _ := st.Get(acpToolKey(callID))
		if name == "" {
			if name = Str(ur, "title"); name == "" {
				name = "unknown"
			}
		}
		return acpToolStatus(ur, st, run, callID, name, true)
	case "plan":
		counts := map[string]int{}
		entries := gjson.GetBytes(ur, "entries")
		for _, e := range entries.Array() {
			counts[e.Get("status").String()]++
		}
		d := map[string]any{"entries_pending": counts["pending"], "entries_completed": counts["completed"]}
		if n := counts["in_progress"]; n > 0 {
			d["entries_in_progress"] = n
		}
		if entries.Exists() {
			d["entries"] = entries.Value()
		}
		return []Draft{{Type: "x.acp.plan.updated", Run: run, Severity: debug, Data: d,
			Levels: map[string]redact.Level{"entries_pending": redact.Metadata, "entries_completed": redact.Metadata,
				"entries_in_progress": redact.Metadata, "entries": redact.Redacted}}}
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		if !m.Deltas {
			return nil
		}
		d := Data("delta", Str(ur, "content.text"))
		return []Draft{{Type: vendorEventType("acp", wireSegments(kind)...), Run: run, Severity: debug,
			Data: d, Levels: deltaLevels(redact.Metadata)}}
	case "usage_update":
		d := Data("gen_ai.usage.input_tokens", extInt(ur, "usedTokens"), "gen_ai.usage.output_tokens", extInt(ur, "outputTokens"))
		return []Draft{{Type: "x.acp.usage.updated", Run: run, Severity: debug, Data: d,
			Levels: extLevels(redact.Metadata, "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")}}
	case "":
		return []Draft{{Type: "x.acp.session.update", Run: run, Severity: debug, Data: map[string]any{}}}
	}
	return []Draft{{Type: vendorEventType("acp", wireSegments(kind)...), Run: run, Severity: debug, Data: map[string]any{}}}
}

// acpToolStatus forks a tool call's status: completed and failed close the
// call; any other status is an intermediate update (only for updates: the
// first tool_call's own pending status is the request itself).
func acpToolStatus(ur []byte, st *State, run, callID, name string, update bool) []Draft {
	status := Str(ur, "status")
	switch status {
	case "completed":
		st.Del(acpToolKey(callID))
		d := Data("tool", ToolRef(name, callID))
		if out := gjson.GetBytes(ur, "rawOutput"); out.Exists() && out.Type != gjson.Null {
			d["result_digest"] = redact.DigestJSON([]byte(out.Raw))
			d["result"] = out.Value()
		}
		return []Draft{{Type: "tool.completed", Subject: callID, Run: run, Data: d}}
	case "failed":
		st.Del(acpToolKey(callID))
		return []Draft{{Type: "tool.failed", Subject: callID, Run: run,
			Data: Data("tool", ToolRef(name, callID), "error", Data("type", "tool_error"))}}
	}
	if !update {
		return nil
	}
	return []Draft{{Type: "x.acp.tool_call.update", Subject: callID, Run: run, Severity: debug,
		Data: Data("status", status), Levels: extLevels(redact.Metadata, "status")}}
}
