package mapping

import (
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// Cline is the AEP-0002 Annex A.9 table for Cline's subprocess hooks (the
// ten zod-typed events of @cline/shared, run from hook files named
// TaskStart, PreToolUse, ... in the hook folders). The session is the task's
// stable sessionContext.rootSessionId (taskId changes on resume and differs
// for a child agent; it is the fallback), runs have REAL boundaries per agent
// (agent_start/agent_resume open; agent_end, agent_abort and agent_error
// close as run.finished, run.cancelled and run.failed; an Esc shows only as
// session_shutdown, a cancellation), the typed ToolCallRecord.error splits
// tool.completed from tool.failed (a user's reject is tool.denied), a child
// agent's run is trigger agent with its delegation pair in the parent's run,
// and the per-turn iteration counter is the envelope step. Observe-only: the
// reply is "{}", never a SubprocessHookControl field.
func Cline() Vendor {
	return Vendor{
		Name:     "cline",
		Summary:  "Cline hook files (.cline/hooks/TaskStart, ...): run, tool and delegation lifecycle, observe-only",
		Identify: clineIdentify,
		Map:      clineMap,
		// Cline parses the stdout of PreToolUse and PostToolUse for
		// control fields; "{}" names none (empty stdout would do too).
		Reply: replyEmptyObject,
	}
}

// clineIdentify names the moment by hookName and the session by the root
// session id, which stays across resumes and child agents, else taskId.
func clineIdentify(m Moment) (string, string) {
	hook, session := identifyBy("hookName", "taskId")(m)
	if root := Str(m.Raw, "sessionContext.rootSessionId"); root != "" {
		session = root
	}
	return hook, session
}

// clineRejected is the text Cline puts in a tool result's output.error when
// the user rejected the call at its approval prompt: the call never ran.
const clineRejected = "rejected by the user"

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
			// A child agent works for its parent: its run is started by
			// an agent, and the delegation belongs to the parent's run.
			trigger = "agent"
			ds = append(ds, Draft{Type: "delegation.subagent.started", Subject: agentID, Run: clineRuns(parent).current(st),
				Data: map[string]any{"child": map[string]any{"run": agentID}}})
		}
		run = m.Nonce
		if trigger == "agent" {
			// The child's run is named by its agent id, the delegation's
			// subject, so the pair and the run it stands for correlate.
			run = agentID
		}
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
			ds = append(ds, Draft{Type: "delegation.subagent.stopped", Subject: agentID, Run: clineRuns(parent).current(st),
				Data: map[string]any{"child": map[string]any{"run": agentID}}})
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
		if r := Str(raw, "reason"); r != "" && !clineAbortReason(r) {
			// Vendor free-text reasons do not enter the session.ended enum.
			return []Draft{{Type: "session.ended", Data: Data("reason", "normal")}}, nil
		}
		// Cline 3.0.65 fires it only after an aborted run (Esc), with no
		// reason, and the session goes on: the agent's run was cancelled
		// by the user. After agent_abort it is the run's late second
		// terminal, which the emitter suppresses.
		return []Draft{{Type: "run.cancelled", Run: lane.end(st, m.Nonce), Step: step,
			Data: map[string]any{"by": "user"}}}, nil
	}
	return []Draft{{Type: extDottedType("cline", hook), Run: run, Step: step, Data: map[string]any{}}}, nil
}

// clineAbortReason is Cline's own test for a cancellation reason (it then
// fires agent_abort before session_shutdown).
func clineAbortReason(r string) bool {
	r = strings.ToLower(r)
	return strings.Contains(r, "cancel") || strings.Contains(r, "abort") || strings.Contains(r, "interrupt")
}

// clineToolResult splits the typed ToolCallRecord: a call the user rejected
// is tool.denied, a record error (or an output whose every item failed) is
// tool.failed, anything else tool.completed.
func clineToolResult(raw []byte, run, step string) Draft {
	name, id := Str(raw, "tool_result.name"), Str(raw, "tool_result.id")
	var d Draft
	failed, msg := clineToolError(raw)
	switch {
	case failed && strings.Contains(Str(raw, "tool_result.output.error"), clineRejected):
		// The runtime refused the call on the user's answer; Cline
		// sends no approval hooks, so no attention request precedes it.
		return Draft{Type: "tool.denied", Subject: name, Run: run, Step: step,
			Data: map[string]any{"tool": ToolRef(name, id), "by": "runtime"}}
	case failed:
		d = toolFailed(name, id, "tool_error", msg)
	default:
		if all, msg := clineItemsFailed(raw); all {
			d = toolFailed(name, id, "tool_error", msg)
		} else {
			d = toolCompleted(raw, name, id, "tool_result.output")
		}
	}
	d.Run, d.Step = run, step
	return withData(d, "duration_ms", extInt(raw, "tool_result.durationMs"))
}

// clineItemsFailed reports whether the output is a non-empty list of
// per-item results (run_commands, read_files) that all carry success:
// false: a failed command or an unreadable file, which Cline reports only
// there. Their error texts, joined, are the message.
func clineItemsFailed(raw []byte) (bool, string) {
	items := gjson.GetBytes(raw, "tool_result.output")
	if !items.IsArray() {
		return false, ""
	}
	var msgs []string
	n := 0
	for _, it := range items.Array() {
		s := it.Get("success")
		if s.Type != gjson.False {
			return false, ""
		}
		n++
		if e := it.Get("error"); e.Type == gjson.String && e.Str != "" {
			msgs = append(msgs, e.Str)
		}
	}
	return n > 0, strings.Join(msgs, "\n")
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
