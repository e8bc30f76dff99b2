package realagents

import (
	"time"

	"github.com/aep-hook/aep-hook/internal/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/internal/truth"
)

// qwenHooks is the README's Qwen Code registration: the 22 events of
// 0.24.4 but the streaming MessageDisplay.
var qwenHooks = []string{"SessionStart", "SessionEnd", "UserPromptSubmit", "Stop", "StopFailure", "PreToolUse",
	"PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied", "SubagentStart", "SubagentStop",
	"PreCompact", "PostCompact", "Notification", "TodoCreated", "TodoCompleted", "PostToolBatch",
	"UserPromptExpansion", "SessionDelete", "InstructionsLoaded"}

func qwenCode() *Agent {
	return &Agent{
		Name: "qwen-code", Package: "@qwen-code/qwen-code", Version: "0.24.4", Bin: "qwen",
		API:   fakemodel.ChatCompletions,
		Setup: qwenSetup,
		Scenarios: []Scenario{
			{
				Name: "tools", Mode: "headless",
				Description: "qwen -p --yolo: one prompt, a shell command that succeeds, one that fails, then an answer (UserPromptSubmit fires before every model round)",
				// Headless -p never fires SessionEnd.
				Facts: truth.Facts{Turns: 1, Sessions: 1, Ended: 0},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"tools": {
					calls(call("run_shell_command", obj{"command": "echo hello", "description": "Say hello"})),
					calls(call("run_shell_command", obj{"command": "ls /nonexistent-dir", "description": "List a missing dir"})),
					say("One worked, one failed."),
				}}),
				Drive: func(r *Run) error {
					_, err := r.Exec(3*time.Minute, "", "-p", "SCENARIO:tools run two commands", "--yolo")
					return err
				},
			},
		},
	}
}

func qwenSetup(r *Run) error {
	r.Setenv("OPENAI_BASE_URL", r.Model.URL+"/v1")
	r.Setenv("OPENAI_API_KEY", "sk-fake-qwen")
	r.Setenv("OPENAI_MODEL", "fake-model")
	return r.WriteJSON(".qwen/settings.json", obj{
		"security": obj{"auth": obj{"selectedType": "openai"}, "folderTrust": obj{"enabled": false}},
		"model":    obj{"name": "fake-model"},
		"tools":    obj{"todoWrite": obj{"enabled": true}},
		"privacy":  obj{"usageStatisticsEnabled": false},
		"hooks":    hooksJSON(qwenHooks, r.HookCommand(), toolEvents, nil),
	})
}
