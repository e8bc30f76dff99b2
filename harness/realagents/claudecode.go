package realagents

import (
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

const claudeKey = "sk-ant-api03-fakefakefakefakefakefakefakefakefakefakefakefake-fakefakeAA"

func claudeCode() *Agent {
	return &Agent{
		Name: "claude-code", Package: "@anthropic-ai/claude-code", Version: "2.1.332", Bin: "claude",
		API:   fakemodel.Anthropic,
		Setup: claudeSetup,
		Scenarios: []Scenario{
			toolsScenario("claude -p", "one prompt, a shell command that succeeds, one that fails, then an answer", truth.Facts{Turns: 1, Sessions: 1, Ended: 1}, []fakemodel.Reply{
				calls(call("Bash", obj{"command": "echo hello", "description": "Say hello"})),
				calls(call("Bash", obj{"command": "ls /nonexistent-dir", "description": "List a missing dir"})),
				say("One worked, one failed."),
			}, registered,
				claudeHeadless("SCENARIO:tools run two commands", "--permission-mode", "bypassPermissions")...),
			{
				Name: "denied", Mode: "headless",
				Description: "claude -p in the default permission mode: the shell command needs a permission nobody can give, so it is denied (no PostToolUse; PostToolBatch lists it)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model:       callThenSay("denied", call("Bash", obj{"command": "touch made-by-claude", "description": "Create a file"}), "It was denied."),
				Drive:       headless(2*time.Minute, claudeHeadless("SCENARIO:denied create a file")...),
			},
			{
				Name: "subagent", Mode: "headless",
				Description: "claude -p: the Agent tool starts an async subagent whose tool calls (agent_id) go on after the parent's Stop; its completion comes back as a <task-notification> turn",
				Facts:       truth.Facts{Turns: 1, AgentTurns: 1, Sessions: 1, Ended: 1, Subagents: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"parent": {
						calls(call("Agent", obj{"description": "Look around", "prompt": "SCENARIO:child run one command", "subagent_type": "general-purpose"})),
						say("The subagent is done."),
					},
					"child": {
						calls(call("Bash", obj{"command": "echo from-the-child", "description": "Say hello"})),
						say("Child done."),
					},
				}),
				Drive: headless(3*time.Minute, claudeHeadless("SCENARIO:parent delegate", "--permission-mode", "bypassPermissions")...),
			},
			{
				Name: "api-error", Mode: "headless",
				Description: "claude -p: the model API answers 400; 2.1.332 fires no StopFailure in -p (2.1.328 did, SIGTERMing it about 50 ms in), only SessionEnd{other}: the turn keeps no terminal",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, OpenRuns: 1},
				Model:       failing,
				Drive:       headless(2*time.Minute, claudeHeadless("SCENARIO:fail hello")...),
			},
			{
				Name: "max-turns", Mode: "headless",
				Description: "claude -p --max-turns 1: the model calls a tool, the limit ends the turn after it: neither Stop nor StopFailure fires, only SessionEnd{other}",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, OpenRuns: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"limit": {
					calls(call("Bash", obj{"command": "echo one", "description": "Say one"})),
					calls(call("Bash", obj{"command": "echo two", "description": "Say two"})),
					say("Never reached."),
				}}),
				Drive: headless(2*time.Minute, claudeHeadless("SCENARIO:limit two steps", "--max-turns", "1", "--permission-mode", "bypassPermissions")...),
			},
			{
				Name: "queued", Mode: "headless",
				Description: "claude -p --input-format stream-json with two user messages at once: the second is queued into the running turn (same prompt_id)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model:       callThenSay("queued", call("Bash", obj{"command": "sleep 3", "description": "Wait"}), "First answer."),
				Drive: func(r *Run) error {
					in := `{"type":"user","message":{"role":"user","content":"SCENARIO:queued first"}}` + "\n" +
						`{"type":"user","message":{"role":"user","content":"and a second thing"}}` + "\n"
					_, err := r.Exec(3*time.Minute, in, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
						"--verbose", "--permission-mode", "bypassPermissions")
					return err
				},
			},
			{
				Name: "resume-compact", Mode: "headless",
				Description: "claude -p with --session-id, then /compact in a resumed -p run, then one more prompt in another resumed run: two resumes of an ended session, one compaction",
				Facts:       truth.Facts{Turns: 2, Sessions: 3, Ended: 3, Compactions: 1},
				Model:       callThenSay("resume", call("Bash", obj{"command": "echo first", "description": "Say first"}), "First."),
				Drive: func(r *Run) error {
					const sid = "5e55a000-0000-4000-8000-000000000001"
					if _, err := r.Exec(2*time.Minute, "", claudeHeadless("SCENARIO:resume hello", "--session-id", sid, "--permission-mode", "bypassPermissions")...); err != nil {
						return err
					}
					if _, err := r.Exec(2*time.Minute, "", claudeHeadless("/compact", "--resume", sid)...); err != nil {
						return err
					}
					_, err := r.Exec(2*time.Minute, "", claudeHeadless("SCENARIO:again one more", "--resume", sid)...)
					return err
				},
			},
			{
				Name: "dialog", Mode: "tmux",
				Description: "claude TUI, default permission mode: one turn runs two shell commands, the first allowed in the permission dialog (Yes), the second denied (No, which is Esc: it ends the turn with no Stop and the call with no outcome hook); then one more prompt and /exit",
				// The No ends the turn like an interrupt; the denied call gets
				// no hook at all (no PostToolUse, no PostToolBatch).
				Facts: truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1, OpenTools: 1, Answers: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"dialog": {
						calls(call("Bash", obj{"command": "touch allowed-file", "description": "Create the allowed file"})),
						calls(call("Bash", obj{"command": "touch denied-file", "description": "Create the denied file"})),
						say("One allowed, one denied."),
					},
					"after": {say("Hi.")},
				}),
				Drive: TUI([]string{"--permission-mode", "default"},
					Screen(claudeReady),
					Typed("SCENARIO:dialog make two files"),
					Fired("PermissionRequest", 1), Screen("Do you want"), Pause(time.Second), Pressed("Enter"),
					Fired("PermissionRequest", 2), Screen("Do you want"), Pause(time.Second), Pressed("Escape"),
					Screen(claudeReady),
					Typed("SCENARIO:after say hi"), Fired("Stop", 1),
					Typed("/exit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "question", Mode: "tmux",
				Description: "claude TUI: the model asks an AskUserQuestion with two options; the human picks the second in the dialog and submits",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"question": {
					calls(call("AskUserQuestion", obj{"questions": []obj{{
						"question": "Which color should the file be?", "header": "Color", "multiSelect": false,
						"options": []obj{{"label": "Red", "description": "A warm color"}, {"label": "Blue", "description": "A cool color"}},
					}}})),
					say("Blue it is."),
				}}),
				Drive: TUI([]string{"--permission-mode", "default"},
					Screen(claudeReady),
					Typed("SCENARIO:question ask me"),
					Screen("Which color"), Pause(time.Second), Pressed("Down"), Pause(500*time.Millisecond), Pressed("Enter"),
					Fired("Stop", 1),
					Typed("/exit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "control-allow", Mode: "headless",
				Description: "claude -p in the default permission mode, control on: the shell command's PermissionRequest is held and answered yes over the relay, so the command runs (PostToolUse; the file exists), where headless Claude would have denied it",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("allow", call("Bash", obj{"command": "touch made-by-control", "description": "Create a file"}), "Created."),
				Control:     &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "yes"}}}},
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", claudeHeadless("SCENARIO:allow create a file")...); err != nil {
						return err
					}
					return r.Exists("made-by-control")
				},
			},
			{
				Name: "control-guidance", Mode: "headless",
				Description: "claude -p, control on: the shell command is answered with free text over the relay, a refusal whose text Claude Code hands the model as the deny message (the model's next request carries it; the command does not run)",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1, OpenTools: 1},
				Model:       callThenSay("guide", call("Bash", obj{"command": "touch not-this-file", "description": "Create a file"}), "Understood."),
				Control:     &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Text: "Use the scratch folder instead."}}}},
				Drive: func(r *Run) error {
					if _, err := r.Exec(2*time.Minute, "", claudeHeadless("SCENARIO:guide create a file")...); err != nil {
						return err
					}
					if err := r.Absent("not-this-file"); err != nil {
						return err
					}
					return r.ModelSaw("Use the scratch folder instead.")
				},
			},
			{
				Name: "control-form", Mode: "tmux",
				Description: "claude TUI, control on: AskUserQuestion's PermissionRequest is held and answered over the relay with the form's values (the second color); Claude Code takes them through updatedInput and its own question dialog never shows",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"form": {
					calls(call("AskUserQuestion", obj{"questions": []obj{{
						"question": "Which color should the file be?", "header": "Color", "multiSelect": false,
						"options": []obj{{"label": "Red", "description": "A warm color"}, {"label": "Blue", "description": "A cool color"}},
					}}})),
					say("Blue it is."),
				}}),
				Control: &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Values: map[string]any{"1": "2"}}}}},
				Drive: TUI([]string{"--permission-mode", "default"},
					Screen(claudeReady),
					Typed("SCENARIO:form ask me"),
					// Claude Code's tool result names the answer it took.
					Fired("Stop", 1), ModelSaw(`=\"Blue\"`),
					Typed("/exit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "control-elicit-accept", Mode: "headless",
				Description: "claude -p, control on: the model calls the harness's MCP deploy tool, whose server asks Claude Code for a form (elicitation/create); the Elicitation hook is held and answered over the relay with the form's values, which Claude Code hands the server as the accepted content in place of its own dialog (no ElicitationResult fires: a hook's answer is final); the tool result the model reads next carries them",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("elicit", call(claudeElicitTool, obj{}), "Deployed."),
				Control: &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Values: map[string]any{
					"env": "production", "replicas": 3, "confirm": true, "note": "hotfix",
				}}}}},
				Drive: claudeElicit("SCENARIO:elicit deploy it",
					`elicitation accept: {\"confirm\":true,\"env\":\"production\",\"note\":\"hotfix\",\"replicas\":3}`),
			},
			{
				Name: "control-elicit-decline", Mode: "headless",
				Description: "claude -p, control on: the MCP deploy tool's form (elicitation/create) is held at the Elicitation hook and declined over the relay; Claude Code answers the server decline, and the tool result the model reads next says so",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("decline", call(claudeElicitTool, obj{}), "Not deployed."),
				Control:     &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "decline"}}}},
				Drive:       claudeElicit("SCENARIO:decline deploy it", "elicitation decline: nothing deployed"),
			},
			{
				Name: "control-elicit-tui", Mode: "tmux",
				Description: "claude TUI, control on: the MCP deploy tool's form (elicitation/create) is held at the Elicitation hook and answered over the relay with the form's values; the turn ends with no key pressed, so Claude Code's own form dialog never waited, and the tool result the model reads next carries the values",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("elicit", call(claudeElicitTool, obj{}), "Deployed."),
				Control: &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Values: map[string]any{
					"env": "staging", "replicas": 1, "confirm": true,
				}}}}},
				Drive: func(r *Run) error {
					cfg, err := claudeMCPConfig(r)
					if err != nil {
						return err
					}
					return TUI([]string{"--permission-mode", "default", "--allowedTools", claudeElicitTool, "--strict-mcp-config", "--mcp-config", cfg},
						Screen(claudeReady),
						Typed("SCENARIO:elicit deploy it"),
						Fired("Stop", 1), ModelSaw(`elicitation accept: {\"confirm\":true,\"env\":\"staging\",\"replicas\":1}`),
						Typed("/exit"), Fired("SessionEnd", 1))(r)
				},
			},
			{
				Name: "control-elicit-timeout", Mode: "tmux",
				Description: "claude TUI, control on with a 3 s budget and nobody answering: the Elicitation hook gives up, Claude Code's own form dialog appears and is dismissed there with Esc; ElicitationResult reports the cancel, the card is dismissed out of band, and the model reads the cancel",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Control: 1},
				Model:       callThenSay("late", call(claudeElicitTool, obj{}), "Not deployed."),
				Control:     &Control{Budget: "3s", Answers: []ControlAnswer{{}}},
				Drive: func(r *Run) error {
					cfg, err := claudeMCPConfig(r)
					if err != nil {
						return err
					}
					return TUI([]string{"--permission-mode", "default", "--allowedTools", claudeElicitTool, "--strict-mcp-config", "--mcp-config", cfg},
						Screen(claudeReady),
						Typed("SCENARIO:late deploy it"),
						Fired("Elicitation", 1), Screen(MCPElicitMessage), Pause(time.Second), Pressed("Escape"),
						Fired("ElicitationResult", 1), Fired("Stop", 1), ModelSaw("elicitation cancel: nothing deployed"),
						Typed("/exit"), Fired("SessionEnd", 1))(r)
				},
			},
			{
				Name: "control-timeout", Mode: "tmux",
				Description: "claude TUI, control on with a 3 s budget and nobody answering: the hook gives up, Claude Code's own permission dialog appears and is answered Yes there; the card is answered once, out of band",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1},
				Model:       callThenSay("late", call("Bash", obj{"command": "touch allowed-in-dialog", "description": "Create a file"}), "Done."),
				Control:     &Control{Budget: "3s", Answers: []ControlAnswer{{}}},
				Drive: TUI([]string{"--permission-mode", "default"},
					Screen(claudeReady),
					Typed("SCENARIO:late make a file"),
					Fired("PermissionRequest", 1), Screen("Do you want"), Pause(time.Second), Pressed("Enter"),
					Fired("Stop", 1),
					Typed("/exit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "control-down", Mode: "headless",
				Description: "claude -p, control on but no relay listening: the hook replies at once (the card says oob) and headless Claude denies the command as it does without control",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model:       callThenSay("down", call("Bash", obj{"command": "touch made-by-claude", "description": "Create a file"}), "It was denied."),
				Control:     &Control{Down: true},
				Drive:       headless(2*time.Minute, claudeHeadless("SCENARIO:down create a file")...),
			},
			{
				Name: "queued-interrupt", Mode: "tmux",
				Description: "claude TUI: a prompt typed while the first turn waits on the model is queued (UserPromptSubmit with the running turn's prompt_id); Esc interrupts the first turn and the queued prompt runs as its own turn, whose tool and Stop carry a new prompt_id; /exit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"slow": {{Hang: true}},
					"queued": {
						calls(call("Bash", obj{"command": "echo queued", "description": "Say queued"})),
						say("Queued done."),
					},
				}),
				Drive: TUI([]string{"--permission-mode", "default", "--allowedTools", "Bash(echo queued)"},
					Screen(claudeReady),
					Typed("SCENARIO:slow think hard"), Fired("UserPromptSubmit", 1), Screen("esc to interrupt"),
					Pause(time.Second), Typed("SCENARIO:queued say queued"), Fired("UserPromptSubmit", 2),
					Pause(time.Second), Pressed("Escape"),
					Fired("Stop", 1), Screen(claudeReady),
					Typed("/exit"), Fired("SessionEnd", 1)),
			},
			{
				Name: "interrupt-compact", Mode: "tmux",
				Description: "claude TUI: the first turn is interrupted with Esc while the model is still answering; a second prompt finishes; /compact compacts; /exit",
				Facts:       truth.Facts{Turns: 2, Sessions: 1, Ended: 1, Interrupts: 1, Compactions: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"slow":  {{Hang: true}},
					"after": {say("Hi.")},
				}),
				Drive: TUI([]string{"--permission-mode", "default"},
					Screen(claudeReady),
					Typed("SCENARIO:slow think hard"), Fired("UserPromptSubmit", 1), Screen("esc to interrupt"),
					PressedUntilGone("Escape", "esc to interrupt"),
					// Interrupted before any answer, Claude puts the prompt back
					// into the input box: clear it.
					Pause(time.Second), Pressed("C-u"), Screen(claudeReady),
					Typed("SCENARIO:after say hi"), Fired("Stop", 1),
					Typed("/compact"), Fired("PostCompact", 1), Screen(claudeReady),
					Typed("/exit"), Fired("SessionEnd", 1)),
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
	if err := r.Register(true); err != nil {
		return err
	}
	return r.WriteJSON(".claude.json", obj{
		"hasCompletedOnboarding": true, "theme": "dark", "bypassPermissionsModeAccepted": true,
		"customApiKeyResponses": obj{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
		"projects":              obj{r.Work: obj{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true, "allowedTools": []string{}}},
	})
}

// claudeElicitTool is the harness's MCP deploy tool as Claude Code offers
// it (server "probe").
const claudeElicitTool = "mcp__probe__" + MCPElicitTool

// claudeElicit is a Drive that gives claude -p the harness's MCP server
// (--mcp-config, no other server) with its deploy tool allowed, so the
// only question the call raises is the server's form, then runs prompt
// and checks the model's next request carried saw (the tool's result).
func claudeElicit(prompt, saw string) func(r *Run) error {
	return func(r *Run) error {
		cfg, err := claudeMCPConfig(r)
		if err != nil {
			return err
		}
		if _, err := r.Exec(3*time.Minute, "", claudeHeadless(prompt, "--allowedTools", claudeElicitTool,
			"--strict-mcp-config", "--mcp-config", cfg)...); err != nil {
			return err
		}
		return r.ModelSaw(saw)
	}
}

// claudeMCPConfig writes the --mcp-config file naming the harness's MCP
// server (realagents mcp, as server "probe") and returns its path.
func claudeMCPConfig(r *Run) (string, error) {
	cfg := filepath.Join(r.Home, "mcp.json")
	return cfg, r.WriteJSON(cfg, obj{"mcpServers": obj{"probe": obj{"type": "stdio", "command": r.H.Self, "args": []string{"mcp"}}}})
}

// claudeReady is what the TUI shows when it waits for a prompt.
const claudeReady = "for shortcuts"
