package mapping

import "github.com/tidwall/gjson"

// Qwen is the AEP-0002 Annex A.4 table for Qwen Code hooks: sixteen hooks,
// the Claude-Code-shaped sibling. Runs are synthesized per UserPromptSubmit
// (no turn id is documented) and tool_use_id pairs the tool events;
// PermissionRequest raises a card with the dialog's own choices, the permission_prompt
// notification suppressed against it; compaction is stated once, at the post
// moment; todo hooks emit once, at the persisted (postWrite) phase.
func Qwen() Vendor {
	return Vendor{
		Name:     "qwen-code",
		Summary:  "Qwen Code hooks (settings.json), the Claude Code family rules, observe-only",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      qwenTakeover(resumable("session_id", mapQwen)),
		Reply:    replyEmptyObject,
		Hold:     qwenHold,
	}
}

// Qwen's table state beyond the Claude Code family's.
const (
	// qwenStarted says this AEP session's SessionStart was seen, so a
	// process loading its instructions for the same vendor session is a
	// resume.
	qwenStarted = "qwen.started"
	// qwenStopped holds the prompt_id of the turn a Stop closed last: a
	// later Stop or tool moment of the same prompt_id with no run open is a
	// turn Qwen ran by itself.
	qwenStopped = "qwen.stopped"
)

// qwenTakeover wraps the table with what a new Qwen process of a session
// the record already holds proves: the earlier process is gone, so a turn
// it left open (an API failure headless Qwen never reports) is over,
// closed in the earlier AEP session (dismissPending, run.cancelled with no
// by). The resumed process loads its instructions (InstructionsLoaded,
// load_reason session_start) before its SessionStart{resume}: the new AEP
// session begins there, so that moment is already the new session's.
func qwenTakeover(fn mapFunc) mapFunc {
	return func(m Moment, st *State) ([]Draft, error) {
		vendor := Str(m.Raw, "session_id")
		hook := HookField(m, "hook_event_name")
		_, started := st.Get(qwenStarted)
		_, early := st.Get(stateResumedFrom)
		loading := hook == "InstructionsLoaded" && Str(m.Raw, "load_reason") == "session_start" && started
		resuming := hook == "SessionStart" && Str(m.Raw, "source") == "resume" && !early
		if vendor == "" || !loading && !resuming {
			return fn(m, st)
		}
		old := firstNonEmpty(aepSession(st), vendor)
		pre := drainTurn(st)
		for i := range pre {
			pre[i].Session = old
		}
		if loading {
			resumeEarly(m, st, vendor)
		}
		ds, err := fn(m, st)
		return append(pre, ds...), err
	}
}

func mapQwen(m Moment, st *State) ([]Draft, error) {
	const vendor = "qwen-code"
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	ownTurn := qwenOwnTurn(m, st, hook)
	if ds, ok := claudeShapedTool(hook, raw, st); ok {
		return append(ownTurn, ds...), nil
	}
	switch hook {
	case "SessionStart":
		if Str(raw, "source") == "compact" {
			// Compaction restarts the context, not the session.
			return nil, nil
		}
		st.Set(qwenStarted, "1")
		// permission_mode is a fleet-relevant security posture (yolo!).
		return []Draft{sessionStarted(vendor, raw)}, nil
	case "SessionEnd":
		return append(dismissPending(st), sessionEnd(st, Str(raw, "reason"))...), nil
	case "UserPromptSubmit":
		// Qwen fires it before every model round of one turn, with the same
		// prompt_id and an empty prompt: only a new prompt_id is a new turn.
		return turnPrompt(m, st, vendor, Str(raw, "prompt_id"), Str(raw, "prompt")), nil
	case "PostToolBatch":
		ds := append(ownTurn, qwenUnstarted(raw, st)...)
		ds = append(ds, batchDenied(st, raw)...)
		return append(ds, childPlace(st, raw, fallback(vendor, hook))...), nil
	case "Stop":
		ds := append(ownTurn, dismissPending(st)...)
		ds = append(ds, endRun(m, st, "run.finished", Data(
			"gen_ai.usage.input_tokens", extInt(raw, "input_tokens"),
			"gen_ai.usage.output_tokens", extInt(raw, "output_tokens"),
		))...)
		if turn := Str(raw, "prompt_id"); turn != "" && Str(raw, "agent_id") == "" {
			st.Set(qwenStopped, turn)
		}
		return ds, nil
	case "StopFailure":
		reason := Str(raw, "error")
		if reason == "" {
			reason = "unknown"
		}
		// The reason token only: error.type is not pinned for this vendor.
		st.Del(qwenStopped)
		return append(dismissPending(st), endRun(m, st, "run.failed", Data(
			"reason", reason,
			"error", omitEmpty(Data("message", Str(raw, "error_details"))),
		))...), nil
	case "PermissionRequest":
		return append(ownTurn, permissionRequest(m, vendor, qwenMenu, currentRun(st), st)...), nil
	case "PreCompact":
		// The paired concept is stated once, at PostCompact.
		return nil, nil
	case "PostCompact":
		// compact_summary has no session.compacted field and does not ride.
		return inRun(st, Draft{Type: "session.compacted", Data: Data("trigger", Str(raw, "trigger"))}), nil
	case "Notification":
		// permission_prompt is suppressed: the first-class PermissionRequest
		// hook already carries the moment.
		return inRun(st, notificationStatus(raw)...), nil
	case "TodoCreated", "TodoCompleted":
		// Every todo hook fires twice per write; the validation phase is the
		// silent pre-moment. An absent or unknown phase emits (fail open).
		if Str(raw, "phase") == "validation" {
			return nil, nil
		}
		typ := "progress.task.planned"
		if hook == "TodoCompleted" {
			typ = "progress.task.completed"
		}
		// all_todos is deliberately not forwarded (payload minimalism).
		return inRun(st, Draft{Type: typ, Subject: Str(raw, "todo_id"),
			Data: Data("task", omitEmpty(Data("title", Str(raw, "todo_content"))))}), nil
	}
	return inRun(st, fallback(vendor, hook)), nil
}

// qwenOwnTurn opens the run of a turn Qwen runs by itself: when a
// background subagent finishes, Qwen answers its completion notice with a
// model round of its own that fires no UserPromptSubmit, only its tool
// hooks and a Stop, all with the prompt_id of the user's turn that started
// the subagent. Such a moment of the session's own lane (no agent_id),
// with no run open and the last run ended by its Stop, opens a run with
// trigger agent (named by the moment's nonce: one prompt_id may have
// several).
func qwenOwnTurn(m Moment, st *State, hook string) []Draft {
	switch hook {
	case "Stop", "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "PermissionRequest":
	default:
		return nil
	}
	if currentRun(st) != "" || m.Nonce == "" || Str(m.Raw, "agent_id") != "" {
		return nil
	}
	turn := Str(m.Raw, "prompt_id")
	if last, _ := st.Get(qwenStopped); turn == "" || last != turn {
		return nil
	}
	st.Del(qwenStopped)
	sessionRuns.begin(st, m.Nonce)
	return []Draft{{Type: "run.started", Run: m.Nonce, Data: Data("trigger", "agent")}}
}

// qwenUnstarted records the calls a PostToolBatch reports that never
// started (execution_status not_started), for which Qwen fires no
// PreToolUse: tool.requested, then their end. A call whose permission card
// is pending and that Qwen cancelled ("User did not allow tool call") was
// refused in Qwen's dialog (No, or Esc, its shortcut): the card is
// answered cancel (the dialog's own id for No), out of band, and the call is tool.denied. A call that
// failed before it could start (invalid arguments) is tool.failed with
// Qwen's error type. Any other unstarted call is left as it was.
func qwenUnstarted(raw []byte, st *State) []Draft {
	var ds []Draft
	for _, c := range gjson.GetBytes(raw, "tool_calls").Array() {
		if c.Get("tool_response.execution_status").String() != "not_started" {
			continue
		}
		cr := []byte(c.Raw)
		tool, call := c.Get("tool_name").String(), c.Get("tool_use_id").String()
		req := toolRequested(cr, tool, call, "tool_input")
		switch c.Get("status").String() {
		case "cancelled":
			key := toolAttentionKey(tool, Raw(cr, "tool_input"))
			if _, pending := st.Get(attnPendingPrefix + key); !pending {
				continue
			}
			ds = append(ds, req)
			ds = append(ds, answeredOOB(st, key, map[string]any{"option": "cancel"}, nil)...)
			ds = append(ds, Draft{Type: "tool.denied", Subject: tool, CauseRef: key + ":answered",
				Data: map[string]any{"tool": ToolRef(tool, call), "by": "user_setting"}})
		case "error":
			errType := firstNonEmpty(c.Get("tool_response.error_type").String(), "tool_error")
			ds = append(ds, req, toolFailed(tool, call, errType, errorText(cr, "tool_response.error")))
		}
	}
	return childPlace(st, raw, ds...)
}
