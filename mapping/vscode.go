package mapping

// VSCode is the AEP-0002 Annex A.5 table for VS Code agent hooks (the
// eight-event VSCode-target Preview surface, Claude-Code-shaped payloads).
// session_id is optional (a missing one goes to the unknown lane); runs are
// synthesized per UserPromptSubmit/Stop pair; tool_use_id pairs the tool
// events. Three absences are the vendor's, stated rather than papered over:
// no session end, no run failure, and a success-only PostToolUse.
// transcript_path is never forwarded.
func VSCode() Vendor {
	return Vendor{
		Name:     "vscode",
		Summary:  "VS Code agent hooks (Preview, .github/hooks), observe-only",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      mapVSCode,
		Reply:    replyEmptyObject,
	}
}

func mapVSCode(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_use_id")
	switch hook {
	case "SessionStart":
		// The vendor's timestamp and transcript_path do not ride.
		return []Draft{sessionStarted("vscode", raw, "agent_type", Str(raw, "agent_type"))}, nil
	case "UserPromptSubmit":
		return promptRun(m, st, Str(raw, "prompt")), nil
	case "Stop":
		// stop_hook_active is the hook's own loop plumbing, not forwarded.
		return endRun(m, st, "run.finished", map[string]any{}), nil
	case "PreToolUse":
		return inRun(st, toolRequested(raw, tool, call, "tool_input")), nil
	case "PostToolUse":
		// Success only on this surface: tool.failed has no vendor moment.
		return inRun(st, toolCompleted(raw, tool, call, "tool_response")), nil
	case "PreCompact":
		// The only compaction moment this surface exposes (no PostCompact):
		// the pre moment is the one truthful carrier, emitted once.
		return inRun(st, Draft{Type: "session.compacted", Data: Data("trigger", Str(raw, "trigger"))}), nil
	case "SubagentStart":
		// The subagent's moments carry nothing naming it: no child run,
		// so the lineage names the agent.
		return inRun(st, subagent("delegation.subagent.started", raw, "agent")), nil
	case "SubagentStop":
		return inRun(st, subagent("delegation.subagent.stopped", raw, "agent")), nil
	}
	return inRun(st, fallback("vscode", hook)), nil
}
