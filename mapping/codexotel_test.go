package mapping_test

import (
	"testing"
	"time"

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
			codexRec(`"event.name":"codex.sse_event","event.kind":"response.completed","duration_ms":"3"`),
			`[{"type":"x.codex.otel.sse_event","data":{"event.kind":"response.completed","duration_ms":"3"}}]`}},
		{"approval is no core moment", "metadata", mapping.Primary, otelStep{
			codexRec(`"event.name":"codex.tool_decision","tool_name":"shell","decision":"approved","source":"config"`), `[]`}},
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
		otelStep{codexRec(`"event.name":"codex.conversation_starts","model":"m"`), `[{"type":"session.started","data":{"client":{"name":"codex"},"gen_ai.request.model":"m"}}]`},
		otelStep{codexRec(`"event.name":"codex.api_request","status":"200"`), `[{"type":"x.codex.otel.api_request","data":{"status":"200"}}]`},
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
