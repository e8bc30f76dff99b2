package realagents

import (
	"fmt"

	"github.com/tidwall/gjson"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

func codex() *Agent {
	return &Agent{
		Name: "codex", Package: "@openai/codex", Version: "0.171.0", Bin: "codex",
		API:   fakemodel.Responses,
		Setup: codexSetup,
		Scenarios: []Scenario{
			toolsScenario("codex exec", "one prompt, a shell command that succeeds, one that fails, then an answer", truth.Facts{Turns: 1, Sessions: 1, Ended: 1}, []fakemodel.Reply{
				calls(call("exec_command", obj{"cmd": "echo hello", "yield_time_ms": 1000})),
				calls(call("exec_command", obj{"cmd": "ls /nonexistent-dir", "yield_time_ms": 1000})),
				say("One worked, one failed."),
			}, registered,
				codexExec("SCENARIO:tools run two commands")...),
			{
				Name: "subagent", Mode: "headless",
				Description: "codex exec: spawn_agent delegates to a subagent (its UserPromptSubmit carries the parent's session_id, its own turn_id and an agent_id) that runs a command; the parent waits for it and answers",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Subagents: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					switch {
					case req.Side():
						return say("Done.")
					case req.Marker == "child" && req.Round == 0:
						return calls(call("exec_command", obj{"cmd": "echo from-the-child", "yield_time_ms": 1000}))
					case req.Marker == "child":
						return say("Child done.")
					case req.Round == 0 && fakemodel.Marker(req.Human) == "parent":
						// Only the human's prompt delegates: a child's completion
						// comes back as an unmarked message.
						return calls(fakemodel.ToolCall{Name: "spawn_agent", Namespace: "multi_agent_v1", Args: obj{"message": "SCENARIO:child run one command"}})
					case req.Round == 1:
						if id := codexAgentID(req.Body); id != "" {
							return calls(fakemodel.ToolCall{Name: "wait_agent", Namespace: "multi_agent_v1", Args: obj{"targets": []string{id}, "timeout_ms": 60000}})
						}
					}
					return say("The subagent is done.")
				},
				Drive: headless(4*time.Minute, codexExec("SCENARIO:parent delegate")...),
			},
			{
				Name: "api-error", Mode: "headless",
				Description: "codex exec: the model API answers 400 (no retries configured); Codex fires no Stop for the failed turn, then SessionEnd",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, OpenRuns: 1},
				Model:       failing,
				Drive:       headless(2*time.Minute, codexExec("SCENARIO:fail hello")...),
			},
			{
				Name: "approval", Mode: "tmux",
				Description: "codex TUI (-a on-request, read-only sandbox): the model asks to run two shell commands outside the sandbox; the first approved (y: PostToolUse follows), the second refused (Esc: Codex fires Interrupt, and the refused call gets no outcome hook); then /quit",
				// PermissionRequest comes after PreToolUse and names no call:
				// the allowed one is answered by its PostToolUse.
				Facts: truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Interrupts: 1, OpenTools: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"approval": {
					calls(call("exec_command", obj{"cmd": "touch approved-file", "yield_time_ms": 1000, "sandbox_permissions": "require_escalated", "justification": "Create the approved file"})),
					calls(call("exec_command", obj{"cmd": "touch refused-file", "yield_time_ms": 1000, "sandbox_permissions": "require_escalated", "justification": "Create the refused file"})),
					say("One made, one refused."),
				}}),
				Drive: TUI([]string{"--dangerously-bypass-hook-trust", "-a", "on-request", "-s", "read-only"},
					Screen("Ask Codex to do anything"),
					Submitted("SCENARIO:approval make two files", "UserPromptSubmit"),
					Fired("PermissionRequest", 1), Screen("Yes, proceed (y)"), Pause(time.Second), Pressed("y"),
					Fired("PostToolUse", 1),
					Fired("PermissionRequest", 2), Screen("Yes, proceed (y)"), Pause(time.Second), Pressed("Escape"),
					Fired("Interrupt", 1), Screen("Ask Codex to do anything"),
					Typed("/quit"), Fired("SessionEnd", 1),
				),
			},
			{
				Name: "resume", Mode: "headless",
				Description: "codex exec, then codex exec resume --last with a second prompt: the ended thread resumed",
				Facts:       truth.Facts{Turns: 2, Sessions: 2, Ended: 2},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"first": {say("First.")}, "second": {say("Second.")}}),
				Drive:       codexExecResume,
			},
		},
	}
}

// codexAgentID finds the spawned agent's id in the last spawn_agent
// output of a Responses request.
func codexAgentID(body []byte) string {
	id := ""
	for _, it := range gjson.GetBytes(body, "input").Array() {
		if it.Get("type").String() != "function_call_output" {
			continue
		}
		out := it.Get("output").String()
		if v := gjson.Get(out, "agent_id").String(); v != "" {
			id = v
		} else if v := gjson.Get(out, "id").String(); v != "" {
			id = v
		}
	}
	return id
}

// codexExecResume is `codex exec`, then `codex exec resume --last` with a
// second prompt (the scripts' markers first and second).
func codexExecResume(r *Run) error {
	if _, err := r.Exec(2*time.Minute, "", codexExec("SCENARIO:first hello")...); err != nil {
		return err
	}
	_, err := r.Exec(2*time.Minute, "", append([]string{"exec", "resume", "--last", "--skip-git-repo-check",
		"--dangerously-bypass-hook-trust", "--dangerously-bypass-approvals-and-sandbox"}, "SCENARIO:second again")...)
	return err
}

// codexExec is `codex exec PROMPT` trusting the registered hooks.
func codexExec(prompt string, extra ...string) []string {
	args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"--dangerously-bypass-approvals-and-sandbox"}
	return append(append(args, extra...), prompt)
}

func codexSetup(r *Run) error {
	if err := codexConfig(r, ""); err != nil {
		return err
	}
	return r.Register(true)
}

// codexConfig writes $CODEX_HOME/config.toml against the fake model, with
// extra appended.
func codexConfig(r *Run, extra string) error {
	home := filepath.Join(r.Home, ".codex")
	r.Setenv("CODEX_HOME", home)
	r.Setenv("FAKE_API_KEY", "sk-fake-codex")
	cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
`, r.Model.URL)
	return r.WriteFile(filepath.Join(home, "config.toml"), cfg+extra)
}
