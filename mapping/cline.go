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
		Identify: identifyBy("hookName", "taskId"),
		Map:      clineMap,
		Reply:    replyEmptyObject,
	}
}

// clineRuns is the run lane of one agent: a child agent runs inside the
// parent's task, so runs are kept per agent id.
func clineRuns(agentID string) runLane {
	return runLane{open: "cline.run:" + agentID, last: "cline.last:" + agentID}
}

func clineMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	hook := HookField(m, "hookName")
	agentID := Str(raw, "agent_id")
	parent := Str(raw, "parent_agent_id")
	step := extStep(raw, "iteration")
	lane := clineRuns(agentID)
	run := lane.current(st)

	switch hook {
	case "agent_start", "agent_resume":
		trigger := "user"
		if hook == "agent_resume" {
			trigger = "resume"
		}
		var ds []Draft
		if parent != "" && agentID != "" {
			// The delegation belongs to the parent's open run.
			ds = append(ds, Draft{Type: "delegation.subagent.started", Subject: agentID, Run: clineRuns(parent).current(st), Data: map[string]any{}})
		}
		run = m.Nonce
		lane.begin(st, run)
		ds = append(ds, Draft{Type: "run.started", Run: run, Step: step, Data: Data("trigger", trigger)})
		return ds, nil

	case "agent_end", "agent_abort", "agent_error":
		d := Draft{Run: lane.end(st, m.Nonce), Step: step}
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
			ds = append(ds, Draft{Type: "delegation.subagent.stopped", Subject: agentID, Run: clineRuns(parent).current(st), Data: map[string]any{}})
		}
		return ds, nil

	case "tool_call":
		d := toolRequested(raw, Str(raw, "tool_call.name"), Str(raw, "tool_call.id"), "tool_call.input")
		d.Run, d.Step = run, step
		return []Draft{d}, nil

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
	name, id := Str(raw, "tool_result.name"), Str(raw, "tool_result.id")
	var d Draft
	if failed, msg := clineToolError(raw); failed {
		d = toolFailed(name, id, "tool_error", msg)
	} else {
		d = toolCompleted(raw, name, id, "tool_result.output")
	}
	d.Run, d.Step = run, step
	return withData(d, "duration_ms", extInt(raw, "tool_result.durationMs"))
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
