package mapping

import (
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// Antigravity is the AEP-0002 Annex A.11 table for the five-hook hooks.json
// system of Antigravity 2.0 and the Antigravity CLI. No payload names its
// own event, so the registration passes it on the command line
// (`aep-hook antigravity PreToolUse`). conversationId is the session
// (session.started on first sight, never an end); runs are synthesized,
// opened at the first PreInvocation and closed by Stop's typed
// terminationReason; invocations are run steps; the thin PostToolUse gets
// its tool name from the (conversationId, stepIdx) join, and an unjoined
// completion falls back to x.antigravity.step.completed (a name is never
// invented). Observe-only through the vendor's own empty decision string.
func Antigravity() Vendor {
	return Vendor{
		Name:         "antigravity",
		Summary:      "Antigravity hooks.json (argv-named): synthesized runs, invocation steps, the stepIdx tool join, observe-only",
		HookFromArgv: true,
		Identify:     identifyBy("", "conversationId"),
		Map:          agyMap,
		Reply:        agyReply,
		Seed:         agySeed,
	}
}

// The neutral replies, byte-exact: PreToolUse and Stop REQUIRE a decision,
// and "" is the vendor's safely-handled no-opinion value (CLI 1.0.16), never
// a named decision, never "continue"; every other hook gets "{}" (no
// injectSteps, no terminationBehavior).
var agyNoDecision = []byte(`{"decision": ""}`)

func agyReply(hook string) []byte {
	switch hook {
	case "PreToolUse", "Stop":
		return agyNoDecision
	}
	return emptyObject
}

// The table-state keys: the session seen, the synthesized run open, the
// invocation open (the envelope step of tool events), and the join entries
// (stepIdx → tool name).
const (
	agySeen       = "agy.seen"
	agyInvocation = "agy.invocation"
	agyJoinPrefix = "agy.step:"
)

// agyRuns is the conversation's lane of synthesized runs.
var agyRuns = runLane{open: "agy.run", last: "agy.last"}

// agyMark names the reference a tool.requested is remembered under, so the
// joined terminal's cause is its request (the wire keeps no call id).
func agyMark(stepIdx string) string { return "agy.tool:" + stepIdx }

func agyMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	var ds []Draft
	if _, seen := st.Get(agySeen); !seen {
		st.Set(agySeen, "1")
		ds = append(ds, Draft{Type: "session.started", Data: Data(
			"client", Data("name", agyHost(Str(raw, "transcriptPath"))),
			"cwd", Str(raw, "workspacePaths.0"),
		)})
	}
	run := agyRuns.current(st)
	inv, _ := st.Get(agyInvocation)
	stepIdx := extStep(raw, "stepIdx")

	switch m.Hook {
	case "PreInvocation":
		if run == "" {
			run = m.Nonce
			agyRuns.begin(st, run)
			ds = append(ds, Draft{Type: "run.started", Run: run, Data: Data("trigger", "user")})
		}
		step := extStep(raw, "invocationNum")
		if step != "" {
			st.Set(agyInvocation, step)
		}
		return append(ds, Draft{
			Type: "run.step.started", Run: run, Step: step,
			Data: Data("initial_num_steps", extInt(raw, "initialNumSteps")),
		}), nil

	case "PostInvocation":
		step := extStep(raw, "invocationNum")
		st.Del(agyInvocation)
		return append(ds, Draft{Type: "run.step.finished", Run: run, Step: step, Data: map[string]any{}}), nil

	case "PreToolUse":
		name := Str(raw, "toolCall.name")
		d := withData(toolRequested(raw, name, "", "toolCall.args"), "step_idx", extInt(raw, "stepIdx"))
		d.Run, d.Step = run, inv
		if stepIdx != "" && name != "" {
			st.Set(agyJoinPrefix+stepIdx, name)
			d.Mark = agyMark(stepIdx)
		}
		// A dangling request synthesizes nothing later: denied, rejected
		// and still running are indistinguishable on this surface.
		return append(ds, d), nil

	case "PostToolUse":
		return append(ds, agyPostTool(raw, st, run, inv, stepIdx)), nil

	case "Stop":
		run = agyRuns.end(st, m.Nonce)
		agyClearRun(st)
		reason := Str(raw, "terminationReason")
		common := []any{
			"execution_num", extInt(raw, "executionNum"),
			"fully_idle", extBool(raw, "fullyIdle"),
		}
		if reason == "error" {
			kv := append([]any{
				"reason", "error",
				"error", Data("type", "error", "message", Str(raw, "error")),
			}, common...)
			return append(ds, Draft{Type: "run.failed", Run: run, Data: Data(kv...)}), nil
		}
		// model_stop, and max_steps_exceeded (a bounded termination is a
		// completion), with the reason as metadata.
		kv := append([]any{"termination_reason", reason}, common...)
		return append(ds, Draft{Type: "run.finished", Run: run, Data: Data(kv...)}), nil
	}
	return append(ds, Draft{Type: "x.antigravity.hook." + agyToken(m.Hook), Run: run, Data: map[string]any{}}), nil
}

// agyPostTool closes a joined request as tool.completed/tool.failed, or
// falls back to x.antigravity.step.completed with the outcome fact only.
func agyPostTool(raw []byte, st *State, run, inv, stepIdx string) Draft {
	errMsg := Str(raw, "error")
	failed := errMsg != ""
	idx := extInt(raw, "stepIdx")
	name := ""
	if stepIdx != "" {
		name, _ = st.Get(agyJoinPrefix + stepIdx)
		st.Del(agyJoinPrefix + stepIdx)
	}
	if name == "" {
		return Draft{
			Type: "x.antigravity.step.completed", Run: run, Step: inv,
			Data:   agyStepData(failed, idx, errMsg),
			Levels: map[string]redact.Level{"failed": redact.Metadata, "step_idx": redact.Metadata, "error": redact.Redacted},
		}
	}
	// The thin payload carries no result: a completion states the join only.
	d := Draft{Type: "tool.completed", Subject: name, Data: Data("tool", ToolRef(name, ""))}
	if failed {
		d = toolFailed(name, "", "tool_error", errMsg)
	}
	d.Run, d.Step, d.CauseRef = run, inv, agyMark(stepIdx)
	return withData(d, "step_idx", idx)
}

// agyStepData is the unjoined fallback's payload: the outcome fact and the
// step index; the error text, when there is one, at redacted+.
func agyStepData(failed bool, idx any, errMsg string) map[string]any {
	d := Data("failed", failed, "step_idx", idx)
	if errMsg != "" {
		d["error"] = map[string]any{"message": errMsg}
	}
	return d
}

// agyClearRun clears what a run leaves behind at Stop: the open invocation
// and every join entry left dangling (bounded memory).
func agyClearRun(st *State) {
	st.Del(agyInvocation)
	for k := range st.Entries {
		if strings.HasPrefix(k, agyJoinPrefix) {
			st.Del(k)
		}
	}
}

// agyHost is the host marker session.started carries as client.name: the
// app data directory in transcriptPath tells the CLI from the desktop app.
func agyHost(transcript string) string {
	if strings.Contains(transcript, "/antigravity-cli/") || strings.Contains(transcript, `\antigravity-cli\`) {
		return "antigravity-cli"
	}
	return "antigravity"
}

// agyToken is the fallback's last segment: the hook name lower-cased with
// everything outside [a-z0-9_] dropped ("SomeFutureHook" → "somefuturehook").
func agyToken(hook string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(hook) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// agySeed prepares st as the moments an Annex A pin presumes happened
// before it: the conversation already seen, a run open, and, when join
// names a tool, the PreToolUse that recorded it under the moment's stepIdx.
func agySeed(join []byte, m Moment, st *State) {
	st.Set(agySeen, "1")
	if agyRuns.current(st) == "" {
		agyRuns.begin(st, "seed-"+m.Nonce)
	}
	if name := gjson.GetBytes(join, "name"); name.Type == gjson.String && name.Str != "" {
		if idx := extStep(m.Raw, "stepIdx"); idx != "" {
			st.Set(agyJoinPrefix+idx, name.Str)
		}
	}
}
