package mapping

import (
	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// claudeCodeAgent is the AEP agent name of the Claude Code table.
const claudeCodeAgent = "claude-code"

// ClaudeCode is the AEP-0002 Annex A.1 table for Claude Code hooks. A run is
// the turn from UserPromptSubmit (a synthesized id) to Stop / StopFailure; a
// turn left open (the vendor fires no Stop on a user interrupt) drains as
// run.cancelled at the next prompt or at SessionEnd. tool_use_id pairs the
// tool events; PermissionRequest raises an allow/deny card (AskUserQuestion
// an AEP-0006 form), Elicitation an MCP form; every request reaches one
// terminal. Documented hooks without a core type land in
// x.claude-code.session.* with their structural fields at metadata.
func ClaudeCode() Vendor {
	return Vendor{
		Name:     claudeCodeAgent,
		Summary:  "Claude Code hooks (settings.json), every documented hook event",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      resumable("session_id", mapClaudeCode),
		// Claude Code reads an empty stdout with exit 0 as "no decision"
		// on every hook: nothing blocks, nothing is injected.
		Reply: func(string) []byte { return nil },
		Hold:  claudeHold,
	}
}

// claudeCodeExt declares the structural and content fields of the
// documented hooks that have no core type (vendor-surfaces.md: wired,
// opt-in, field-level capture fidelity).
var claudeCodeExt = []struct {
	hook   string
	fields []extField
}{
	{"Setup", []extField{{"trigger", redact.Metadata}}},
	{"InstructionsLoaded", []extField{{"memory_type", redact.Metadata}, {"load_reason", redact.Metadata}, {"file_path", redact.Redacted}}},
	{"ConfigChange", []extField{{"source", redact.Metadata}, {"file_path", redact.Redacted}}},
	{"CwdChanged", []extField{{"old_cwd", redact.Redacted}, {"new_cwd", redact.Redacted}}},
	{"FileChanged", []extField{{"event", redact.Metadata}, {"file_path", redact.Redacted}}},
	{"WorktreeCreate", []extField{{"name", redact.Redacted}}},
	{"WorktreeRemove", []extField{{"worktree_path", redact.Redacted}}},
	{"UserPromptExpansion", []extField{{"expansion_type", redact.Metadata}, {"command_source", redact.Metadata},
		{"command_name", redact.Redacted}, {"prompt", redact.Redacted}}},
	{"PostToolBatch", []extField{}},
}

// claudeCodeExtFields are claudeCodeExt's fields for hook, if it declares it.
func claudeCodeExtFields(hook string) ([]extField, bool) {
	for _, e := range claudeCodeExt {
		if e.hook == hook {
			return e.fields, true
		}
	}
	return nil, false
}

// claudeTurnHook reports whether hook is a moment of one turn: its
// prompt_id is the turn it belongs to.
func claudeTurnHook(hook string) bool {
	switch hook {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
		"PermissionDenied", "PostToolBatch", "Stop", "StopFailure":
		return true
	}
	return false
}

// claudeQueuedTurn opens the turn a queued prompt became: a prompt typed
// while a turn runs reuses that turn's prompt_id (it stays in it), but
// when Esc then interrupts, Claude Code runs the queued prompt as a turn
// of its own, and its moments carry a new prompt_id with no
// UserPromptSubmit before them. The interrupted run is drained (the
// interrupt itself fires no hook) and the new turn opens, trigger user;
// its prompt rode x.claude-code.run.prompt_queued. A subagent's moments
// and a late moment of the turn closed last open nothing.
func claudeQueuedTurn(m Moment, st *State, hook string, raw []byte) []Draft {
	turn, open := Str(raw, "prompt_id"), currentRun(st)
	if !claudeTurnHook(hook) || turn == "" || open == "" || turn == open || Str(raw, "agent_id") != "" {
		return nil
	}
	ds := drainTurn(st)
	sessionRuns.begin(st, turn)
	return append(ds, Draft{Type: "run.started", Run: turn, Data: Data("trigger", "user")})
}

func mapClaudeCode(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	if hook == "" {
		hook, raw = claudeCodeBare(raw)
	}
	turn := claudeQueuedTurn(m, st, hook, raw)
	ds, err := claudeCodeMoment(m, st, hook, raw)
	return append(turn, ds...), err
}

// claudeCodeMoment maps one moment of the turn in progress.
func claudeCodeMoment(m Moment, st *State, hook string, raw []byte) ([]Draft, error) {
	const agent = claudeCodeAgent
	if ds, ok := claudeShapedTool(hook, raw, st); ok {
		return ds, nil
	}
	run := currentRun(st)
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_use_id")
	switch hook {
	case "SessionStart":
		if Str(raw, "source") == "compact" {
			// Compaction restarts the context, not the session: the
			// compaction itself is recorded at PostCompact.
			return nil, nil
		}
		return []Draft{sessionStarted(agent, raw)}, nil
	case "SessionEnd":
		// No request outlives the session (AEP-0002 §7 rule 2).
		ds := dismissPending(st)
		if Str(raw, "reason") == "other" {
			// A headless session's end (-p): no Esc can have interrupted
			// a turn still open, which ended unreported (--max-turns
			// reached, and since 2.1.332 an API failure, fire neither Stop
			// nor StopFailure). It keeps no terminal: a cancellation would
			// be a guess.
			abandonRun(st)
		}
		return append(ds, sessionEnd(st, Str(raw, "reason"))...), nil
	case "UserPromptSubmit":
		// prompt_id is the turn: a queued prompt reuses the running one's.
		return turnPrompt(m, st, agent, Str(raw, "prompt_id"), Str(raw, "prompt")), nil
	case "Stop":
		// A re-fired Stop (a stop hook's continuation) names the run closed
		// last and the emitter's terminal exclusivity suppresses it.
		ds := dismissPending(st)
		return append(ds, Draft{Type: "run.finished", Run: closeRun(m, st), Data: map[string]any{}}), nil
	case "StopFailure":
		ds := dismissPending(st)
		return append(ds, Draft{Type: "run.failed", Run: closeRun(m, st), Data: stopFailureData(raw)}), nil
	case "PermissionRequest":
		return permissionRequest(m, agent, claudeMenu, run, st), nil
	case "PermissionDenied":
		// The auto-mode classifier's deny: an automation block, no human
		// in the loop (the codex-otel convention: automation → runtime).
		callSettled(st, call)
		return childPlace(st, raw, append(settleToolAttention(raw, st), Draft{
			Type: "tool.denied", Subject: tool,
			Data: map[string]any{"tool": ToolRef(tool, call), "by": "runtime"},
		})...), nil
	case "Elicitation":
		return elicitationRequest(m, agent, run, st), nil
	case "ElicitationResult":
		return elicitationResult(raw, st), nil
	case "PreCompact":
		// Documented deviation: session.compacted fires once, at PostCompact.
		return nil, nil
	case "PostCompact":
		// compact_summary has no session.compacted field and does not ride.
		return []Draft{{Type: "session.compacted", Run: currentRun(st), Data: Data("trigger", Str(raw, "trigger"))}}, nil
	case "TaskCreated", "TaskCompleted":
		typ, status := "progress.task.planned", ""
		if hook == "TaskCompleted" {
			typ, status = "progress.task.completed", "completed"
		}
		id := Str(raw, "task_id")
		return inRun(st, Draft{Type: typ, Subject: id, Data: Data(
			"task", Data("id", id, "title", Str(raw, "task_subject")),
			"status", status,
		)}), nil
	case "Notification":
		return inRun(st, notificationStatus(raw)...), nil
	case "TeammateIdle":
		// Agent-scoped: the emitter strips session, run and seq.
		return []Draft{{Type: "agent.idle", Subject: Str(raw, "teammate_name"),
			Data: map[string]any{"reason": "awaiting_input"}}}, nil
	case "MessageDisplay":
		// Live assistant text as rendered: mid-turn streaming fails the
		// fleet-observer test (vendor-surfaces.md); reserved for the
		// AEP-0007 message sub-profile, deliberately not emitted.
		return nil, nil
	}
	if fields, ok := claudeCodeExtFields(hook); ok {
		d := extensionEvent(agent, hook, raw, fields...)
		if hook != "PostToolBatch" {
			return []Draft{d}, nil
		}
		if n := gjson.GetBytes(raw, "tool_calls"); n.IsArray() {
			d.Data["count"] = len(n.Array())
			d.Levels = map[string]redact.Level{"count": redact.Metadata}
		}
		// The batch also closes its calls that were refused.
		return append(batchDenied(st, raw), childPlace(st, raw, d)...), nil
	}
	return []Draft{fallback(agent, hook)}, nil
}

// claudeCodeBare recognizes the bare shapes the Annex A pins state for the
// two form mappings (no hook_event_name): an AskUserQuestion tool input
// ({questions}) is read as its PermissionRequest, an MCP elicitation
// request ({message, requestedSchema}) as the Elicitation hook.
func claudeCodeBare(raw []byte) (string, []byte) {
	switch {
	case gjson.GetBytes(raw, "questions").IsArray():
		wrapped := `{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":` + string(raw) + `}`
		return "PermissionRequest", []byte(wrapped)
	case elicitationSchema(raw).Exists():
		return "Elicitation", raw
	}
	return "", raw
}

// stopFailureData is run.failed for a StopFailure: the vendor's error class
// as the reason token (and error.type), the message gated redacted. Claude
// Code puts the error text in last_assistant_message ("API Error: 400 ...").
func stopFailureData(raw []byte) map[string]any {
	reason := firstNonEmpty(Str(raw, "error_type"), Str(raw, "error"), "unknown")
	return Data(
		"reason", reason,
		"error", Data("type", reason, "message", firstNonEmpty(Str(raw, "error_message"),
			Str(raw, "error_details"), Str(raw, "last_assistant_message"))),
	)
}
