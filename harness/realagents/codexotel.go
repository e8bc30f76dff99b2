package realagents

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// codexOtelVersion is the Codex release the OTel channel is recorded with.
const codexOtelVersion = "0.171.0"

// codexOtel is Codex's OTel log export recorded through `aep-hook otel`
// (the codex-otel channel), with the hooks registered beside it so a
// replay can hold the two channels together to one record.
func codexOtel() *Agent {
	return &Agent{
		Name: "codex-otel", Hooks: "codex", Package: "@openai/codex", Version: codexOtelVersion, Bin: "codex",
		Cache: "codex-" + codexOtelVersion,
		API:   fakemodel.Responses,
		Setup: codexOtelSetup,
		Scenarios: []Scenario{
			{
				Name: "tools", Mode: "headless",
				Description: "codex exec: two shell commands, the second exiting 2, then a call Codex cannot run (its arguments lack cmd), then an answer",
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"tools": {
					calls(call("exec_command", obj{"cmd": "echo hello", "yield_time_ms": 1000})),
					calls(call("exec_command", obj{"cmd": "echo about to fail; exit 2", "yield_time_ms": 1000})),
					calls(call("exec_command", obj{"yield_time_ms": 1000})),
					say("Two ran, one was malformed."),
				}}),
				Drive: headless(2*time.Minute, codexExec("SCENARIO:tools run two commands")...),
				OTel: otelChannel("binary", false, otelFacts{sessions: 1, turns: 1, ended: 1,
					count: map[string]int{
						// each approval before execution is a request, and says who approved
						"tool.requested": 2, "x.codex.otel.tool_decision?source=Config": 2,
						// the policies session.started has no member for
						"x.codex.otel.conversation_starts?approval_policy=never": 1,
						"tool.completed": 2, "tool.failed": 1,
						// 0.171's new records are named; one response.completed per response
						"x.codex.otel.unknown": 0, "x.codex.otel.startup_phase": 2, "x.codex.otel.turn_ttft": 1,
						"x.codex.otel.sse_event?event.kind=response.completed": 4,
					},
					carry: map[string][]string{
						"session.started": {"client.version"}, "tool.completed": {"duration_ms"},
						"tool.failed":                {"duration_ms", "error.type"},
						"x.codex.otel.tool_result":   {"tool_namespace", "tool_result_seq", "output_truncated", "agent_name"},
						"x.codex.otel.api_request":   {"endpoint", "http.response.status_code"},
						"x.codex.otel.startup_phase": {"startup.phase", "duration_ms"},
					},
					redactedCarry: map[string][]string{"tool.failed": {"error.message", "duration_ms"}},
				}),
			},
			{
				Name: "reviewer-deny", Mode: "headless",
				Description: "codex exec --approve-for-me: the model asks to run a command outside the sandbox; Codex's automatic reviewer (a conversation of its own) denies it; the model answers",
				Model: codexReviewer("review", "deny", []fakemodel.Reply{
					calls(call("exec_command", obj{"cmd": "touch reviewed-file-secret-7f3a", "yield_time_ms": 1000, "sandbox_permissions": "require_escalated", "justification": "Create the reviewed file"})),
					say("The reviewer refused."),
				}),
				Drive: headless(3*time.Minute, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--approve-for-me",
					"SCENARIO:review make a file"),
				OTel: otelChannel("json", true, otelFacts{sessions: 1, turns: 1, ended: 1, openTools: 1,
					count: map[string]int{
						"tool.denied?by=runtime": 1, "tool.failed": 0, "tool.completed": 0,
						// the reviewer's thread, in the conversation it reviews
						"x.codex.otel.user_prompt?thread_kind=guardian": 1,
					},
					absent: []string{"reviewed-file-secret-7f3a"}}),
			},
			{
				Name: "policy", Mode: "headless",
				Description: "codex exec -s read-only (approval never): a command asking to leave the sandbox is refused, and one an execpolicy forbidden rule matches is refused; neither runs",
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"policy": {
					calls(call("exec_command", obj{"cmd": "touch escalated-file", "yield_time_ms": 1000, "sandbox_permissions": "require_escalated", "justification": "Create the escalated file"})),
					calls(call("exec_command", obj{"cmd": "rm -rf forbidden-dir", "yield_time_ms": 1000})),
					say("Both were refused."),
				}}),
				Drive: func(r *Run) error {
					if err := r.WriteFile(filepath.Join(r.Home, ".codex", "rules", "default.rules"),
						"prefix_rule(pattern = [\"rm\"], decision = \"forbidden\", justification = \"no deleting here\")\n"); err != nil {
						return err
					}
					_, err := r.Exec(2*time.Minute, "", "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "-s", "read-only",
						"SCENARIO:policy make and delete")
					return err
				},
				OTel: otelChannel("binary", false, otelFacts{sessions: 1, turns: 1, ended: 1, openTools: 2,
					count: map[string]int{"tool.denied?by=policy": 2, "tool.failed": 0, "tool.completed": 0},
					carry: map[string][]string{"tool.denied": {"rule"}},
				}),
			},
			{
				Name: "tui-500", Mode: "tmux",
				Description: "codex TUI: the first model request of the first prompt gets HTTP 500 (no retries configured), the turn fails; a second prompt is answered; the TUI's title generator runs as a conversation of its own; then /quit",
				Model:       failingOnce("tui", 500, say("Answered.")),
				Drive: TUI([]string{"--dangerously-bypass-hook-trust", "-a", "never", "-s", "workspace-write"},
					Screen("Ask Codex to do anything"),
					Submitted("SCENARIO:tui hello", "UserPromptSubmit"),
					Screen("high demand"),
					Submitted("SCENARIO:tui again", "UserPromptSubmit"),
					Fired("Stop", 1), Screen("Answered."),
					Typed("/quit"), Fired("SessionEnd", 1),
				),
				OTel: otelChannel("json", true, otelFacts{sessions: 1, turns: 2, ended: 1, openRuns: 1,
					count: map[string]int{"x.codex.otel.api_request?http.response.status_code=500": 1, "x.codex.otel.user_prompt": 2},
				}),
			},
			{
				Name: "resume", Mode: "headless",
				Description: "codex exec, then codex exec resume --last with a second prompt: the ended thread resumed",
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"first": {say("First.")}, "second": {say("Second.")}}),
				Drive:       codexExecResume,
				OTel:        otelChannel("binary", false, otelFacts{sessions: 2, turns: 2, ended: 2}),
			},
		},
	}
}

// otelFacts are what a scenario's OTel record must tell, in the two
// configurations every recording replays through.
type otelFacts struct {
	// sessions, turns, ended, openRuns, openTools, answers, interrupts:
	// the record beside the hooks (truth.Facts).
	sessions, turns, ended, openRuns, openTools, answers, interrupts int
	// primaryOpenTools is the tool calls the OTel channel alone gives no
	// outcome for.
	primaryOpenTools int
	// count and carry are the primary replay's OTelReplay.Count and Carry.
	count map[string]int
	carry map[string][]string
	// absent and redactedCarry, when set, add a replay in primary mode at
	// capture redacted whose record must hold none of the absent strings
	// (content classed full) and carry those members.
	absent        []string
	redactedCarry map[string][]string
}

// otelChannel is the usual OTel recording: the hooks registered beside
// the sidecar, replayed in primary mode alone (the channel's own core
// types) and in companion mode beside the hooks (the hooks own the core
// types; the channel adds its x.codex.otel.* family).
func otelChannel(protocol string, prompts bool, f otelFacts) *OTelChannel {
	ch := &OTelChannel{Protocol: protocol, Prompts: prompts, Hooks: true, Replays: []OTelReplay{
		{Name: "primary", Mode: "primary", Count: f.count, Carry: f.carry,
			Facts: truth.Facts{Sessions: f.sessions, OpenTools: f.primaryOpenTools, Runless: true}},
		{Name: "companion+hooks", Mode: "companion", Hooks: true, Facts: truth.Facts{
			Turns: f.turns, Sessions: f.sessions, Ended: f.ended, OpenRuns: f.openRuns, OpenTools: f.openTools,
			Answers: f.answers, Interrupts: f.interrupts,
		}},
	}}
	if len(f.absent) > 0 || len(f.redactedCarry) > 0 {
		r := ch.Replays[0]
		r.Name, r.Capture, r.Absent, r.Count, r.Carry = "primary at redacted", "redacted", f.absent, nil, f.redactedCarry
		ch.Replays = append(ch.Replays, r)
	}
	return ch
}

// codexOtelSetup starts the real sidecar in the run's AEP home and the
// recording proxy in front of it, points Codex's [otel] log exporter at the
// proxy, and registers the hooks when the scenario records them too.
func codexOtelSetup(r *Run) error {
	ch := r.Scenario.OTel
	if ch == nil || len(ch.Replays) == 0 {
		return fmt.Errorf("scenario %s has no OTel channel", r.Scenario.Name)
	}
	sc, err := startSidecar(r.H.AEPHook, r.Env, "--mode", ch.Replays[0].Mode)
	if err != nil {
		return err
	}
	r.OnDone(func() {
		if out, err := sc.stop(); err != nil || strings.Count(out, "\n") > 2 {
			r.Notes = append(r.Notes, fmt.Sprintf("aep-hook otel: %v: %s", err, out))
		}
	})
	px, err := startOTLPProxy(r.Dir, sc.URL)
	if err != nil {
		return err
	}
	r.OnDone(px.close)
	otel := fmt.Sprintf(`
[otel]
environment = "real"
log_user_prompt = %t
exporter = { otlp-http = { endpoint = "%s/v1/logs", protocol = "%s", headers = { authorization = "Bearer %s" } } }
`, ch.Prompts, px.URL(), ch.Protocol, sc.Token)
	if err := codexConfig(r, otel); err != nil {
		return err
	}
	if !ch.Hooks {
		return nil
	}
	return r.Register(true)
}

// codexReviewer is a script for a turn marked marker whose escalation
// Codex's automatic reviewer judges: the reviewer's own request (its
// transcript quotes the turn, so it carries the marker too) is answered
// with outcome; the turn's requests get replies by round.
func codexReviewer(marker, outcome string, replies []fakemodel.Reply) fakemodel.Script {
	turn := fakemodel.Turns(map[string][]fakemodel.Reply{marker: replies})
	return func(req fakemodel.Request) fakemodel.Reply {
		if strings.Contains(string(req.Body), `"codex_output_schema"`) {
			return say(`{"outcome":"` + outcome + `","risk_level":"high","user_authorization":"unknown","rationale":"The command leaves the sandbox."}`)
		}
		return turn(req)
	}
}
