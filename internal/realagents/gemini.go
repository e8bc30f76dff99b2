package realagents

import (
	"time"

	"github.com/aep-hook/aep-hook/internal/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/internal/truth"
)

// geminiHooks is the README's Gemini CLI registration (AfterModel left out).
var geminiHooks = []string{"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool",
	"BeforeModel", "BeforeToolSelection", "PreCompress", "Notification"}

func geminiCLI() *Agent {
	return &Agent{
		Name: "gemini-cli", Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini",
		API:   fakemodel.Gemini,
		Setup: geminiSetup,
		Scenarios: []Scenario{
			{
				Name: "tools", Mode: "headless",
				Description: "gemini -p --yolo: one prompt, a shell command that succeeds, one that fails, then an answer (PreCompress fires before every model call; nothing is compacted)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"tools": {
					calls(call("run_shell_command", obj{"command": "echo hello", "description": "Say hello"})),
					calls(call("run_shell_command", obj{"command": "ls /nonexistent-dir", "description": "List a missing dir"})),
					say("One worked, one failed."),
				}}),
				Drive: func(r *Run) error {
					_, err := r.Exec(3*time.Minute, "", "-p", "SCENARIO:tools run two commands", "--yolo", "--skip-trust")
					return err
				},
			},
		},
	}
}

func geminiSetup(r *Run) error {
	r.Setenv("GOOGLE_GEMINI_BASE_URL", r.Model.URL)
	r.Setenv("GEMINI_API_KEY", "fake-gemini-key")
	r.Setenv("GEMINI_CLI_NO_RELAUNCH", "true")
	return r.WriteJSON(".gemini/settings.json", obj{
		"security":    obj{"auth": obj{"selectedType": "gemini-api-key"}, "folderTrust": obj{"enabled": false}},
		"general":     obj{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":     obj{"usageStatisticsEnabled": false},
		"model":       obj{"name": "gemini-2.5-flash"},
		"hooksConfig": obj{"enabled": true, "notifications": false},
		"hooks":       hooksJSON(geminiHooks, r.HookCommand(), toolEvents, nil),
	})
}
