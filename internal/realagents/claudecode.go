package realagents

import (
	"time"

	"github.com/aep-hook/aep-hook/internal/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/internal/truth"
)

// claudeHooks is the README's Claude Code registration.
var claudeHooks = []string{"SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "StopFailure", "PreToolUse",
	"PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied", "Elicitation", "ElicitationResult",
	"SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "TaskCreated", "TaskCompleted", "Notification",
	"TeammateIdle", "Setup", "InstructionsLoaded", "ConfigChange", "CwdChanged", "FileChanged", "WorktreeRemove",
	"UserPromptExpansion", "PostToolBatch"}

const claudeKey = "sk-ant-api03-fakefakefakefakefakefakefakefakefakefakefakefake-fakefakeAA"

func claudeCode() *Agent {
	return &Agent{
		Name: "claude-code", Package: "@anthropic-ai/claude-code", Version: "2.1.328", Bin: "claude",
		API:   fakemodel.Anthropic,
		Setup: claudeSetup,
		Scenarios: []Scenario{
			{
				Name: "tools", Mode: "headless",
				Description: "claude -p: one prompt, a shell command that succeeds, one that fails, then an answer",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"tools": {
					calls(call("Bash", obj{"command": "echo hello", "description": "Say hello"})),
					calls(call("Bash", obj{"command": "ls /nonexistent-dir", "description": "List a missing dir"})),
					say("One worked, one failed."),
				}}),
				Drive: func(r *Run) error {
					_, err := r.Exec(2*time.Minute, "", claudeHeadless("SCENARIO:tools run two commands", "--permission-mode", "bypassPermissions")...)
					return err
				},
			},
		},
	}
}

// claudeHeadless is `claude -p PROMPT` with stream-json output.
func claudeHeadless(prompt string, extra ...string) []string {
	return append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose"}, extra...)
}

func claudeSetup(r *Run) error {
	r.Setenv("ANTHROPIC_BASE_URL", r.Model.URL)
	r.Setenv("ANTHROPIC_API_KEY", claudeKey)
	r.Setenv("DISABLE_TELEMETRY", "1")
	r.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	r.Setenv("DISABLE_AUTOUPDATER", "1")
	r.Setenv("IS_SANDBOX", "1")
	if err := r.WriteJSON(".claude/settings.json", obj{
		"hooks": hooksJSON(claudeHooks, r.HookCommand(), toolEvents, nil),
	}); err != nil {
		return err
	}
	return r.WriteJSON(".claude.json", obj{
		"hasCompletedOnboarding": true, "theme": "dark", "bypassPermissionsModeAccepted": true,
		"customApiKeyResponses": obj{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
		"projects":              obj{r.Work: obj{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true, "allowedTools": []string{}}},
	})
}
