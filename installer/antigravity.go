package installer

// Antigravity registers in hooks.json (workspace .agents/hooks.json, global
// ~/.gemini/config/hooks.json). No payload names its event, so each
// registration passes the event as an argument.
func Antigravity() Agent {
	return Agent{
		Name: "antigravity", Title: "Antigravity",
		Binaries:  []string{"antigravity", "agy"},
		ConfigDir: dirOf("", ".gemini/antigravity"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("", ".gemini", "config/hooks.json", ".agents/hooks.json"),
		Format:    JSONHooks{Shape: FlatMatcher},
		Hooks: hooks([]string{"PreToolUse", "PostToolUse", "PreInvocation", "PostInvocation", "Stop"},
			anyTools, 0),
		Command: func(prog string, h Hook) string { return prog + " antigravity " + h.Event },
		Probe: Probe{Event: "PreInvocation",
			Payload: `{"conversationId":"SESSION","invocationNum":0,"initialNumSteps":0}`},
	}
}
