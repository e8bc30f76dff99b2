package realagents

import (
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

func geminiCLI() *Agent {
	return &Agent{
		Name: "gemini-cli", Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini",
		API:   fakemodel.Gemini,
		Setup: geminiSetup,
		Scenarios: []Scenario{
			toolsScenario("gemini -p --yolo", "one prompt, a shell command that succeeds, one that fails, then an answer (PreCompress fires before every model call; nothing is compacted)", truth.Facts{Turns: 1, Sessions: 1, Ended: 1}, []fakemodel.Reply{
				calls(call("run_shell_command", obj{"command": "echo hello", "description": "Say hello"})),
				calls(call("run_shell_command", obj{"command": "ls /nonexistent-dir", "description": "List a missing dir"})),
				say("One worked, one failed."),
			}, registered,
				"-p", "SCENARIO:tools run two commands", "--yolo", "--skip-trust"),
			{
				Name: "api-error", Mode: "headless",
				Description: "gemini -p: the model API answers 400; Gemini fires no AfterAgent, so the run has no terminal (nothing says why it stopped)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, OpenRuns: 1},
				Model:       failing,
				Drive:       headless(3*time.Minute, "-p", "SCENARIO:fail hello", "--yolo", "--skip-trust"),
			},
			{
				Name: "compress-tui", Mode: "tmux",
				Description: "gemini TUI: one turn, then /compress (PreCompress trigger manual: the one sure compaction), then /quit (SessionEnd fires three times)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Compactions: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if req.Side() {
						return fakemodel.Reply{Text: "<state_snapshot>The user asked for an answer; it was given.</state_snapshot>", InputTokens: 50000}
					}
					return fakemodel.Reply{Text: "A large answer.", InputTokens: 50000}
				},
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Submitted("SCENARIO:large say something", "BeforeAgent"), Fired("AfterAgent", 1), Screen(qwenReady),
					Submitted("/compress", "PreCompress"), Screen("Chat history compressed"), Screen(qwenReady),
					Submitted("/quit", "SessionEnd")),
			},
			{
				Name: "interrupt-tui", Mode: "tmux",
				Description: "gemini TUI: the first turn is interrupted with Esc while the model is still answering (Gemini still fires AfterAgent), a second prompt finishes, /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"slow":  {{Hang: true}},
					"after": {say("Hi.")},
				}),
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Submitted("SCENARIO:slow think hard", "BeforeAgent"), Fired("BeforeModel", 1), Screen("esc to cancel"), Pause(2*time.Second),
					PressedUntilGone("Escape", "esc to cancel"), Screen(qwenReady),
					Submitted("SCENARIO:after say hi", "BeforeAgent"), Fired("AfterAgent", 1), Screen(qwenReady),
					Submitted("/quit", "SessionEnd")),
			},
		},
	}
}

func geminiSetup(r *Run) error {
	r.Setenv("GOOGLE_GEMINI_BASE_URL", r.Model.URL)
	r.Setenv("GEMINI_API_KEY", "fake-gemini-key")
	r.Setenv("GEMINI_CLI_NO_RELAUNCH", "true")
	if err := r.WriteJSON(".gemini/settings.json", obj{
		"security":    obj{"auth": obj{"selectedType": "gemini-api-key"}, "folderTrust": obj{"enabled": false}},
		"general":     obj{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":     obj{"usageStatisticsEnabled": false},
		"model":       obj{"name": "gemini-2.5-flash"},
		"hooksConfig": obj{"enabled": true, "notifications": false},
	}); err != nil {
		return err
	}
	return r.Register(true)
}
