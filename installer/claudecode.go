package installer

// ClaudeCode registers in Claude Code's settings.json (user
// ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR; project
// .claude/settings.json): every hook the mapping table knows except
// MessageDisplay (live text, maps to nothing) and WorktreeCreate (Claude
// Code reads a path from its stdout).
func ClaudeCode() Agent {
	return Agent{
		Name: "claude-code", Title: "Claude Code",
		Binaries:  []string{"claude"},
		ConfigDir: dirOf("CLAUDE_CONFIG_DIR", ".claude"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("CLAUDE_CONFIG_DIR", ".claude", "settings.json", ".claude/settings.json"),
		Format:    JSONHooks{Shape: Grouped},
		Hooks: hooks([]string{"SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "StopFailure",
			"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied",
			"Elicitation", "ElicitationResult", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
			"TaskCreated", "TaskCompleted", "Notification", "TeammateIdle", "Setup", "InstructionsLoaded",
			"ConfigChange", "CwdChanged", "FileChanged", "WorktreeRemove", "UserPromptExpansion",
			"PostToolBatch"}, anyTools, 0),
		// PermissionRequest (AskUserQuestion's form included) and an MCP
		// Elicitation form wait for an answer under control.
		Held: Held{Events: []string{"PermissionRequest", "Elicitation"}},
		Probe: Probe{Event: "SessionStart",
			Payload: `{"hook_event_name":"SessionStart","session_id":"SESSION","source":"startup"}`},
	}
}
