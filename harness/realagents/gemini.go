package realagents

import (
	"regexp"
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
				Description: "gemini -p: the model API answers 400; Gemini fires no AfterAgent, so the turn never reports its end: SessionEnd proves it over (run.cancelled with no by: nothing says how it ended) and the session's end gives no reason",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Unreported: 1, AbnormalEnds: 1},
				Model:       failing,
				Drive:       headless(3*time.Minute, "-p", "SCENARIO:fail hello", "--yolo", "--skip-trust"),
			},
			{
				Name: "compress-tui", Mode: "tmux",
				Description: "gemini TUI: one turn, then /compress (PreCompress trigger manual: the one sure compaction), then /quit",
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
			{
				Name: "esc-tool-tui", Mode: "tmux",
				Description: "gemini TUI: Esc while a shell command runs (its AfterTool says it was cancelled; Gemini fires no AfterAgent for the turn), a second prompt finishes, /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1, ToolsStopped: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"sleepy": {calls(call("run_shell_command", obj{"command": "sleep 120", "description": "Wait a while"}))},
					"after":  {say("Hi.")},
				}),
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Submitted("SCENARIO:sleepy wait a while", "BeforeAgent"), Fired("BeforeTool", 1), Screen("esc to cancel"), Pause(2*time.Second),
					PressedUntilGone("Escape", "esc to cancel"), Fired("AfterTool", 1), Screen(qwenReady),
					Submitted("SCENARIO:after say hi", "BeforeAgent"), Fired("AfterAgent", 1), Screen(qwenReady),
					Submitted("/quit", "SessionEnd")),
			},
			{
				Name: "refused-tui", Mode: "tmux",
				Description: "gemini TUI in its default approval mode: a shell command's card is refused (No, suggest changes: Esc); the turn ends with no hook saying so; a second prompt finishes, /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1},
				Model: latestTurns(map[string][]fakemodel.Reply{
					"refuse": {calls(call("run_shell_command", obj{"command": "touch refused-file", "description": "Create the refused file"}))},
					"after":  {say("Hi.")},
				}),
				Drive: TUI(nil,
					Screen(qwenReady),
					Submitted("SCENARIO:refuse make a file", "BeforeAgent"), Screen("Allow once"), Pause(time.Second), Pressed("Escape"),
					Screen(qwenReady),
					Submitted("SCENARIO:after say hi", "BeforeAgent"), Fired("AfterAgent", 1), Screen(qwenReady),
					Submitted("/quit", "SessionEnd")),
			},
			{
				Name: "allow-session-tui", Mode: "tmux",
				Description: "gemini TUI in its default approval mode: the first touch allowed for this session (the card is a ToolPermission notification after BeforeTool), the second touch runs with no card, a file write allowed once; /quit",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"allow": {
					calls(call("run_shell_command", obj{"command": "touch first-file", "description": "Create the first file"})),
					calls(call("run_shell_command", obj{"command": "touch second-file", "description": "Create the second file"})),
					calls(call("write_file", obj{"file_path": "notes.txt", "content": "hello\n"})),
					say("All done."),
				}}),
				Drive: TUI(nil,
					Screen(qwenReady),
					Submitted("SCENARIO:allow touch and write", "BeforeAgent"),
					Fired("Notification", 1), Screen("Allow for this session"), Pause(time.Second), Pressed("Down"), Pause(500*time.Millisecond), shown(), Pressed("Enter"),
					Fired("AfterTool", 2),
					Fired("Notification", 2), Screen("Allow once"), Pause(time.Second), shown(), Pressed("Enter"),
					Fired("AfterAgent", 1), Screen(qwenReady),
					Submitted("/quit", "SessionEnd")),
			},
			{
				Name: "subagent", Mode: "headless",
				Description: "gemini -p --yolo: invoke_agent delegates to the generalist subagent, which runs a command and calls complete_task (its tool hooks are the parent's session's: nothing names the subagent); the parent answers",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Subagents: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					switch {
					case req.Side():
						return say("Done.")
					case req.Marker == "child" && req.Round == 0:
						return calls(call("run_shell_command", obj{"command": "echo from-the-child", "description": "Say hello"}))
					case req.Marker == "child":
						return calls(call("complete_task", obj{"result": obj{"response": "Ran it."}}))
					case req.Marker == "parent" && req.Round == 0:
						return calls(call("invoke_agent", obj{"agent_name": "generalist", "prompt": "SCENARIO:child run one command"}))
					}
					return say("Done.")
				},
				Drive: headless(4*time.Minute, "-p", "SCENARIO:parent delegate", "--yolo", "--skip-trust"),
			},
			{
				Name: "parallel", Mode: "headless",
				Description: "gemini -p --yolo: one reply with two shell commands and a read of a missing file (parallel calls in one reply), then an answer",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"parallel": {
					calls(call("run_shell_command", obj{"command": "echo one", "description": "Say one"}),
						call("run_shell_command", obj{"command": "echo two", "description": "Say two"}),
						call("read_file", obj{"file_path": "missing.txt"})),
					say("Both ran."),
				}}),
				Drive: headless(3*time.Minute, "-p", "SCENARIO:parallel run both", "--yolo", "--skip-trust"),
			},
			{
				Name: "mcp", Mode: "headless",
				Description: "gemini -p --yolo with a stdio MCP server: one reply calls its echo tool and a shell command at once, then an answer",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if t := mcpTool(req); t != "" && req.Marker == "mcp" && req.Round == 0 {
						return calls(call(t, obj{"text": "hello"}), call("run_shell_command", obj{"command": "echo beside", "description": "Say beside"}))
					}
					return say("Echoed.")
				},
				Drive: withMCP(".gemini/settings.json", headless(3*time.Minute, "-p", "SCENARIO:mcp echo hello", "--yolo", "--skip-trust")),
			},
			{
				Name: "stream-cut", Mode: "headless",
				Description: "gemini -p: the model's answer is cut mid-stream (the connection dropped after half its text); Gemini does not retry it: the turn ends with no AfterAgent and the process exits on the error (SessionEnd exit)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Unreported: 1, AbnormalEnds: 1},
				Model:       cutOnce("cut", say("An answer that arrives in two halves.")),
				Drive:       headless(3*time.Minute, "-p", "SCENARIO:cut say something", "--yolo", "--skip-trust"),
			},
			{
				Name: "two-sessions", Mode: "headless",
				Description: "two gemini -p --yolo at once in one folder, each running a command: two sessions side by side",
				Facts:       truth.Facts{Turns: 2, Sessions: 2, Ended: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"one": {calls(call("run_shell_command", obj{"command": "echo one", "description": "Say one"})), say("One.")},
					"two": {calls(call("run_shell_command", obj{"command": "echo two", "description": "Say two"})), say("Two.")},
				}),
				Drive: together(3*time.Minute,
					[]string{"-p", "SCENARIO:one first session", "--yolo", "--skip-trust"},
					[]string{"-p", "SCENARIO:two second session", "--yolo", "--skip-trust"}),
			},
			{
				Name: "resume", Mode: "headless",
				Description: "gemini -p, one turn that finishes, then gemini --resume latest -p whose model API answers 400: a new AEP session continuing the first, whose turn ends unreported (SessionEnd proves it over; the session's end gives no reason). A session whose only turn failed is not saved, so the resume follows one that finished",
				Facts:       truth.Facts{Turns: 2, Sessions: 2, Ended: 2, Unreported: 1, AbnormalEnds: 1},
				// The resumed request repeats the earlier prompt: the last
				// marker is the turn's.
				Model: latestTurns(map[string][]fakemodel.Reply{"first": {say("Hi.")}, "again": {{Status: 400}}}),
				Drive: func(r *Run) error {
					if _, err := r.Exec(3*time.Minute, "", "-p", "SCENARIO:first say hi", "--yolo", "--skip-trust"); err != nil {
						return err
					}
					_, err := r.Exec(3*time.Minute, "", "--resume", "latest", "-p", "SCENARIO:again say hi", "--yolo", "--skip-trust")
					return err
				},
			},
			{
				Name: "typed-during-tui", Mode: "tmux",
				Description: "gemini TUI --yolo: a second prompt typed while the first turn's command runs (Gemini queues it), both turns finish, /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"first":  {calls(call("run_shell_command", obj{"command": "sleep 8", "description": "Wait"})), say("Waited.")},
					"second": {say("Second.")},
				}),
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Submitted("SCENARIO:first wait", "BeforeAgent"), Fired("BeforeTool", 1), Pause(time.Second),
					Typed("SCENARIO:second then this"), Pause(time.Second), Pressed("Enter"), shown(),
					Fired("BeforeAgent", 2), Fired("AfterAgent", 2), Screen(qwenReady),
					Submitted("/quit", "SessionEnd")),
			},
		},
	}
}

// latestTurns is fakemodel.Turns keyed by the last marker of the human's
// message: after a refused call Gemini sends the next prompt in the same
// user message as the refused turn's.
func latestTurns(byMarker map[string][]fakemodel.Reply) fakemodel.Script {
	turns := fakemodel.Turns(byMarker)
	return func(req fakemodel.Request) fakemodel.Reply {
		if ms := scenarioMarker.FindAllStringSubmatch(req.Human, -1); len(ms) > 0 {
			req.Marker = ms[len(ms)-1][1]
		}
		return turns(req)
	}
}

// scenarioMarker finds the scenario markers of a prompt.
var scenarioMarker = regexp.MustCompile(`SCENARIO:([A-Za-z0-9_.-]+)`)

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
