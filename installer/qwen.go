package installer

// Qwen registers in Qwen Code's settings.json (user ~/.qwen/settings.json,
// project .qwen/settings.json): the sixteen Claude-Code-shaped events and
// the five more 0.24 fires (PermissionDenied and PostToolBatch close the
// calls denied without a PostToolUse); MessageDisplay (live text) is left
// out.
func Qwen() Agent {
	return Agent{
		Name: "qwen-code", Title: "Qwen Code",
		Binaries:  []string{"qwen"},
		ConfigDir: dirOf("", ".qwen"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("", ".qwen", "settings.json", ".qwen/settings.json"),
		Format:    JSONHooks{Shape: Grouped},
		Hooks: hooks([]string{"SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "StopFailure",
			"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "SubagentStart",
			"SubagentStop", "PreCompact", "PostCompact", "Notification", "TodoCreated", "TodoCompleted",
			"PermissionDenied", "PostToolBatch", "UserPromptExpansion", "SessionDelete", "InstructionsLoaded"}, anyTools, 0),
		Notes: func(_ Env, s Scope, _ string) []string {
			if s == Project {
				return []string{"Qwen Code asks you to approve a project's hooks the first time it sees them (and after each change): approve them when asked."}
			}
			return nil
		},
		Held: Held{Events: []string{"PermissionRequest"}},
		// Qwen Code's hook runner gives a command hook that sets no timeout
		// 600 s.
		Timeout: 600,
		Probe: Probe{Event: "SessionStart",
			Payload: `{"hook_event_name":"SessionStart","session_id":"SESSION","source":"startup"}`},
	}
}
