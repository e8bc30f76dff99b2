package mapping

import (
	"bytes"
	"testing"
)

// clinePayload is a Cline base payload with extra fields spliced in.
func clinePayload(hook, extra string) string {
	s := `{"clineVersion":"1.0.0","hookName":"` + hook + `","timestamp":"2026-07-12T00:00:00.000Z","taskId":"task_1","workspaceRoots":["/p"],"userId":"u","agent_id":"root","parent_agent_id":null`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func TestClineMap(t *testing.T) {
	cases := []struct {
		name  string
		steps []extMoment
	}{
		{"run lifecycle with tools", []extMoment{
			{raw: clinePayload("agent_start", ""),
				want: `[{"type":"run.started","run":"n1","data":{"trigger":"user"}}]`},
			{raw: clinePayload("tool_call", `"iteration":1,"tool_call":{"id":"c1","name":"execute_command","input":{"command":"npm test"}}`),
				want: `[{"type":"tool.requested","subject":"execute_command","run":"n1","step":"1","data":{"tool":{"name":"execute_command","call_id":"c1"},"args_digest":"9178ac939ad908d8fd89e97596cdc0e5","args":{"command":"npm test"}}}]`},
			{raw: clinePayload("tool_result", `"iteration":1,"tool_result":{"id":"c1","name":"execute_command","input":{},"output":"ok 42 tests","durationMs":812}`),
				want: `[{"type":"tool.completed","subject":"execute_command","run":"n1","step":"1","data":{"tool":{"name":"execute_command","call_id":"c1"},"duration_ms":812,"result_digest":"9623cdc86ee0e1f01e338bc35845417f","result":"ok 42 tests"}}]`},
			{raw: clinePayload("tool_result", `"iteration":2,"tool_result":{"id":"c2","name":"read_file","input":{},"output":null,"error":"EACCES","durationMs":3}`),
				want: `[{"type":"tool.failed","subject":"read_file","run":"n1","step":"2","data":{"tool":{"name":"read_file","call_id":"c2"},"duration_ms":3,"error":{"type":"tool_error","message":"EACCES"}}}]`},
			{raw: clinePayload("tool_result", `"tool_result":{"id":"c3","name":"x","error":{"message":"boom"}}`),
				want: `[{"type":"tool.failed","subject":"x","run":"n1","data":{"tool":{"name":"x","call_id":"c3"},"error":{"type":"tool_error","message":"boom"}}}]`},
			{raw: clinePayload("agent_end", `"iteration":3`),
				want: `[{"type":"run.finished","run":"n1","step":"3","data":{}}]`},
			{raw: clinePayload("agent_end", `"iteration":3`),
				want: `[{"type":"run.finished","run":"n1","step":"3","data":{}}]`}, // repeated terminal: same run, emitter suppresses
			{raw: clinePayload("agent_resume", ""),
				want: `[{"type":"run.started","run":"n8","data":{"trigger":"resume"}}]`},
			{raw: clinePayload("agent_abort", `"reason":"user pressed escape"`),
				want: `[{"type":"run.cancelled","run":"n8","data":{"by":"user","reason":"user pressed escape"}}]`},
			{raw: clinePayload("agent_resume", ""),
				want: `[{"type":"run.started","run":"n10","data":{"trigger":"resume"}}]`},
			{raw: clinePayload("agent_error", `"iteration":1,"error":{"name":"ApiError","message":"rate limited"}`),
				want: `[{"type":"run.failed","run":"n10","step":"1","data":{"reason":"ApiError","error":{"type":"ApiError","message":"rate limited"}}}]`},
		}},
		{"delegation pair from parent ids", []extMoment{
			{raw: `{"hookName":"agent_start","taskId":"t","agent_id":"child","parent_agent_id":"root"}`,
				want: `[{"type":"delegation.subagent.started","subject":"child","data":{"child":{"run":"child"}}},{"type":"run.started","run":"child","data":{"trigger":"agent"}}]`},
			{raw: `{"hookName":"agent_end","taskId":"t","agent_id":"child","parent_agent_id":"root","iteration":2}`,
				want: `[{"type":"run.finished","run":"child","step":"2","data":{}},{"type":"delegation.subagent.stopped","subject":"child","data":{"child":{"run":"child"}}}]`},
		}},
		{"cline 3.0.65: reject, failed items, Esc, child agent", []extMoment{
			{raw: clinePayload("agent_start", ""),
				want: `[{"type":"run.started","run":"n1","data":{"trigger":"user"}}]`},
			// A reject at the approval prompt: the call never ran.
			{raw: clinePayload("tool_result", `"iteration":1,"tool_result":{"id":"c1","name":"run_commands","input":{"commands":["rm x"]},"output":{"error":"This tool call was rejected by the user and not executed. -- NOT a tool or system failure."},"error":"[object Object]","durationMs":59}`),
				want: `[{"type":"tool.denied","subject":"run_commands","run":"n1","step":"1","data":{"tool":{"name":"run_commands","call_id":"c1"},"by":"runtime"}}]`},
			// Every item failed: the command exited non-zero, the file is missing.
			{raw: clinePayload("tool_result", `"iteration":2,"tool_result":{"id":"c2","name":"run_commands","input":{},"output":[{"query":"ls /x","result":"","error":"Command exited with code 2","success":false}],"durationMs":109}`),
				want: `[{"type":"tool.failed","subject":"run_commands","run":"n1","step":"2","data":{"tool":{"name":"run_commands","call_id":"c2"},"duration_ms":109,"error":{"type":"tool_error","message":"Command exited with code 2"}}}]`},
			// One item of two failed: the tool still returned results.
			{raw: clinePayload("tool_result", `"iteration":3,"tool_result":{"id":"c3","name":"read_files","input":{},"output":[{"query":"a","result":"x","success":true},{"query":"b","result":"","error":"ENOENT","success":false}],"durationMs":4}`),
				want: `[{"type":"tool.completed","subject":"read_files","run":"n1","step":"3","data":{"tool":{"name":"read_files","call_id":"c3"},"duration_ms":4,"result_digest":"362bc4828d18bb06c5bfbe1464d10e74","result":[{"query":"a","result":"x","success":true},{"query":"b","result":"","error":"ENOENT","success":false}]}}]`},
			// A child agent: trigger agent, the pair in the parent's run.
			{raw: `{"hookName":"agent_start","taskId":"conv_kid","sessionContext":{"rootSessionId":"task_1"},"agent_id":"kid","parent_agent_id":"root"}`,
				want: `[{"type":"delegation.subagent.started","subject":"kid","run":"n1","data":{"child":{"run":"kid"}}},{"type":"run.started","run":"kid","data":{"trigger":"agent"}}]`},
			{raw: `{"hookName":"agent_end","taskId":"conv_kid","sessionContext":{"rootSessionId":"task_1"},"agent_id":"kid","parent_agent_id":"root","iteration":2}`,
				want: `[{"type":"run.finished","run":"kid","step":"2","data":{}},{"type":"delegation.subagent.stopped","subject":"kid","run":"n1","data":{"child":{"run":"kid"}}}]`},
			// Esc: only session_shutdown, no reason; the session goes on.
			{raw: clinePayload("session_shutdown", ""),
				want: `[{"type":"run.cancelled","run":"n1","data":{"by":"user"}}]`},
			{raw: clinePayload("agent_start", ""),
				want: `[{"type":"run.started","run":"n8","data":{"trigger":"user"}}]`},
			// An abort reason: agent_abort first, then the late second terminal.
			{raw: clinePayload("agent_abort", `"reason":"aborted"`),
				want: `[{"type":"run.cancelled","run":"n8","data":{"by":"user","reason":"aborted"}}]`},
			{raw: clinePayload("session_shutdown", `"reason":"aborted"`),
				want: `[{"type":"run.cancelled","run":"n8","data":{"by":"user"}}]`},
		}},
		{"terminal without an observed opener", []extMoment{
			{raw: clinePayload("agent_error", `"error":{}`),
				want: `[{"type":"run.failed","run":"n1","data":{"reason":"error","error":{"type":"error"}}}]`},
		}},
		{"session, compaction, prompt and fallback", []extMoment{
			{raw: clinePayload("prompt_submit", `"prompt":"hi"`),
				want: `[{"type":"x.cline.prompt.submitted","severity":"debug","data":{"prompt":"hi"}}]`},
			{raw: clinePayload("pre_compact", `"preCompact":{"compactionStrategy":"truncate-middle","tokensIn":120000,"tokensOut":9000,"contextJsonPath":"/tmp/c.json"}`),
				want: `[{"type":"session.compacted","data":{"strategy":"truncate-middle","gen_ai.usage.input_tokens":120000,"gen_ai.usage.output_tokens":9000}}]`},
			{raw: clinePayload("session_shutdown", `"reason":"window closed"`),
				want: `[{"type":"session.ended","data":{"reason":"normal"}}]`},
			{raw: clinePayload("some_future_hook", ""),
				want: `[{"type":"x.cline.some.future.hook","data":{}}]`},
			{raw: clinePayload("shutdown", ""),
				want: `[{"type":"x.cline.hook.shutdown","data":{}}]`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { extRunSteps(t, Cline(), &State{}, c.steps) })
	}
}

func TestClineIdentifyAndReply(t *testing.T) {
	v := Cline()
	for _, c := range []struct{ raw, hook, session string }{
		{`{"hookName":"agent_start","taskId":"t1"}`, "agent_start", "t1"},
		{`{"hookName":"tool_call"}`, "tool_call", UnknownSession},
		// The root session id outlives taskId (resume, child agents).
		{`{"hookName":"agent_start","taskId":"conv_2","sessionContext":{"rootSessionId":"r1"}}`, "agent_start", "r1"},
		{`{"hookName":"agent_start","taskId":"conv_2","sessionContext":{"rootSessionId":""}}`, "agent_start", "conv_2"},
		{`not json`, "", UnknownSession},
	} {
		h, s := v.Identify(Moment{Raw: []byte(c.raw)})
		if h != c.hook || s != c.session {
			t.Errorf("Identify(%s) = %q, %q; want %q, %q", c.raw, h, s, c.hook, c.session)
		}
	}
	for _, h := range []string{"agent_start", "tool_call", "unknown"} {
		if got := v.Reply(h); !bytes.Equal(got, []byte("{}")) {
			t.Errorf("Reply(%s) = %q", h, got)
		}
	}
}

func FuzzClineMap(f *testing.F) {
	f.Add([]byte(clinePayload("tool_result", `"tool_result":{"id":"c","name":"n","error":{"message":1}}`)))
	f.Add([]byte(clinePayload("agent_start", `"parent_agent_id":"p","iteration":"x"`)))
	f.Add([]byte(`{"hookName":5}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st := &State{}
		for i := 0; i < 2; i++ {
			if _, err := Cline().Map(Moment{Raw: raw, Nonce: "n"}, st); err != nil {
				t.Fatal(err)
			}
		}
	})
}
