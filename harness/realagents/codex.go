package realagents

import (
	"fmt"
	"os"
	"strings"

	"github.com/tidwall/gjson"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
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
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Subagents: 1, ToolNames: []string{"Bash", "spawn_agent", "wait_agent"}},
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
				Description: "codex exec: the model API answers 400 (no retries configured); PostModelRequest reports the failed attempt, Codex fires no Stop for the failed turn, then SessionEnd",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Failures: 1},
				Model:       failing,
				Drive:       headless(2*time.Minute, codexExec("SCENARIO:fail hello")...),
			},
			{
				Name: "retries-exhausted", Mode: "headless",
				Description: "codex exec with one stream retry: both attempts' streams report response.failed (two PostModelRequest failed), no Stop, then SessionEnd: the turn failed",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Failures: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if req.Side() {
						return say("Done.")
					}
					return fakemodel.Reply{StreamFailed: true}
				},
				Drive: headless(2*time.Minute, codexExec("SCENARIO:exhaust hello", "-c", codexRetries)...),
			},
			{
				Name: "retry", Mode: "headless",
				Description: "codex exec with one stream retry: the first attempt's stream reports response.failed (PostModelRequest failed, attempt 1), the retry completes and the turn ends with Stop: a failed attempt is not a failed turn",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1},
				Model:       failingOnceWith("retry", fakemodel.Reply{StreamFailed: true}, say("Second attempt worked.")),
				Drive:       headless(2*time.Minute, codexExec("SCENARIO:retry hello", "-c", codexRetries)...),
			},
			{
				Name: "patch-approval", Mode: "tmux",
				Description: "codex TUI (-a on-request, read-only sandbox, a model Codex offers apply_patch to): two apply_patch calls, each approved once (y) and then applied; their PermissionRequest names no call and its command lacks the trailing newline of the tool hooks; then /quit",
				Facts:       truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 2, ToolNames: []string{"apply_patch"}},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"patch": {
					calls(fakemodel.ToolCall{Name: "apply_patch", Custom: true, Input: "*** Begin Patch\n*** Add File: first.txt\n+first\n*** End Patch\n"}),
					calls(fakemodel.ToolCall{Name: "apply_patch", Custom: true, Input: "*** Begin Patch\n*** Add File: second.txt\n+second\n*** End Patch\n"}),
					say("Two files made."),
				}}),
				Drive: codexWithPatchModel(TUI([]string{"--dangerously-bypass-hook-trust", "-a", "on-request", "-s", "read-only", "-m", codexPatchModel},
					Screen("Ask Codex to do anything"),
					Submitted("SCENARIO:patch make two files", "UserPromptSubmit"),
					Fired("PermissionRequest", 1), Screen("(y)"), Pause(time.Second), Pressed("y"),
					Fired("PostToolUse", 1),
					Fired("PermissionRequest", 2), Screen("(y)"), Pause(time.Second), Pressed("y"),
					Fired("PostToolUse", 2), Fired("Stop", 1), Screen("Ask Codex to do anything"),
					Typed("/quit"), Fired("SessionEnd", 1),
				)),
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
			codexControl("control-allow",
				"the shell command's PermissionRequest is held and answered allow over the relay: Codex runs it with no dialog (PostToolUse; the file exists)",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				"allow", "made-by-control", &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "allow"}}}},
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("made-by-control")),
			codexControl("control-deny",
				"the shell command's PermissionRequest is answered deny over the relay: Codex does not run it (no PostToolUse; no file) and the hook's default deny message reaches the model",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1, OpenTools: 1},
				"deny", "denied-by-control", &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "deny"}}}},
				Fired("Stop", 1), NotMade("denied-by-control"), ModelSaw(controlDenied)),
			codexControl("control-guidance",
				"the shell command is answered with free text over the relay: a refusal whose text Codex hands the model as the deny message (the model's next request carries it; the command does not run)",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1, OpenTools: 1},
				"guide", "not-this-file", &Control{Budget: "60s", Answers: []ControlAnswer{{Answer: &answer.Answer{Text: "Use the scratch folder instead."}}}},
				Fired("Stop", 1), NotMade("not-this-file"), ModelSaw("Use the scratch folder instead.")),
			codexControl("control-timeout",
				"control on with a 3 s budget and nobody answering: the hook gives up, Codex's own approval dialog appears and is answered y there (PostToolUse; the file exists); the card is answered once, out of band",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1},
				"late", "allowed-in-dialog", &Control{Budget: "3s", Answers: []ControlAnswer{{}}},
				Screen("Yes, proceed (y)"), Pause(time.Second), Pressed("y"),
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("allowed-in-dialog")),
			codexControl("control-down",
				"control on but no relay listening: the hook replies at once (its elapsed time is recorded; the card says oob), Codex's own dialog appears and is answered y there",
				truth.Facts{Turns: 1, Sessions: 1, Ended: 1, Answers: 1},
				"down", "allowed-no-relay", &Control{Down: true},
				Screen("Yes, proceed (y)"), Pause(time.Second), Pressed("y"),
				Fired("PostToolUse", 1), Fired("Stop", 1), Made("allowed-no-relay")),
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

// codexRetries lets Codex retry a failed model stream once (the
// provider's default in the harness is no retry; an HTTP-level retry is
// inside one attempt and fires no hook).
const codexRetries = "model_providers.fake.stream_max_retries=1"

// codexPatchModel is the model codexWithPatchModel adds to Codex's
// catalog: Codex offers apply_patch only to a model its catalog says
// takes it (an unknown name gets the fallback metadata, without it).
const codexPatchModel = "fake-patch-model"

// codexWithPatchModel runs drive with codexPatchModel in the model catalog:
// a copy of the installed Codex's own catalog entry (`codex debug models`)
// of a model with the freeform apply_patch tool and the plain Responses
// tool list, renamed, with no upgrade offer.
func codexWithPatchModel(drive func(r *Run) error) func(r *Run) error {
	return func(r *Run) error {
		out, err := r.Exec(time.Minute, "", "debug", "models")
		if err != nil {
			return err
		}
		var entry map[string]any
		for _, m := range gjson.Get(out[strings.IndexByte(out, '{'):], "models").Array() {
			if m.Get("apply_patch_tool_type").String() == "freeform" && !m.Get("use_responses_lite").Bool() {
				entry, _ = m.Value().(map[string]any)
			}
		}
		if entry == nil {
			return fmt.Errorf("codex debug models lists no model with the freeform apply_patch tool")
		}
		entry["slug"], entry["display_name"], entry["upgrade"] = codexPatchModel, codexPatchModel, nil
		catalog := filepath.Join(r.Home, ".codex", "patch-catalog.json")
		if err := r.WriteJSON(catalog, obj{"models": []any{entry}}); err != nil {
			return err
		}
		cfg := filepath.Join(r.Home, ".codex", "config.toml")
		b, err := os.ReadFile(cfg)
		if err != nil {
			return err
		}
		if err := r.WriteFile(cfg, fmt.Sprintf("model_catalog_json = %q\n", catalog)+string(b)); err != nil {
			return err
		}
		return drive(r)
	}
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

// codexReady is what the Codex TUI shows when it waits for a prompt.
const codexReady = "Ask Codex to do anything"

// codexControl is a Codex TUI scenario with the control loop (-a
// on-request, read-only sandbox, so a command outside it asks): the model
// asks to run `touch file` outside the sandbox once, under marker; steps
// play once the PermissionRequest has fired, then /quit. The TUI, since a
// hook that gives up hands the request to Codex's own dialog, which
// `codex exec` does not have.
func codexControl(name, desc string, facts truth.Facts, marker, file string, c *Control, steps ...Step) Scenario {
	all := []Step{
		Screen(codexReady),
		Submitted("SCENARIO:"+marker+" make a file", "UserPromptSubmit"),
		Fired("PermissionRequest", 1),
	}
	all = append(all, steps...)
	all = append(all, Screen(codexReady), Typed("/quit"), Fired("SessionEnd", 1))
	return Scenario{
		Name: name, Mode: "tmux",
		Description: "codex TUI (-a on-request, read-only sandbox), control on: " + desc,
		Facts:       facts,
		Model: fakemodel.Turns(map[string][]fakemodel.Reply{marker: {
			calls(call("exec_command", obj{"cmd": "touch " + file, "yield_time_ms": 1000, "sandbox_permissions": "require_escalated", "justification": "Create " + file})),
			say("Done with the file."),
		}}),
		Control: c,
		Drive:   TUI([]string{"--dangerously-bypass-hook-trust", "-a", "on-request", "-s", "read-only"}, all...),
	}
}
