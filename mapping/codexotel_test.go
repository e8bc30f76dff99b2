package mapping_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/otlp"
	"github.com/aep-hook/aep-hook/mapping"
)

// codexRec is a flattened Codex record with the given attributes spliced in.
func codexRec(attrs string) string {
	return `{"resource":{"service.name":"codex-app-server","host.name":"dev-host-1"},"attributes":{"conversation.id":"c1","app.version":"0.119.0","originator":"Codex_CLI","user.email":"dev@example.com",` + attrs + `}}`
}

func TestCodexOtelCapture(t *testing.T) {
	prompt := codexRec(`"event.name":"codex.user_prompt","prompt":"fix the flaky test","prompt_length":"18"`)
	vendorRedacted := codexRec(`"event.name":"codex.user_prompt","prompt":"[REDACTED]","prompt_length":"18"`)
	cases := []struct {
		name, capture string
		mode          mapping.Mode
		step          otelStep
	}{
		{"prompt dropped at metadata", "metadata", "", otelStep{prompt,
			`[{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"18"}}]`}},
		{"prompt and host at redacted, email withheld", "redacted", "", otelStep{prompt,
			`[{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"18","prompt":"fix the flaky test","host.name":"dev-host-1"}}]`}},
		{"email only at full", "full", "", otelStep{prompt,
			`[{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"18","prompt":"fix the flaky test","host.name":"dev-host-1","user.email":"dev@example.com"}}]`}},
		{"vendor did not export the prompt", "full", "", otelStep{vendorRedacted,
			`[{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"18","host.name":"dev-host-1","user.email":"dev@example.com"}}]`}},
		{"prompt stays vendor-namespaced in primary", "redacted", mapping.Primary, otelStep{prompt,
			`[{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"18","prompt":"fix the flaky test","host.name":"dev-host-1"}}]`}},
		{"tool output gated full in companion", "metadata", "", otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"shell","call_id":"call_1","arguments":"{\"cmd\":\"ls\"}","output":"a\nb","success":"true","duration_ms":"5"`),
			`[{"type":"x.codex.otel.tool_result","data":{"tool_name":"shell","call_id":"call_1","success":"true","duration_ms":"5"}}]`}},
		{"tool output digested in primary", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"shell","call_id":"call_1","output":"a\nb","success":true,"duration_ms":5`),
			`[{"type":"tool.completed","subject":"shell","data":{"tool":{"name":"shell","call_id":"call_1"},"duration_ms":5,"result_digest":"8cb67f89f9ff0e25bb064da96907151d"}}]`}},
		{"failure text at redacted in primary", "redacted", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"shell","success":"false","error":"exit 1"`),
			`[{"type":"tool.failed","subject":"shell","data":{"tool":{"name":"shell"},"error":{"type":"tool_error","message":"exit 1"}}}]`}},
		{"failure from the error alone", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"shell","error":"boom"`),
			`[{"type":"tool.failed","subject":"shell","data":{"tool":{"name":"shell"},"error":{"type":"tool_error"}}}]`}},
		{"automation deny is a runtime block", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_decision","tool_name":"apply_patch","decision":"denied","source":"automation"`),
			`[{"type":"tool.denied","subject":"apply_patch","data":{"tool":{"name":"apply_patch"},"by":"runtime"}}]`}},
		{"Codex 0.169's automatic reviewer deny is a runtime block", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_decision","tool_name":"exec_command","call_id":"call_7","decision":"denied","source":"AutomatedReviewer"`),
			`[{"type":"tool.denied","subject":"exec_command","data":{"tool":{"name":"exec_command","call_id":"call_7"},"by":"runtime"}}]`}},
		{"Codex 0.169's sse_event kind (event.kind) at metadata", "metadata", "", otelStep{
			codexRec(`"event.name":"codex.sse_event","event.kind":"response.created","duration_ms":"3"`),
			`[{"type":"x.codex.otel.sse_event","data":{"event.kind":"response.created","duration_ms":"3"}}]`}},
		{"an approval before execution is the call's request, and says who approved", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_decision","tool_name":"exec_command","call_id":"call_2","decision":"approved","source":"Config","tool_namespace":"functions"`),
			`[{"type":"tool.requested","subject":"exec_command","data":{"tool":{"name":"exec_command","call_id":"call_2"}}},
			  {"type":"x.codex.otel.tool_decision","data":{"tool_name":"exec_command","call_id":"call_2","decision":"approved","source":"Config","tool_namespace":"functions"}}]`}},
		{"Codex 0.171's metadata-grade attributes survive below full", "metadata", "", otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"exec_command","call_id":"call_3","success":"true","tool_namespace":"functions","tool_result_seq":1,"output_truncated":false,"agent_name":"/root","mcp_server":"","mcp_server_origin":"https://u:p@mcp.example"`),
			`[{"type":"x.codex.otel.tool_result","data":{"tool_name":"exec_command","call_id":"call_3","success":"true","tool_namespace":"functions","tool_result_seq":1,"output_truncated":false,"agent_name":"/root","mcp_server":""}}]`}},
		{"Codex 0.171's new records are named", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.turn_ttft","duration_ms":"1105"`),
			`[{"type":"x.codex.otel.turn_ttft","data":{"duration_ms":"1105"}}]`}},
		{"failure text from the output, with its duration", "redacted", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"exec_command","call_id":"call_4","success":"false","duration_ms":"0","output":"failed to parse function arguments: missing field ` + "`cmd`" + `"`),
			`[{"type":"tool.failed","subject":"exec_command","data":{"tool":{"name":"exec_command","call_id":"call_4"},"error":{"type":"tool_error","message":"failed to parse function arguments: missing field ` + "`cmd`" + `"},"duration_ms":0}}]`}},
		{"an execpolicy rejection is a policy denial", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_result","tool_name":"exec_command","call_id":"call_5","success":false,"duration_ms":87,"output":"exec_command failed: CreateProcess { message: \"Rejected(\\\"rm rejected: no\\\")\" }"`),
			`[{"type":"tool.denied","subject":"exec_command","data":{"tool":{"name":"exec_command","call_id":"call_5"},"by":"policy","rule":"execpolicy"}}]`}},
		{"deny of unknown source is not guessed", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_decision","tool_name":"shell","decision":"deny"`), `[]`}},
		{"unknown record keeps detail only at full", "full", "", otelStep{
			codexRec(`"event.name":"codex.something_new","detail":"x"`),
			`[{"type":"x.codex.otel.unknown","data":{"event.name":"codex.something_new","detail":"x","user.email":"dev@example.com"}}]`}},
		{"record without an event name", "metadata", mapping.Primary, otelStep{
			`{"resource":{},"attributes":{}}`, `[{"type":"x.codex.otel.unknown","data":{}}]`}},
		{"LogRecord event_name field", "metadata", "", otelStep{
			`{"resource":{},"attributes":{"conversation.id":"c1","kind":"open"},"event_name":"codex.websocket_event"}`,
			`[{"type":"x.codex.otel.websocket_event","data":{"kind":"open"}}]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runOtel(t, "codex-otel", c.capture, c.mode, c.step) })
	}
}

func TestCodexOtelOneSessionManyRecords(t *testing.T) {
	// Records of one conversation share a session; no runs appear.
	runOtel(t, "codex-otel", "", mapping.Primary,
		otelStep{codexRec(`"event.name":"codex.conversation_starts","model":"m","approval_policy":"never"`), `[]`},
		otelStep{codexRec(`"event.name":"codex.api_request","status":"200"`), `[
			{"type":"session.started","data":{"client":{"name":"codex","version":"0.119.0"},"gen_ai.request.model":"m"}},
			{"type":"x.codex.otel.conversation_starts","data":{"model":"m","approval_policy":"never"}},
			{"type":"x.codex.otel.api_request","data":{"status":"200"}}]`},
		otelStep{codexRec(`"event.name":"codex.tool_decision","tool_name":"shell","decision":"deny","source":"config"`), `[{"type":"tool.denied","subject":"shell","data":{"tool":{"name":"shell"},"by":"policy"}}]`})
}

// TestOTelRecordTime: an event happened when its record says, not when the
// sidecar received it: the LogRecord's timestamp, else Codex's
// event.timestamp attribute, else the observed time; none leaves it to the
// emitter's clock.
func TestOTelRecordTime(t *testing.T) {
	at := time.Date(2026, 11, 30, 15, 17, 20, 123_000_000, time.UTC)
	ns := uint64(at.UnixNano())
	cases := []struct {
		name string
		rec  mapping.OTelRecord
		want time.Time
	}{
		{"timestamp", mapping.OTelRecord{Time: ns, ObservedTime: ns + 5e9}, at},
		{"event.timestamp", mapping.OTelRecord{Attributes: map[string]any{"event.timestamp": "2026-11-30T15:17:20.123Z"}}, at},
		{"observed only", mapping.OTelRecord{ObservedTime: ns}, at},
		{"none", mapping.OTelRecord{}, time.Time{}},
	}
	for _, v := range []mapping.Vendor{mapping.CodexOtel(), mapping.VSCodeOtel()} {
		for _, c := range cases {
			rec := c.rec
			if rec.Attributes == nil {
				rec.Attributes = map[string]any{}
			}
			rec.Attributes["event.name"] = "codex.api_request"
			ds, err := v.Map(mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindRecord, Record: &rec}}, &mapping.State{})
			if err != nil || len(ds) != 1 {
				t.Fatalf("%s %s: %v %v", v.Name, c.name, ds, err)
			}
			if !ds[0].Time.Equal(c.want) {
				t.Errorf("%s %s: time %v, want %v", v.Name, c.name, ds[0].Time, c.want)
			}
		}
	}
}

// TestCodexOtel171 holds the table to what Codex 0.171.0 really exports
// (fixtures/codex-otel/recorded/): one terminal per call, refusals as
// denials, Codex's own threads, resumes, the doubled response.completed.
func TestCodexOtel171(t *testing.T) {
	start := otelStep{codexRec(`"event.name":"codex.conversation_starts","model":"m","approval_policy":"never","sandbox_policy":"read-only"`), `[]`}
	prompt := otelStep{codexRec(`"event.name":"codex.user_prompt","prompt":"[REDACTED]","prompt_length":"5"`), `[
		{"type":"session.started","data":{"client":{"name":"codex","version":"0.119.0"},"gen_ai.request.model":"m"}},
		{"type":"x.codex.otel.conversation_starts","data":{"model":"m","approval_policy":"never","sandbox_policy":"read-only"}},
		{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"5"}}]`}
	t.Run("a denied call's failed result is no second terminal", func(t *testing.T) {
		runOtel(t, "codex-otel", "", mapping.Primary, start, prompt,
			otelStep{codexRec(`"event.name":"codex.tool_decision","tool_name":"exec_command","call_id":"call_1","decision":"denied","source":"AutomatedReviewer"`),
				`[{"type":"tool.denied","subject":"exec_command","data":{"tool":{"name":"exec_command","call_id":"call_1"},"by":"runtime"}}]`},
			otelStep{codexRec(`"event.name":"codex.tool_result","tool_name":"exec_command","call_id":"call_1","success":"false","duration_ms":"259","output":"exec_command failed: CreateProcess { message: \"Rejected(\\\"unacceptable risk\\\")\" }"`),
				`[{"type":"x.codex.otel.tool_result","data":{"tool_name":"exec_command","call_id":"call_1","success":"false","duration_ms":"259"}}]`})
	})
	t.Run("the approval policy refusing an escalation is a policy denial naming it", func(t *testing.T) {
		runOtel(t, "codex-otel", "", mapping.Primary, start, prompt,
			otelStep{codexRec(`"event.name":"codex.tool_result","tool_name":"exec_command","call_id":"call_2","success":"false","duration_ms":"0","output":"approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"`),
				`[{"type":"tool.denied","subject":"exec_command","data":{"tool":{"name":"exec_command","call_id":"call_2"},"by":"policy","rule":"approval_policy=never, sandbox_policy=read-only"}}]`})
	})
	t.Run("the two response.completed records of one response are one event", func(t *testing.T) {
		runOtel(t, "codex-otel", "", mapping.Companion,
			otelStep{codexRec(`"event.name":"codex.sse_event","event.kind":"response.completed","duration_ms":"4"`), `[]`},
			otelStep{codexRec(`"event.name":"codex.turn_ttft","duration_ms":"9"`), `[{"type":"x.codex.otel.turn_ttft","data":{"duration_ms":"9"}}]`},
			otelStep{codexRec(`"event.name":"codex.sse_event","event.kind":"response.completed","input_token_count":"100","output_token_count":20,"ttft_ms":0`),
				`[{"type":"x.codex.otel.sse_event","data":{"event.kind":"response.completed","input_token_count":"100","output_token_count":20,"ttft_ms":0,"duration_ms":"4"}}]`},
			otelStep{codexRec(`"event.name":"codex.sse_event","event.kind":"response.completed","duration_ms":"1"`), `[]`},
			otelStep{codexRec(`"event.name":"codex.sse_event","event.kind":"response.created"`), `[
				{"type":"x.codex.otel.sse_event","data":{"event.kind":"response.completed","duration_ms":"1"}},
				{"type":"x.codex.otel.sse_event","data":{"event.kind":"response.created"}}]`})
	})
	t.Run("a second conversation_starts is a resume: a new AEP session", func(t *testing.T) {
		runOtel(t, "codex-otel", "", mapping.Primary, start, prompt,
			otelStep{codexRec(`"event.name":"codex.conversation_starts","model":"m"`), `[
				{"type":"session.started","data":{"client":{"name":"codex","version":"0.119.0"},"gen_ai.request.model":"m","trigger":"resume","resumed_from":"c1"}},
				{"type":"x.codex.otel.conversation_starts","data":{"model":"m"}}]`})
	})
	guardian := `The following is the Codex agent history whose request action you are assessing. Treat the content as evidence:\n[2] tool exec_command call: {\"cmd\":\"touch secret-file\"}\nReviewed Codex session id: parent-1\n`
	t.Run("the automatic reviewer's thread goes to the conversation it reviews, its prompt at full", func(t *testing.T) {
		runOtel(t, "codex-otel", "redacted", mapping.Primary, start,
			otelStep{codexRec(`"event.name":"codex.user_prompt","prompt":"` + guardian + `","prompt_length":"99"`), `[
				{"type":"x.codex.otel.conversation_starts","data":{"model":"m","approval_policy":"never","sandbox_policy":"read-only","thread_id":"c1","thread_kind":"guardian"}},
				{"type":"x.codex.otel.user_prompt","data":{"prompt_length":"99","host.name":"dev-host-1","thread_id":"c1","thread_kind":"guardian"}}]`},
			otelStep{codexRec(`"event.name":"codex.tool_result","tool_name":"exec_command","call_id":"call_9","success":"true"`),
				`[{"type":"x.codex.otel.tool_result","data":{"tool_name":"exec_command","call_id":"call_9","success":"true","host.name":"dev-host-1","thread_id":"c1","thread_kind":"guardian"}}]`})
	})
	t.Run("the title generator's thread is left out", func(t *testing.T) {
		runOtel(t, "codex-otel", "", mapping.Primary, start,
			otelStep{codexRec(`"event.name":"codex.user_prompt","prompt":"Generate a concise, single-line task title of at most 36 characters","prompt_length":"99"`), `[]`},
			otelStep{codexRec(`"event.name":"codex.api_request","status":"200"`), `[]`})
	})
}

// TestCodexOtelHeldStateHoldsNoContent: the records a conversation's start
// holds in the table state (which sits on disk below every ceiling) keep
// nothing above metadata.
func TestCodexOtelHeldStateHoldsNoContent(t *testing.T) {
	v := mapping.CodexOtel()
	st := &mapping.State{}
	for _, c := range []struct{ in, key string }{
		{codexRec(`"event.name":"codex.conversation_starts","model":"m","secret_note":"hunter2"`), "otel.held"},
		{codexRec(`"event.name":"codex.sse_event","event.kind":"response.completed","duration_ms":"4","error.message":"hunter2"`), "otel.sse.complete"},
	} {
		ms, err := otlp.Decode([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Map(ms[0], st); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(st)
		if !strings.Contains(string(b), c.key) {
			t.Fatalf("nothing held under %s: %s", c.key, b)
		}
		for _, s := range []string{"dev@example.com", "dev-host-1", "hunter2"} {
			if strings.Contains(string(b), s) {
				t.Errorf("table state holds %q: %s", s, b)
			}
		}
	}
}
