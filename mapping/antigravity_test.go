package mapping

import (
	"bytes"
	"testing"
)

// agyPayload is an Antigravity CLI payload with extra fields spliced in.
func agyPayload(extra string) string {
	s := `{"conversationId":"conv-1","workspacePaths":["/w"],"transcriptPath":"~/.gemini/antigravity-cli/brain/conv-1/.system_generated/logs/transcript.jsonl","artifactDirectoryPath":"~/.gemini/antigravity-cli/brain/conv-1"`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func TestAntigravityMap(t *testing.T) {
	const started = `{"type":"session.started","data":{"client":{"name":"antigravity-cli"},"cwd":"/w"}}`
	const args = `{"CommandLine":"npm test","Cwd":"/w"}`
	const argsDigest = "80d1b86d0472c192a7511db3fc2959dc"
	cases := []struct {
		name  string
		steps []extMoment
	}{
		{"a conversation: first sight, run, steps, join, stop", []extMoment{
			{hook: "PreInvocation", raw: agyPayload(`"invocationNum":0,"initialNumSteps":0`),
				want: `[` + started + `,{"type":"run.started","run":"n1","data":{"trigger":"user"}},{"type":"run.step.started","run":"n1","step":"0","data":{"initial_num_steps":0}}]`},
			{hook: "PreToolUse", raw: agyPayload(`"toolCall":{"name":"run_command","args":` + args + `},"stepIdx":1`),
				want: `[{"type":"tool.requested","subject":"run_command","run":"n1","step":"0","mark":"agy.tool:1","data":{"tool":{"name":"run_command"},"step_idx":1,"args_digest":"` + argsDigest + `","args":` + args + `}}]`},
			{hook: "PostToolUse", raw: agyPayload(`"stepIdx":1,"error":""`),
				want: `[{"type":"tool.completed","subject":"run_command","run":"n1","step":"0","cause_ref":"agy.tool:1","data":{"tool":{"name":"run_command"},"step_idx":1}}]`},
			{hook: "PostToolUse", raw: agyPayload(`"stepIdx":1,"error":""`),
				want: `[{"type":"x.antigravity.step.completed","run":"n1","step":"0","data":{"failed":false,"step_idx":1}}]`},
			{hook: "PreToolUse", raw: agyPayload(`"toolCall":{"name":"view_file","args":{}},"stepIdx":2`),
				want: `[{"type":"tool.requested","subject":"view_file","run":"n1","step":"0","mark":"agy.tool:2","data":{"tool":{"name":"view_file"},"step_idx":2,"args_digest":"44136fa355b3678a1146ad16f7e8649e","args":{}}}]`},
			{hook: "PostToolUse", raw: agyPayload(`"stepIdx":2,"error":"ENOENT"`),
				want: `[{"type":"tool.failed","subject":"view_file","run":"n1","step":"0","cause_ref":"agy.tool:2","data":{"tool":{"name":"view_file"},"step_idx":2,"error":{"type":"tool_error","message":"ENOENT"}}}]`},
			{hook: "PreToolUse", raw: agyPayload(`"toolCall":{"name":"ask_question","args":{}},"stepIdx":3`),
				want: `[{"type":"tool.requested","subject":"ask_question","run":"n1","step":"0","mark":"agy.tool:3","data":{"tool":{"name":"ask_question"},"step_idx":3,"args_digest":"44136fa355b3678a1146ad16f7e8649e","args":{}}}]`},
			{hook: "PostInvocation", raw: agyPayload(`"invocationNum":0,"initialNumSteps":0`),
				want: `[{"type":"run.step.finished","run":"n1","step":"0","data":{}}]`},
			{hook: "Stop", raw: agyPayload(`"executionNum":1,"terminationReason":"model_stop","error":"","fullyIdle":true`),
				want: `[{"type":"run.finished","run":"n1","data":{"termination_reason":"model_stop","execution_num":1,"fully_idle":true}}]`},
			{hook: "Stop", raw: agyPayload(`"executionNum":1,"terminationReason":"model_stop","error":"","fullyIdle":true`),
				want: `[{"type":"run.finished","run":"n1","data":{"termination_reason":"model_stop","execution_num":1,"fully_idle":true}}]`},
			{hook: "PostToolUse", raw: agyPayload(`"stepIdx":3,"error":"denied?"`),
				want: `[{"type":"x.antigravity.step.completed","data":{"failed":true,"step_idx":3,"error":{"message":"denied?"}}}]`},
			{hook: "PreInvocation", raw: agyPayload(`"invocationNum":0,"initialNumSteps":12`),
				want: `[{"type":"run.started","run":"n12","data":{"trigger":"user"}},{"type":"run.step.started","run":"n12","step":"0","data":{"initial_num_steps":12}}]`},
			{hook: "Stop", raw: agyPayload(`"executionNum":2,"terminationReason":"error","error":"backend down","fullyIdle":false`),
				want: `[{"type":"run.failed","run":"n12","step":"","data":{"reason":"error","error":{"type":"error","message":"backend down"},"execution_num":2,"fully_idle":false}}]`},
			{hook: "SomeFutureHook", raw: agyPayload(""),
				want: `[{"type":"x.antigravity.hook.somefuturehook","data":{}}]`},
		}},
		{"desktop host, mid-conversation attach", []extMoment{
			{hook: "Stop", raw: `{"conversationId":"c","transcriptPath":"/h/.gemini/antigravity/brain/c/t.jsonl","terminationReason":"max_steps_exceeded","fullyIdle":false}`,
				want: `[{"type":"session.started","data":{"client":{"name":"antigravity"}}},{"type":"run.finished","run":"n1","data":{"termination_reason":"max_steps_exceeded","fully_idle":false}}]`},
			{hook: "", raw: `{"conversationId":"c"}`,
				want: `[{"type":"x.antigravity.hook.unknown","data":{}}]`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { extRunSteps(t, Antigravity(), &State{}, c.steps) })
	}
}

func TestAntigravitySeed(t *testing.T) {
	v := Antigravity()
	for _, c := range []struct {
		name, hook, raw, join, want string
	}{
		{"joined", "PostToolUse", agyPayload(`"stepIdx":19,"error":""`), `{"name":"run_command"}`,
			`[{"type":"tool.completed","subject":"run_command","run":"seed-n1","cause_ref":"agy.tool:19","data":{"tool":{"name":"run_command"},"step_idx":19}}]`},
		{"no join", "PostToolUse", agyPayload(`"stepIdx":5,"error":""`), ``,
			`[{"type":"x.antigravity.step.completed","run":"seed-n1","data":{"failed":false,"step_idx":5}}]`},
		{"null join", "PreInvocation", agyPayload(`"invocationNum":3,"initialNumSteps":10`), `null`,
			`[{"type":"run.step.started","run":"seed-n1","step":"3","data":{"initial_num_steps":10}}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &State{}
			v.Seed([]byte(c.join), Moment{Hook: c.hook, Raw: []byte(c.raw), Nonce: "n1"}, st)
			extRunSteps(t, v, st, []extMoment{{hook: c.hook, raw: c.raw, want: c.want}})
		})
	}
}

func TestAntigravityIdentifyAndReply(t *testing.T) {
	v := Antigravity()
	if !v.HookFromArgv {
		t.Error("HookFromArgv = false")
	}
	for _, c := range []struct{ hook, raw, session string }{
		{"PreToolUse", `{"conversationId":"ec33"}`, "ec33"},
		{"Stop", `{}`, UnknownSession},
	} {
		h, s := v.Identify(Moment{Hook: c.hook, Raw: []byte(c.raw)})
		if h != c.hook || s != c.session {
			t.Errorf("Identify = %q, %q; want %q, %q", h, s, c.hook, c.session)
		}
	}
	for hook, want := range map[string]string{
		"PreToolUse":     `{"decision": ""}`,
		"Stop":           `{"decision": ""}`,
		"PostToolUse":    `{}`,
		"PreInvocation":  `{}`,
		"PostInvocation": `{}`,
		"SomeFutureHook": `{}`,
	} {
		if got := v.Reply(hook); !bytes.Equal(got, []byte(want)) {
			t.Errorf("Reply(%s) = %q, want %q", hook, got, want)
		}
	}
}

func FuzzAntigravityMap(f *testing.F) {
	f.Add("PreToolUse", []byte(agyPayload(`"toolCall":{"name":"x","args":[1]},"stepIdx":"7"`)))
	f.Add("PostToolUse", []byte(agyPayload(`"stepIdx":1.5,"error":{}`)))
	f.Add("Stop", []byte(`{"terminationReason":null}`))
	f.Add("Pré Hook!", []byte(`[]`))
	f.Fuzz(func(t *testing.T, hook string, raw []byte) {
		st := &State{}
		for i := 0; i < 2; i++ {
			if _, err := Antigravity().Map(Moment{Hook: hook, Raw: raw, Nonce: "n"}, st); err != nil {
				t.Fatal(err)
			}
		}
	})
}
