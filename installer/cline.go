package installer

// Cline registers one executable script per hook, named after the hook, in
// ~/.cline/hooks (user) or <workspace>/.cline/hooks (project). Cline runs
// hooks in its hub daemon, which does not inherit the user's shell
// environment (issue 19 decides how settings reach them: HookScripts.Env).
func Cline() Agent {
	return Agent{
		Name: "cline", Title: "Cline",
		Binaries:  []string{"cline"},
		ConfigDir: dirOf("", ".cline"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("", ".cline", "hooks", ".cline/hooks"),
		Format:    HookScripts{},
		Hooks: hooks([]string{"TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "TaskError",
			"PreToolUse", "PostToolUse", "UserPromptSubmit", "PreCompact", "SessionShutdown"}, nil, 0),
		Notes: func(Env, Scope, string) []string {
			return []string{"Cline runs hooks in its hub daemon, started by the first cline command: restart it (or start a new cline) to pick the hooks up; the daemon does not see your shell's AEP_* settings."}
		},
		Probe: Probe{Event: "TaskStart",
			Payload: `{"hookName":"agent_start","taskId":"SESSION","clineVersion":"doctor"}`},
	}
}
