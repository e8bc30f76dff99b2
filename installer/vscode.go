package installer

import "path/filepath"

// VSCode registers VS Code agent hooks (Preview) in the workspace file
// .github/hooks/aep.json: the eight events, flat entries.
func VSCode() Agent {
	return Agent{
		Name: "vscode", Title: "VS Code agent hooks",
		Binaries:  []string{"code", "code-insiders"},
		ConfigDir: dirOf("", ".vscode"),
		Scopes:    []Scope{Project},
		Path:      func(e Env, _ Scope) string { return filepath.Join(e.Dir, ".github", "hooks", "aep.json") },
		Format:    JSONHooks{Shape: Flat},
		Hooks: hooks([]string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
			"SubagentStart", "SubagentStop", "Stop"}, nil, 0),
		Notes: func(Env, Scope, string) []string {
			return []string{"VS Code also runs the hooks in .claude/settings.json: a workspace wired for Claude Code at project scope logs VS Code activity as claude-code too."}
		},
		Probe: Probe{Event: "SessionStart",
			Payload: `{"hook_event_name":"SessionStart","session_id":"SESSION","source":"new"}`},
	}
}
