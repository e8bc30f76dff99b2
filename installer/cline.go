package installer

// Cline registers one executable script per hook, named after the hook, in
// ~/.cline/hooks (user) or <workspace>/.cline/hooks (project). Cline runs
// hooks in its hub daemon, which does not inherit the user's shell
// environment, so the settings reach them through the scripts themselves
// (HookScripts.Env).
func Cline() Agent {
	return Agent{
		Name: "cline", Title: "Cline",
		Binaries:  []string{"cline"},
		ConfigDir: dirOf("CLINE_DIR", ".cline"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("CLINE_DIR", ".cline", "hooks", ".cline/hooks"),
		Format:    HookScripts{Exports: clineExports},
		Hooks: hooks([]string{"TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "TaskError",
			"PreToolUse", "PostToolUse", "UserPromptSubmit", "PreCompact", "SessionShutdown"}, nil, 0),
		Notes: func(e Env, _ Scope, _ string) []string {
			n := []string{"Cline runs hooks in its hub daemon, which does not see AEP_* variables exported later: the settings in force now are written into each hook file; run install again after changing them."}
			if e.getenv("AEP_TOKEN") != "" {
				n = append(n, "AEP_TOKEN is never written into a hook file: Cline's hooks record locally; deliver with `aep-hook ship --follow`.")
			}
			return n
		},
		Probe: Probe{Event: "TaskStart",
			Payload: `{"hookName":"agent_start","taskId":"probe","sessionContext":{"rootSessionId":"SESSION"},"agent_id":"a","parent_agent_id":null,"taskStart":{"taskMetadata":{}}}`},
	}
}

// clineExports are the settings a Cline hook file carries: every non-secret
// one for the user's own folder; only the capture settings in a project's
// folder, which may be committed (never a token, never a home path).
func clineExports(s Scope) []string {
	capture := []string{"AEP_CAPTURE", "AEP_CAPTURE_OVERRIDES", "AEP_SECRET_ENV"}
	if s == Project {
		return capture
	}
	return append([]string{"AEP_HOME", "AEP_HOST", "AEP_OUT", "AEP_HOOK_DEADLINE", "AEP_DELIVER_DEADLINE"}, capture...)
}
