package mapping_test

import (
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// vscodeRec is a flattened VS Code record with the given attributes.
func vscodeRec(attrs string) string {
	return `{"resource":{"service.name":"copilot-chat","session.id":"vsc_1","host.name":"ws-2"},"attributes":{` + attrs + `}}`
}

func TestVSCodeOtel(t *testing.T) {
	inference := vscodeRec(`"event.name":"gen_ai.client.inference.operation.details","gen_ai.request.model":"gpt-5.2","gen_ai.input.messages":"[{\"role\":\"user\",\"content\":\"build it\"}]"`)
	cases := []struct {
		name, capture string
		mode          mapping.Mode
		step          otelStep
	}{
		{"string attributes normalized for core types", "metadata", mapping.Primary, otelStep{
			vscodeRec(`"event.name":"copilot_chat.tool.call","gen_ai.tool.name":"runInTerminal","gen_ai.tool.call.id":"tc1","duration_ms":"12","success":"false","error.type":"Timeout"`),
			`[{"type":"tool.failed","subject":"runInTerminal","data":{"tool":{"name":"runInTerminal","call_id":"tc1"},"error":{"type":"Timeout"},"duration_ms":12}}]`}},
		{"strings stay verbatim in companion", "metadata", "", otelStep{
			vscodeRec(`"event.name":"copilot_chat.tool.call","gen_ai.tool.name":"readFile","duration_ms":"12","success":"true"`),
			`[{"type":"x.vscode.otel.tool.call","data":{"gen_ai.tool.name":"readFile","duration_ms":"12","success":"true"}}]`}},
		{"failure without a vendor error type", "metadata", mapping.Primary, otelStep{
			vscodeRec(`"event.name":"copilot_chat.tool.call","gen_ai.tool.name":"x","success":false`),
			`[{"type":"tool.failed","subject":"x","data":{"tool":{"name":"x"},"error":{"type":"tool_error"}}}]`}},
		{"messages appear at redacted", "redacted", "", otelStep{inference,
			`[{"type":"x.vscode.otel.inference_details","data":{"gen_ai.request.model":"gpt-5.2","gen_ai.input.messages":"[{\"role\":\"user\",\"content\":\"build it\"}]","host.name":"ws-2"}}]`}},
		{"messages absent at metadata", "metadata", "", otelStep{inference,
			`[{"type":"x.vscode.otel.inference_details","data":{"gen_ai.request.model":"gpt-5.2"}}]`}},
		{"turns stay vendor-namespaced in primary", "metadata", mapping.Primary, otelStep{
			vscodeRec(`"event.name":"copilot_chat.agent.turn","turn.index":1`),
			`[{"type":"x.vscode.otel.agent.turn","data":{"turn.index":1}}]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runOtel(t, "vscode-otel", c.capture, c.mode, c.step) })
	}
}

// TestVSCodeOtelCeilings pins the two vendor ceilings: whatever arrives, in
// either mode, the channel never emits tool.denied or session.ended.
func TestVSCodeOtelCeilings(t *testing.T) {
	v := mapping.VSCodeOtel()
	inputs := []string{
		vscodeRec(`"event.name":"copilot_chat.tool.call","gen_ai.tool.name":"x","decision":"deny","success":false`),
		vscodeRec(`"event.name":"copilot_chat.tool.denied","gen_ai.tool.name":"x"`),
		vscodeRec(`"event.name":"copilot_chat.session.end"`),
		vscodeRec(`"event.name":"copilot_chat.session.start"`),
		vscodeRec(`"event.name":"copilot_chat.edit.feedback","outcome":"rejected"`),
		vscodeRec(`"event.name":"codex.tool_decision","decision":"deny","source":"config"`),
	}
	for _, in := range inputs {
		for _, mode := range []mapping.Mode{mapping.Companion, mapping.Primary, ""} {
			m := decode(t, v, in, false)
			m.Mode = mode
			ds, err := v.Map(m, &mapping.State{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if d.Type == "tool.denied" || d.Type == "session.ended" || d.Run != "" {
					t.Errorf("mode %q %s: emitted %s (run %q)", mode, in, d.Type, d.Run)
				}
				if mode != mapping.Primary && d.Type[:2] != "x." {
					t.Errorf("companion emitted core type %s", d.Type)
				}
			}
		}
	}
}
