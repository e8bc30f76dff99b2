package mapping

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/redact"
)

// hermesPayload is a Hermes stdin envelope; extra is spliced into extra{}
// beside the drift sentinel.
func hermesPayload(hook, tool, input, extra string) string {
	if tool == "" {
		tool = "null"
	} else {
		tool = `"` + tool + `"`
	}
	if input == "" {
		input = "null"
	}
	e := `"telemetry_schema_version":"hermes.observer.v1"`
	if extra != "" {
		e += "," + extra
	}
	return `{"hook_event_name":"` + hook + `","tool_name":` + tool + `,"tool_input":` + input +
		`,"session_id":"s1","cwd":"/p","extra":{` + e + `}}`
}

func TestHermesMap(t *testing.T) {
	const turn = `"turn_id":"s1:t1:aaaa"`
	// post is a clarify post_tool_call whose ok result carries resp.
	post := func(resp string) string {
		return hermesPayload("post_tool_call", "clarify", "", `"tool_call_id":"c1","status":"ok","result":"{\"question\":\"Q?\",\"choices_offered\":[\"a\",\"b\"],\"user_response\":\"`+resp+`\"}"`)
	}
	// done is the tool.completed every ok clarify post opens with.
	done := func(resp string) string {
		return `{"type":"tool.completed","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c1"},"result_digest":"` +
			redact.Digest(`{"question":"Q?","choices_offered":["a","b"],"user_response":"`+resp+`"}`) +
			`","result":"{\"question\":\"Q?\",\"choices_offered\":[\"a\",\"b\"],\"user_response\":\"` + resp + `\"}"}}`
	}
	const ref = `"subject":"c1","subject_ref":"hermes.attn:clarify:c1","cause_ref":"hermes.attn:clarify:c1"`
	cases := []struct {
		name  string
		steps []extMoment
	}{
		{"session, turn and tools", []extMoment{
			{raw: hermesPayload("on_session_start", "", "", `"model":"hermes-4"`),
				want: `[{"type":"session.started","data":{"client":{"name":"hermes"},"cwd":"/p"}}]`},
			{raw: hermesPayload("pre_llm_call", "", "", turn+`,"user_message":"fix the failing build","is_first_turn":true`),
				want: `[{"type":"run.started","run":"s1:t1:aaaa","data":{"trigger":"user","prompt":"fix the failing build","message_digest":"fcaa85fdd55703139ec7363834c4063a"}}]`},
			{raw: hermesPayload("pre_tool_call", "terminal", `{"command":"npm test"}`, turn+`,"tool_call_id":"tc1"`),
				want: `[{"type":"tool.requested","subject":"terminal","run":"s1:t1:aaaa","data":{"tool":{"name":"terminal","call_id":"tc1"},"args_digest":"9178ac939ad908d8fd89e97596cdc0e5","args":{"command":"npm test"}}}]`},
			{raw: hermesPayload("post_tool_call", "terminal", "", turn+`,"tool_call_id":"tc1","status":"ok","result":"ok 42 tests","duration_ms":812`),
				want: `[{"type":"tool.completed","subject":"terminal","run":"s1:t1:aaaa","data":{"tool":{"name":"terminal","call_id":"tc1"},"duration_ms":812,"result_digest":"9623cdc86ee0e1f01e338bc35845417f","result":"ok 42 tests"}}]`},
			{raw: hermesPayload("post_tool_call", "read_file", "", turn+`,"tool_call_id":"tc2","status":"error","error_message":"nope"`),
				want: `[{"type":"tool.failed","subject":"read_file","run":"s1:t1:aaaa","data":{"tool":{"name":"read_file","call_id":"tc2"},"error":{"type":"tool_error","message":"nope"}}}]`},
			{raw: hermesPayload("post_tool_call", "terminal", "", turn+`,"tool_call_id":"tc3","status":"blocked","error_message":"blocked by policy hook","duration_ms":1`),
				want: `[{"type":"tool.denied","subject":"terminal","run":"s1:t1:aaaa","data":{"tool":{"name":"terminal","call_id":"tc3"},"duration_ms":1,"by":"policy"}}]`},
			{raw: hermesPayload("post_tool_call", "terminal", "", turn+`,"tool_call_id":"tc4","status":"skipped"`),
				want: `[{"type":"tool.completed","subject":"terminal","run":"s1:t1:aaaa","data":{"tool":{"name":"terminal","call_id":"tc4"},"status":"skipped"}}]`},
			{raw: hermesPayload("api_request_error", "", "", turn+`,"status_code":429,"retry_count":3,"reason":"rate_limited","error":{"type":"RateLimit","message":"slow down"}`),
				want: `[{"type":"x.hermes.api.error","run":"s1:t1:aaaa","severity":"error","data":{"status_code":429,"retry_count":3,"reason":"rate_limited","error":{"type":"RateLimit","message":"slow down"}}}]`},
			{raw: hermesPayload("on_session_end", "", "", turn+`,"completed":true,"interrupted":false`),
				want: `[{"type":"run.finished","run":"s1:t1:aaaa","data":{}}]`},
			{raw: hermesPayload("on_session_end", "", "", `"turn_id":"t2","completed":false,"interrupted":true`),
				want: `[{"type":"run.cancelled","run":"t2","data":{"by":"user"}}]`},
			{raw: hermesPayload("on_session_end", "", "", `"turn_id":"t3","completed":false,"interrupted":false`),
				want: `[{"type":"run.failed","run":"t3","data":{"reason":"incomplete"}}]`},
			{raw: hermesPayload("on_session_finalize", "", "", `"reason":"shutdown"`),
				want: `[{"type":"session.ended","data":{"reason":"normal"}}]`},
			{raw: hermesPayload("on_session_reset", "", "", `"reason":"new_session"`),
				want: `[{"type":"x.hermes.session.reset","data":{"reason":"new_session"}}]`},
			{raw: hermesPayload("pre_verify", "", "", turn),
				want: `[{"type":"x.hermes.pre.verify","run":"s1:t1:aaaa","data":{}}]`},
		}},
		{"subagents", []extMoment{
			{raw: hermesPayload("subagent_start", "", "", `"parent_turn_id":"p1","child_session_id":"sub","child_role":"researcher","child_goal":"g"`),
				want: `[{"type":"delegation.subagent.started","subject":"sub","run":"p1","data":{"child":{"session":"sub"},"role":"researcher"}}]`},
			{raw: hermesPayload("subagent_stop", "", "", `"parent_turn_id":"p1","child_session_id":"sub","child_role":"researcher","child_status":"ok","duration_ms":5100`),
				want: `[{"type":"delegation.subagent.stopped","subject":"sub","run":"p1","data":{"child":{"session":"sub"},"status":"ok","duration_ms":5100}}]`},
		}},
		{"approval card paired, then answered and resolved", []extMoment{
			{raw: hermesPayload("pre_approval_request", "", "", turn+`,"command":"sudo make install","pattern_key":"terminal:sudo","session_key":"s1","surface":"cli"`),
				want: `[{"type":"attention.requested","subject":"terminal:sudo","run":"s1:t1:aaaa","mark":"hermes.attn:approval:terminal:sudo","data":{"kind":"permission","prompt":"Approval requested: sudo make install","options":[{"id":"once","label":"Allow once"},{"id":"session","label":"Allow for this session"},{"id":"always","label":"Add to permanent allowlist"},{"id":"deny","label":"Deny"}],"respond_via":["oob"]}}]`},
			{raw: hermesPayload("post_approval_response", "", "", turn+`,"pattern_key":"terminal:sudo","choice":"once"`),
				want: `[{"type":"attention.answered","subject":"terminal:sudo","run":"s1:t1:aaaa","mark":"hermes.attn:approval:terminal:sudo:answer","subject_ref":"hermes.attn:approval:terminal:sudo","cause_ref":"hermes.attn:approval:terminal:sudo","data":{"answer":{"option":"once"},"via":"oob"}},` +
					`{"type":"attention.resolved","subject":"terminal:sudo","run":"s1:t1:aaaa","subject_ref":"hermes.attn:approval:terminal:sudo","cause_ref":"hermes.attn:approval:terminal:sudo:answer","data":{"resolution":"answered"}}]`},
			{raw: hermesPayload("post_approval_response", "", "", `"pattern_key":"terminal:curl","choice":"timeout"`),
				want: `[{"type":"attention.timeout","subject":"terminal:curl","subject_ref":"hermes.attn:approval:terminal:curl","cause_ref":"hermes.attn:approval:terminal:curl","data":{}}]`},
		}},
		{"pending cards dismissed before the session ends", []extMoment{
			{raw: hermesPayload("pre_approval_request", "", "", `"command":"rm -rf x","pattern_key":"terminal:rm"`),
				want: `[{"type":"attention.requested","subject":"terminal:rm","mark":"hermes.attn:approval:terminal:rm","data":{"kind":"permission","prompt":"Approval requested: rm -rf x","options":[{"id":"once","label":"Allow once"},{"id":"session","label":"Allow for this session"},{"id":"always","label":"Add to permanent allowlist"},{"id":"deny","label":"Deny"}],"respond_via":["oob"]}}]`},
			{raw: hermesPayload("pre_tool_call", "clarify", `{"question":"Q?"}`, `"tool_call_id":"c9"`),
				want: `[{"type":"tool.requested","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c9"},"args_digest":"80469626617ba6c162fd66bf76b3be36","args":{"question":"Q?"}}},` +
					`{"type":"attention.requested","subject":"c9","mark":"hermes.attn:clarify:c9","data":{"kind":"form","prompt":"hermes asks a question","fields":[{"id":"1","type":"string","label":"Q?","required":true}],"respond_via":["oob"]}}]`},
			{raw: hermesPayload("on_session_finalize", "", "", ""),
				want: `[{"type":"attention.resolved","subject":"terminal:rm","subject_ref":"hermes.attn:approval:terminal:rm","cause_ref":"hermes.attn:approval:terminal:rm","data":{"resolution":"dismissed"}},` +
					`{"type":"attention.resolved","subject":"c9","subject_ref":"hermes.attn:clarify:c9","cause_ref":"hermes.attn:clarify:c9","data":{"resolution":"dismissed"}},` +
					`{"type":"session.ended","data":{"reason":"normal"}}]`},
			{raw: hermesPayload("on_session_finalize", "", "", ""),
				want: `[{"type":"session.ended","data":{"reason":"normal"}}]`},
		}},
		{"clarify choices normalized like the vendor entry point", []extMoment{
			{raw: hermesPayload("pre_tool_call", "clarify", `{"question":"Pick","choices":[" a ",{"label":"b","description":"x"},{"title":"c"},["d","e"],"",null,7,"f"]}`, `"tool_call_id":"c1"`),
				want: `[{"type":"tool.requested","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c1"},"args_digest":"53c4392c1e65d731298f1af99aa37b03","args":{"question":"Pick","choices":[" a ",{"label":"b","description":"x"},{"title":"c"},["d","e"],"",null,7,"f"]}}},` +
					`{"type":"attention.requested","subject":"c1","mark":"hermes.attn:clarify:c1","data":{"kind":"form","prompt":"hermes asks a question","fields":[{"id":"1","type":"select","label":"Pick","required":true,"other":true,"choices":[{"id":"1","label":"a"},{"id":"2","label":"b"},{"id":"3","label":"c"},{"id":"4","label":"d, e"}]}],"respond_via":["oob"]}}]`},
			{raw: hermesPayload("pre_tool_call", "clarify", `{"question":"  ","choices":["a"]}`, `"tool_call_id":"c2"`),
				want: `[{"type":"tool.requested","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c2"},"args_digest":"578ffcaf128286491727a0a5fec92f0c","args":{"question":"  ","choices":["a"]}}}]`},
			{raw: hermesPayload("pre_tool_call", "clarify", `{"question":"Open?","choices":["",{"x":1}]}`, `"tool_call_id":"c3"`),
				want: `[{"type":"tool.requested","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c3"},"args_digest":"d1f1a80810b7040d17b4bee820861061","args":{"question":"Open?","choices":["",{"x":1}]}}},` +
					`{"type":"attention.requested","subject":"c3","mark":"hermes.attn:clarify:c3","data":{"kind":"form","prompt":"hermes asks a question","fields":[{"id":"1","type":"string","label":"Open?","required":true}],"respond_via":["oob"]}}]`},
		}},
		{"clarify results classified", []extMoment{
			{raw: post("b"), want: `[` + done("b") + `,{"type":"attention.answered",` + ref + `,"mark":"hermes.attn:clarify:c1:answer","data":{"answer":{"values":{"1":"2"}},"via":"oob"}}]`},
			{raw: post(" a "), want: `[` + done(" a ") + `,{"type":"attention.answered",` + ref + `,"mark":"hermes.attn:clarify:c1:answer","data":{"answer":{"values":{"1":"1"}},"via":"oob"}}]`},
			{raw: post("ship both"), want: `[` + done("ship both") + `,{"type":"attention.answered",` + ref + `,"mark":"hermes.attn:clarify:c1:answer","data":{"answer":{"values":{"1":"ship both"}},"via":"oob"}}]`},
			{raw: post(hermesCLITimeout), want: `[` + done(hermesCLITimeout) + `,{"type":"attention.timeout",` + ref + `,"data":{}}]`},
			{raw: post("[user did not respond within 3m]"), want: `[` + done("[user did not respond within 3m]") + `,{"type":"attention.timeout",` + ref + `,"data":{}}]`},
			{raw: post("[user did not respond within soon]"), want: `[` + done("[user did not respond within soon]") + `,{"type":"attention.answered",` + ref + `,"mark":"hermes.attn:clarify:c1:answer","data":{"answer":{"values":{"1":"[user did not respond within soon]"}},"via":"oob"}}]`},
			{raw: post(hermesCLICancel), want: `[` + done(hermesCLICancel) + `,{"type":"attention.resolved",` + ref + `,"data":{"resolution":"dismissed"}}]`},
			{raw: post(hermesUndelivered), want: `[` + done(hermesUndelivered) + `,{"type":"attention.resolved",` + ref + `,"data":{"resolution":"dismissed"}}]`},
			{raw: post("  "), want: `[` + done("  ") + `,{"type":"attention.resolved",` + ref + `,"data":{"resolution":"dismissed"}}]`},
			{raw: hermesPayload("post_tool_call", "clarify", "", `"tool_call_id":"c1","status":"ok","result":"not json"`),
				want: `[{"type":"tool.completed","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c1"},"result_digest":"` + redact.Digest("not json") + `","result":"not json"}}]`},
			{raw: hermesPayload("post_tool_call", "clarify", "", `"tool_call_id":"c1","status":"ok","result":"{\"error\":\"x\"}"`),
				want: `[{"type":"tool.completed","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c1"},"result_digest":"` + redact.Digest(`{"error":"x"}`) + `","result":"{\"error\":\"x\"}"}}]`},
			{raw: hermesPayload("post_tool_call", "clarify", "", `"tool_call_id":"c1","status":"error","error_type":"E"`),
				want: `[{"type":"tool.failed","subject":"clarify","data":{"tool":{"name":"clarify","call_id":"c1"},"error":{"type":"E"}}},{"type":"attention.resolved",` + ref + `,"data":{"resolution":"dismissed"}}]`},
		}},
		{"drift sentinel noticed once per observed value", []extMoment{
			{raw: `{"hook_event_name":"on_session_reset","session_id":"s1","extra":{"telemetry_schema_version":"hermes.observer.v2","reason":"r"}}`,
				want: `[{"type":"x.hermes.schema.drift","severity":"warning","data":{"expected":"hermes.observer.v1","observed":"hermes.observer.v2"}},{"type":"x.hermes.session.reset","data":{"reason":"r"}}]`},
			{raw: `{"hook_event_name":"on_session_reset","session_id":"s1","extra":{"telemetry_schema_version":"hermes.observer.v2","reason":"r"}}`,
				want: `[{"type":"x.hermes.session.reset","data":{"reason":"r"}}]`},
			{raw: `{"hook_event_name":"on_session_reset","session_id":"s1","extra":{"reason":"r"}}`,
				want: `[{"type":"x.hermes.schema.drift","severity":"warning","data":{"expected":"hermes.observer.v1"}},{"type":"x.hermes.session.reset","data":{"reason":"r"}}]`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { extRunSteps(t, Hermes(), &State{}, c.steps) })
	}
}

func TestHermesIdentifyAndReply(t *testing.T) {
	v := Hermes()
	for _, c := range []struct{ raw, session string }{
		{`{"hook_event_name":"pre_tool_call","session_id":"s1"}`, "s1"},
		{`{"hook_event_name":"subagent_start","session_id":"","extra":{"parent_session_id":"p"}}`, "p"},
		{`{"hook_event_name":"pre_approval_request","session_id":"","extra":{"session_key":"s1","surface":"cli"}}`, "s1"},
		{`{"hook_event_name":"pre_approval_request","session_id":"","extra":{"session_key":"ns:tg:dm:42","surface":"gateway"}}`, UnknownSession},
		{`{}`, UnknownSession},
	} {
		if _, s := v.Identify(Moment{Raw: []byte(c.raw)}); s != c.session {
			t.Errorf("Identify(%s) session = %q, want %q", c.raw, s, c.session)
		}
	}
	if got := v.Reply("pre_tool_call"); !bytes.Equal(got, []byte("{}")) {
		t.Errorf("Reply = %q", got)
	}
}

func FuzzHermesMap(f *testing.F) {
	f.Add([]byte(hermesPayload("pre_tool_call", "clarify", `{"question":"Q","choices":[[[]],{"label":{"text":1}}]}`, `"tool_call_id":"c"`)))
	f.Add([]byte(hermesPayload("post_tool_call", "clarify", "", `"tool_call_id":"c","status":"ok","result":"{\"user_response\":5}"`)))
	f.Add([]byte(hermesPayload("post_approval_response", "", "", `"choice":7`)))
	f.Add([]byte(`{"hook_event_name":"on_session_finalize"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st := &State{}
		for i := 0; i < 2; i++ {
			if _, err := Hermes().Map(Moment{Raw: raw, Nonce: "n"}, st); err != nil {
				t.Fatal(err)
			}
		}
	})
}
