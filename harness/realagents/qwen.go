package realagents

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

func qwenCode() *Agent {
	return &Agent{
		Name: "qwen-code", Package: "@qwen-code/qwen-code", Version: "0.24.4", Bin: "qwen",
		API:   fakemodel.ChatCompletions,
		Setup: qwenSetup,
		Scenarios: []Scenario{
			// Headless -p never fires SessionEnd.
			toolsScenario("qwen -p --yolo", "one prompt, a shell command that succeeds, one that fails, then an answer (UserPromptSubmit fires before every model round)", truth.Facts{Turns: 1, Sessions: 1, Ended: 0}, []fakemodel.Reply{
				calls(call("run_shell_command", obj{"command": "echo hello", "description": "Say hello"})),
				calls(call("run_shell_command", obj{"command": "ls /nonexistent-dir", "description": "List a missing dir"})),
				say("One worked, one failed."),
			}, registered,
				"-p", "SCENARIO:tools run two commands", "--yolo"),
			{
				Name: "subagent", Mode: "headless",
				Description: "qwen -p --yolo: the agent tool delegates to a general-purpose subagent that runs a command (its hooks carry agent_id); the parent answers",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Subagents: 1, AgentTurns: truth.Any},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					switch {
					case req.Marker == "child" && req.Round == 0:
						return calls(call("run_shell_command", obj{"command": "echo from-the-child", "description": "Say hello"}))
					case fakemodel.Marker(req.Human) == "parent" && req.Round == 0 && !req.Side():
						// Only the human's prompt delegates: the subagent's
						// completion notice comes back as an unmarked user message.
						return calls(call("agent", obj{"description": "Look around", "prompt": "SCENARIO:child run one command", "subagent_type": "general-purpose"}))
					}
					return say("Done.")
				},
				Drive: headless(4*time.Minute, "-p", "SCENARIO:parent delegate", "--yolo"),
			},
			{
				Name: "api-error", Mode: "headless",
				Description: "qwen -p: the model API answers 400; headless Qwen fires no StopFailure, so the run has no terminal (and -p no SessionEnd)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, OpenRuns: 1},
				Model:       failing,
				Drive:       headless(2*time.Minute, "-p", "SCENARIO:fail hello", "--yolo"),
			},
			{
				Name: "compact", Mode: "headless",
				Description: "qwen -p --yolo: the first answer reports a prompt of 190000 tokens, so Qwen compacts its context automatically before the next model round",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Compactions: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					switch {
					case req.Side():
						// The summary request holds the whole history: its
						// usage must say so, or Qwen judges the compaction
						// inflated and drops it.
						return fakemodel.Reply{Text: qwenSnapshot, InputTokens: 190000}
					case req.Marker == "big" && req.Round == 0:
						return fakemodel.Reply{Calls: []fakemodel.ToolCall{call("run_shell_command", obj{"command": "echo big", "description": "Say big"})}, InputTokens: 190000}
					}
					return say("Done after compaction.")
				},
				Drive: headless(4*time.Minute, "-p", "SCENARIO:big fill the context", "--yolo"),
			},
			{
				Name: "approval-tui", Mode: "tmux",
				Description: "qwen TUI in its default (auto) approval mode, the classifier unavailable: two shell commands, the first allowed in Qwen's confirmation dialog (Yes, allow once), the second refused (Esc); then /quit",
				// PermissionRequest comes before PreToolUse and names no call.
				// The refused call fires no PreToolUse, and the turn no Stop:
				// it ends like an interrupt.
				Facts: truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 2, Interrupts: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"approval": {
					calls(call("run_shell_command", obj{"command": "touch allowed-file", "description": "Create the allowed file"})),
					calls(call("run_shell_command", obj{"command": "touch refused-file", "description": "Create the refused file"})),
					say("One made, one refused."),
				}}),
				Drive: TUI(nil,
					Screen(qwenReady),
					Typed("SCENARIO:approval make two files"), Fired("PermissionRequest", 1), Screen("Yes, allow once"), Pause(time.Second), Pressed("Enter"),
					Fired("PostToolUse", 1),
					Fired("PermissionRequest", 2), Screen("Yes, allow once"), Pause(time.Second), Pressed("Escape"),
					Fired("PostToolBatch", 2), Screen(qwenReady),
					Typed("/quit"), Fired("SessionEnd", 1),
				),
			},
			{
				Name: "compress-tui", Mode: "tmux",
				Description: "qwen TUI: one turn whose answer reports a large prompt, then /compress (manual compaction), then /quit",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Compactions: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if req.Side() {
						return fakemodel.Reply{Text: qwenSnapshot, InputTokens: 50000}
					}
					return fakemodel.Reply{Text: "A large answer.", InputTokens: 50000}
				},
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Typed("SCENARIO:large say something"), Fired("Stop", 1), Screen(qwenReady),
					Typed("/compress"), Fired("PostCompact", 1), Screen(qwenReady),
					Typed("/quit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "refused-tui", Mode: "tmux",
				Description: "qwen TUI --approval-mode default: a shell command's card refused by choosing No, suggest changes by its number (PostToolBatch: cancelled, the user did not allow it; the turn ends with no Stop), a second prompt, /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Answers: 1, Interrupts: 1},
				Model: latestTurns(map[string][]fakemodel.Reply{
					"refuse": {calls(call("run_shell_command", obj{"command": "touch refused-file", "description": "Create the refused file"}))},
					"after":  {say("Hi.")},
				}),
				Drive: TUI([]string{"--approval-mode", "default"},
					Screen(qwenReady),
					Typed("SCENARIO:refuse make a file"), Fired("PermissionRequest", 1), Screen("No, suggest changes"), Pause(time.Second), shown(),
					pressedOption("No, suggest changes"), Pause(time.Second), shown(),
					Fired("PostToolBatch", 1), Screen(qwenReady),
					Typed("SCENARIO:after say hi"), Fired("Stop", 1), Screen(qwenReady),
					Typed("/quit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "esc-tool-tui", Mode: "tmux",
				Description: "qwen TUI --yolo: Esc while a shell command runs, a second prompt finishes, /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1, ToolsStopped: 1},
				Model: latestTurns(map[string][]fakemodel.Reply{
					// Qwen blocks a sleep unless a comment says it is meant.
					"sleepy": {calls(call("run_shell_command", obj{"command": "sleep 120 # intentional-sleep: the user interrupts it", "description": "Wait a while"}))},
					"after":  {say("Hi.")},
				}),
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Typed("SCENARIO:sleepy wait a while"), Fired("PreToolUse", 1), Screen("esc to cancel"), Pause(2*time.Second), shown(),
					PressedUntilGone("Escape", "esc to cancel"), Screen(qwenReady), Pause(time.Second), shown(),
					Typed("SCENARIO:after say hi"), Fired("Stop", 1), Screen(qwenReady),
					Typed("/quit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "typed-during-tui", Mode: "tmux",
				Description: "qwen TUI --yolo: a second prompt typed (Enter) while the first turn's command runs: Qwen steers the turn with it (its UserPromptSubmit has the turn's prompt_id, the next model round answers it), one Stop; /quit",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model: latestTurns(map[string][]fakemodel.Reply{
					"first":  {calls(call("run_shell_command", obj{"command": "sleep 8 # intentional-sleep: a prompt is typed meanwhile", "description": "Wait"})), say("Waited.")},
					"second": {say("Second.")},
				}),
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Typed("SCENARIO:first wait"), Fired("PreToolUse", 1), Pause(time.Second),
					Typed("SCENARIO:second then this"), Pause(time.Second), shown(),
					Fired("PostToolUse", 1), Fired("Stop", 1), Pause(5*time.Second), Screen(qwenReady), shown(),
					Typed("/quit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "queued-tui", Mode: "tmux",
				Description: "qwen TUI --yolo: a second prompt queued (Ctrl+Q) while the first turn's command runs: Qwen sends it when the turn ends, as a turn of its own; /quit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1},
				Model: latestTurns(map[string][]fakemodel.Reply{
					"first":  {calls(call("run_shell_command", obj{"command": "sleep 8 # intentional-sleep: a prompt is queued meanwhile", "description": "Wait"})), say("Waited.")},
					"second": {say("Second.")},
				}),
				Drive: TUI([]string{"--yolo"},
					Screen(qwenReady),
					Typed("SCENARIO:first wait"), Fired("PreToolUse", 1), Pause(time.Second),
					typedOnly("SCENARIO:second then this"), Pause(500*time.Millisecond), Pressed("C-q"), Pause(time.Second), shown(),
					Fired("Stop", 2), Screen(qwenReady), shown(),
					Typed("/quit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "always-tui", Mode: "tmux",
				Description: "qwen TUI --approval-mode default: the first touch allowed always in this project, the second touch runs with no card; /quit",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"always": {
					calls(call("run_shell_command", obj{"command": "touch first-file", "description": "Create the first file"})),
					calls(call("run_shell_command", obj{"command": "touch second-file", "description": "Create the second file"})),
					say("Both made."),
				}}),
				Drive: TUI([]string{"--approval-mode", "default"},
					Screen(qwenReady),
					Typed("SCENARIO:always make two"), Fired("PermissionRequest", 1), Screen("commands in this project"), Pause(time.Second), shown(),
					pressedOption("Always allow run 'touch *' commands in this project"), Pause(time.Second), shown(),
					Fired("Stop", 1), Screen(qwenReady),
					Typed("/quit"), Fired("SessionEnd", 1)),
			},
			qwenControl("control-allow",
				"the shell command's PermissionRequest is held and answered proceed_once over the relay: Qwen runs it with no dialog (PostToolUse; the file exists)",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				"allow", "made-by-control", &Control{Budget: "50s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "proceed_once"}}}},
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("made-by-control")),
			qwenControl("control-deny",
				"the shell command's PermissionRequest is answered cancel over the relay: Qwen does not run it (no PreToolUse; no file) and hands the model the hook's deny message",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				"deny", "denied-by-control", &Control{Budget: "50s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "cancel"}}}},
				Fired("Stop", 1), NotMade("denied-by-control"), ModelSaw(controlDenied)),
			qwenControl("control-guidance",
				"the shell command is answered with free text over the relay: a refusal whose text Qwen hands the model as the call's error (the model's next request carries it; the command does not run)",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				"guide", "not-this-file", &Control{Budget: "50s", Answers: []ControlAnswer{{Answer: &answer.Answer{Text: "Use the scratch folder instead."}}}},
				Fired("Stop", 1), NotMade("not-this-file"), ModelSaw("Use the scratch folder instead.")),
			qwenControl("control-timeout",
				"control on with a 3 s budget and nobody answering: the hook gives up, Qwen's own confirmation dialog appears and is answered Yes, allow once there (PostToolUse; the file exists); the card is answered once, out of band",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1},
				"late", "allowed-in-dialog", &Control{Budget: "3s", Answers: []ControlAnswer{{}}},
				Screen("Yes, allow once"), Pause(time.Second), Pressed("Enter"),
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("allowed-in-dialog")),
			qwenControl("control-always",
				"the sender picks Always allow in this project over the relay: Qwen's hook can only allow once, so the command is rejected (refused) and the request stays pending; the budget passes, Qwen's own dialog appears and is answered Yes, allow once there: the card is answered once, out of band",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1},
				"always", "allowed-after-refusal", &Control{Budget: "8s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "proceed_always_project"}}}},
				Screen("Yes, allow once"), Pause(time.Second), Pressed("Enter"),
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("allowed-after-refusal")),
			qwenControl("control-down",
				"control on but no relay listening: the hook replies at once (its elapsed time is recorded; the card says oob), Qwen's own dialog appears and is answered Yes, allow once there",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1},
				"down", "allowed-no-relay", &Control{Down: true},
				Screen("Yes, allow once"), Pause(time.Second), Pressed("Enter"),
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("allowed-no-relay")),
			{
				Name: "resume", Mode: "headless",
				Description: "qwen -p whose model API answers 400 (no StopFailure headless: the run is left open), then qwen --continue -p: the resumed process loads its instructions before SessionStart{resume}, and its turn finishes",
				// The first run ends unreported; the resumed process proves it over.
				Facts: truth.Facts{Turns: 2, Sessions: 2, Unreported: 1},
				// The resumed request repeats the failed prompt in the same user
				// message: the last marker is the turn's.
				Model: latestTurns(map[string][]fakemodel.Reply{"fail": {{Status: 400}}, "again": {say("Hi.")}}),
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", "-p", "SCENARIO:fail hello", "--yolo"); err != nil {
						return err
					}
					_, err := r.Exec(2*time.Minute, "", "--continue", "-p", "SCENARIO:again say hi", "--yolo")
					return err
				},
			},
			{
				Name: "bg-subagents", Mode: "headless",
				Description: "qwen -p --yolo: one reply delegates to two background subagents at once, each runs a command; the parent answers, then Qwen runs a turn by itself for the completion notices (Stop with the parent's prompt_id, no UserPromptSubmit)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Subagents: 2, AgentTurns: 2},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					switch {
					case req.Side():
						return say("Done.")
					case (req.Marker == "childa" || req.Marker == "childb") && req.Round == 0:
						return calls(call("run_shell_command", obj{"command": "echo from-" + req.Marker, "description": "Say hello"}))
					case fakemodel.Marker(req.Human) == "parent" && req.Round == 0:
						return calls(
							call("agent", obj{"description": "First look", "prompt": "SCENARIO:childa run one command", "subagent_type": "general-purpose"}),
							call("agent", obj{"description": "Second look", "prompt": "SCENARIO:childb run one command", "subagent_type": "general-purpose"}))
					}
					return say("Done.")
				},
				Drive: headless(4*time.Minute, "-p", "SCENARIO:parent delegate twice", "--yolo"),
			},
			{
				Name: "mcp", Mode: "headless",
				Description: "qwen -p --yolo with a stdio MCP server: Qwen defers MCP tools, so the model looks the echo tool up (tool_search), then calls it through tool_call beside a shell command, then answers",
				Facts:       truth.Facts{Turns: 1, Sessions: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"mcp": {
					calls(call("tool_search", obj{"query": "select:" + qwenDeferredMCP})),
					calls(call("tool_call", obj{"name": qwenDeferredMCP, "arguments": obj{"text": "hello"}}),
						call("run_shell_command", obj{"command": "echo beside", "description": "Say beside"})),
					say("Echoed."),
				}}),
				Drive: withMCP(".qwen/settings.json", headless(3*time.Minute, "-p", "SCENARIO:mcp echo hello", "--yolo")),
			},
			{
				Name: "stream-cut", Mode: "headless",
				Description: "qwen -p: the model's answer is cut mid-stream (the connection dropped after half its text); the agent retries and the answer comes whole: one turn, finished",
				Facts:       truth.Facts{Turns: 1, Sessions: 1},
				Model:       cutOnce("cut", say("An answer that arrives in two halves.")),
				Drive:       headless(3*time.Minute, "-p", "SCENARIO:cut say something", "--yolo"),
			},
			{
				Name: "two-sessions", Mode: "headless",
				Description: "two qwen -p --yolo at once in one folder, each running a command: two sessions side by side (headless fires no SessionEnd)",
				Facts:       truth.Facts{Turns: 2, Sessions: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"one": {calls(call("run_shell_command", obj{"command": "echo one", "description": "Say one"})), say("One.")},
					"two": {calls(call("run_shell_command", obj{"command": "echo two", "description": "Say two"})), say("Two.")},
				}),
				Drive: together(3*time.Minute,
					[]string{"-p", "SCENARIO:one first session", "--yolo"},
					[]string{"-p", "SCENARIO:two second session", "--yolo"}),
			},
			{
				Name: "parallel", Mode: "headless",
				Description: "qwen -p --yolo: one reply with two shell commands and a read of a missing file (parallel calls in one reply), then an answer",
				Facts:       truth.Facts{Turns: 1, Sessions: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"parallel": {
					calls(call("run_shell_command", obj{"command": "echo one", "description": "Say one"}),
						call("run_shell_command", obj{"command": "echo two", "description": "Say two"}),
						call("read_file", obj{"absolute_path": "/nonexistent-dir/missing.txt"})),
					say("Both ran."),
				}}),
				Drive: headless(3*time.Minute, "-p", "SCENARIO:parallel run both", "--yolo"),
			},
			{
				Name: "todos", Mode: "headless",
				Description: "qwen -p --yolo: todo_write creates two todos, a second todo_write completes the first, then an answer (each todo hook fires twice per write, at validation and postWrite)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"todos": {
					calls(call("todo_write", obj{"todos": []obj{
						{"id": "1", "content": "Look around", "status": "pending"},
						{"id": "2", "content": "Say hi", "status": "pending"}}})),
					calls(call("todo_write", obj{"todos": []obj{
						{"id": "1", "content": "Look around", "status": "completed"},
						{"id": "2", "content": "Say hi", "status": "pending"}}})),
					say("Hi."),
				}}),
				Drive: headless(3*time.Minute, "-p", "SCENARIO:todos plan it", "--yolo"),
			},
		},
	}
}

// shown notes what the pane shows, for the log (a dialog's options as this
// version draws them).
func shown() Step {
	return func(t *Tmux) error {
		t.r.Notes = append(t.r.Notes, "screen:\n"+t.Screen())
		return nil
	}
}

// typedOnly types text without pressing Enter.
func typedOnly(text string) Step { return func(t *Tmux) error { return t.Type(text, false) } }

// pressedOption presses the number the dialog on screen shows before
// label ("3. No, suggest changes"): arrow keys race the dialog's redraw.
func pressedOption(label string) Step {
	return func(t *Tmux) error {
		for _, line := range strings.Split(t.Screen(), "\n") {
			before, _, found := strings.Cut(line, ". "+label)
			if !found {
				continue
			}
			fields := strings.Fields(before)
			if len(fields) == 0 {
				break
			}
			n := fields[len(fields)-1]
			if _, err := strconv.Atoi(n); err != nil {
				break
			}
			return t.Keys(n)
		}
		return fmt.Errorf("no numbered option %q on screen:\n%s", label, t.Screen())
	}
}

// qwenSnapshot is a compaction summary in the shape Qwen Code asks for.
const qwenSnapshot = "<analysis>Short.</analysis><state_snapshot>The user asked for a large answer; it was given.</state_snapshot>"

// qwenDeferredMCP is the name Qwen Code gives the harness's MCP tool
// (server "probe"), which it offers only through tool_search / tool_call.
const qwenDeferredMCP = "mcp__probe__" + MCPTool

// qwenReady is what the Qwen Code TUI shows when it waits for a prompt.
const qwenReady = "Type your message"

func qwenSetup(r *Run) error {
	r.Setenv("OPENAI_BASE_URL", r.Model.URL+"/v1")
	r.Setenv("OPENAI_API_KEY", "sk-fake-qwen")
	r.Setenv("OPENAI_MODEL", "fake-model")
	if err := r.WriteJSON(".qwen/settings.json", obj{
		"security": obj{"auth": obj{"selectedType": "openai"}, "folderTrust": obj{"enabled": false}},
		"model":    obj{"name": "fake-model"},
		"tools":    obj{"todoWrite": obj{"enabled": true}},
		"privacy":  obj{"usageStatisticsEnabled": false},
	}); err != nil {
		return err
	}
	return r.Register(true)
}

// qwenControl is a Qwen Code TUI scenario with the control loop
// (--approval-mode default): the model runs `touch file` once, under
// marker; steps play once the PermissionRequest has fired, then /quit.
// Headless qwen refuses a call that needs confirmation before any hook.
func qwenControl(name, desc string, facts truth.Facts, marker, file string, c *Control, steps ...Step) Scenario {
	all := []Step{
		Screen(qwenReady),
		Typed("SCENARIO:" + marker + " make a file"),
		Fired("PermissionRequest", 1),
	}
	all = append(all, steps...)
	all = append(all, Screen(qwenReady), Typed("/quit"), Fired("SessionEnd", 1))
	return Scenario{
		Name: name, Mode: "tmux",
		Description: "qwen TUI --approval-mode default, control on: " + desc,
		Facts:       facts,
		Model: latestTurns(map[string][]fakemodel.Reply{marker: {
			calls(call("run_shell_command", obj{"command": "touch " + file, "description": "Create " + file})),
			say("Done with the file."),
		}}),
		Control: c,
		Drive:   TUI([]string{"--approval-mode", "default"}, all...),
	}
}
