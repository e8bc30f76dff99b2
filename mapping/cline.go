package mapping

import (
	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// Cline is the AEP-0002 Annex A.9 table for Cline's subprocess hooks (the
// ten zod-typed events of @cline/shared): taskId is the session, runs have
// REAL boundaries (agent_start/agent_resume open; agent_end, agent_abort and
// agent_error close as run.finished, run.cancelled and run.failed), the typed
// ToolCallRecord.error splits tool.completed from tool.failed, typed parent
// ids open and close the delegation pair, and the per-turn iteration counter
// is the envelope step. Observe-only: the reply is "{}", never a
// SubprocessHookControl field.
func Cline() Vendor {
	return Vendor{
		Name:     "cline",
		Summary:  "Cline subprocess hooks (--hooks-dir): run, tool and delegation lifecycle, observe-only",
		Identify: clineIdentify,
		Map:      clineMap,
		Reply:    clineReply,
	}
}

// clineNeutral is the observe-only hook output: JSON with no control field.
var clineNeutral = []byte("{}")

func clineReply(string) []byte { return clineNeutral }

func clineIdentify(m Moment) (string, string) {
	s := Str(m.Raw, "taskId")
	if s == "" {
		s = UnknownSession
	}
	return HookField(m, "hookName"), s
}

// clineRunKey is the table-state key of the run an agent has open; a child
// agent runs inside the parent's task, so runs are kept per agent id.
func clineRunKey(agentID string) string { return "cline.run:" + agentID }

// clineLastKey is the table-state key of the run an agent closed last.
func clineLastKey(agentID string) string { return "cline.last:" + agentID }

func clineMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	hook := HookField(m, "hookName")
	agentID := Str(raw, "agent_id")
	parent := Str(raw, "parent_agent_id")
	step := extStep(raw, "iteration")
	run, _ := st.Get(clineRunKey(agentID))

	switch hook {
	case "agent_start", "agent_resume":
		trigger := "user"
		if hook == "agent_resume" {
			trigger = "resume"
		}
		var ds []Draft
		if parent != "" && agentID != "" {
			ds = append(ds, Draft{Type: "delegation.subagent.started", Subject: agentID, Data: map[string]any{}})
		}
		run = m.Nonce
		st.Del(clineLastKey(agentID))
		if run != "" {
			st.Set(clineRunKey(agentID), run)
		}
		ds = append(ds, Draft{Type: "run.started", Run: run, Step: step, Data: Data("trigger", trigger)})
		return ds, nil

	case "agent_end", "agent_abort", "agent_error":
		if run == "" {
			// No open run: a second terminal for the run just closed (the
			// emitter suppresses it), or an opener never observed (attach
			// mid-run), whose terminal closes a run of its own.
			if run, _ = st.Get(clineLastKey(agentID)); run == "" {
				run = m.Nonce
			}
		}
		st.Del(clineRunKey(agentID))
		st.Set(clineLastKey(agentID), run)
		d := Draft{Run: run, Step: step}
		switch hook {
		case "agent_end":
			d.Type, d.Data = "run.finished", map[string]any{}
		case "agent_abort":
			d.Type, d.Data = "run.cancelled", Data("by", "user", "reason", Str(raw, "reason"))
		default:
			name := Str(raw, "error.name")
			if name == "" {
				name = "error"
			}
			d.Type = "run.failed"
			d.Data = Data("reason", name, "error", Data("type", name, "message", Str(raw, "error.message")))
		}
		ds := []Draft{d}
		if parent != "" && agentID != "" {
			ds = append(ds, Draft{Type: "delegation.subagent.stopped", Subject: agentID, Data: map[string]any{}})
		}
		return ds, nil

	case "tool_call":
		name := Str(raw, "tool_call.name")
		return []Draft{{
			Type: "tool.requested", Subject: name, Run: run, Step: step,
			Data: Data(
				"tool", ToolRef(name, Str(raw, "tool_call.id")),
				"args_digest", extDigest(raw, "tool_call.input"),
				"args", extValue(raw, "tool_call.input"),
			),
		}}, nil

	case "tool_result":
		return []Draft{clineToolResult(raw, run, step)}, nil

	case "prompt_submit":
		// message.user.submitted stays reserved: the fact rides vendor-scoped.
		return []Draft{{
			Type: "x.cline.prompt.submitted", Run: run, Step: step, Severity: "debug",
			Data:   Data("prompt", Str(raw, "prompt")),
			Levels: extLevels(redact.Redacted, "prompt"),
		}}, nil

	case "pre_compact":
		// The vendor's only compaction moment is the pre one (Annex A.9).
		// The context dump paths are content and are not carried.
		return []Draft{{
			Type: "session.compacted", Run: run, Step: step,
			Data: Data(
				"strategy", Str(raw, "preCompact.compactionStrategy"),
				"gen_ai.usage.input_tokens", extInt(raw, "preCompact.tokensIn"),
				"gen_ai.usage.output_tokens", extInt(raw, "preCompact.tokensOut"),
			),
		}}, nil

	case "session_shutdown":
		// Vendor free-text reasons do not enter the session.ended enum.
		return []Draft{{Type: "session.ended", Data: Data("reason", "normal")}}, nil
	}
	return []Draft{{Type: extDottedType("cline", hook), Run: run, Step: step, Data: map[string]any{}}}, nil
}

// clineToolResult splits the typed ToolCallRecord on its error field.
func clineToolResult(raw []byte, run, step string) Draft {
	name := Str(raw, "tool_result.name")
	ref := ToolRef(name, Str(raw, "tool_result.id"))
	dur := extInt(raw, "tool_result.durationMs")
	if failed, msg := clineToolError(raw); failed {
		return Draft{
			Type: "tool.failed", Subject: name, Run: run, Step: step,
			Data: Data("tool", ref, "duration_ms", dur, "error", Data("type", "tool_error", "message", msg)),
		}
	}
	return Draft{
		Type: "tool.completed", Subject: name, Run: run, Step: step,
		Data: Data(
			"tool", ref,
			"duration_ms", dur,
			"result_digest", extDigest(raw, "tool_result.output"),
			"result", extValue(raw, "tool_result.output"),
		),
	}
}

// clineToolError reads ToolCallRecord.error: a non-empty string, or any
// other non-null value (an error object), is a failure.
func clineToolError(raw []byte) (bool, string) {
	r := gjson.GetBytes(raw, "tool_result.error")
	switch r.Type {
	case gjson.Null:
		return false, ""
	case gjson.String:
		return r.Str != "", r.Str
	case gjson.JSON:
		if m := r.Get("message"); m.Type == gjson.String {
			return true, m.Str
		}
		return true, ""
	case gjson.True:
		return true, ""
	}
	return false, ""
}
