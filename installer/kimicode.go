package installer

import "path/filepath"

// KimiCode registers in Kimi Code's one global config.toml
// ($KIMI_CODE_HOME, default ~/.kimi-code): the inline hooks array before
// the first section, the nineteen events the table maps (SessionHeartbeat
// is left out), timeout 30 s.
func KimiCode() Agent {
	return Agent{
		Name: "kimi-code", Title: "Kimi Code CLI",
		Binaries:  []string{"kimi"},
		ConfigDir: dirOf("KIMI_CODE_HOME", ".kimi-code"),
		Scopes:    []Scope{User},
		Path: func(e Env, _ Scope) string {
			return filepath.Join(e.homeOr("KIMI_CODE_HOME", ".kimi-code"), "config.toml")
		},
		Format: TOMLHooks{},
		Hooks: hooks([]string{"SessionStart", "SessionEnd", "UserPromptSubmit", "UserPromptQueued",
			"TurnStarted", "Stop", "StopFailure", "Interrupt", "PreToolUse", "PostToolUse",
			"PostToolUseFailure", "PermissionRequest", "PermissionResult", "SubagentStart", "SubagentStop",
			"TaskStarted", "PreCompact", "PostCompact", "Notification"}, nil, 30),
		Notes: func(Env, Scope, string) []string {
			return []string{"`kimi doctor` checks the edited config.toml."}
		},
		// PreToolUse is an opt-in gate: held only for the tools listed.
		Held: Held{Events: []string{"PreToolUse"}, Gate: true},
		// Its hook runner's default when a [[hooks]] table sets none.
		Timeout: 30,
		Probe: Probe{Event: "SessionStart",
			Payload: `{"hook_event_name":"SessionStart","session_id":"SESSION","source":"startup"}`},
	}
}
