package mapping_test

import (
	"testing"

	"github.com/aep-hook/aep-hook/adapters"
	"github.com/aep-hook/aep-hook/mapping"
)

// TestAGUIStream follows a stream's joins: the step stamps later events,
// the result takes the start's tool name, message ends take the start's
// role.
func TestAGUIStream(t *testing.T) {
	ds := runTeeSteps(t, mapping.AGUI(), []teeStep{
		{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, false, []string{"run.started"}},
		{`{"type":"STEP_STARTED","stepName":"plan","threadId":"t","runId":"r"}`, false, []string{"run.step.started"}},
		{`{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"search","runId":"r"}`, false, []string{"tool.requested"}},
		{`{"type":"TOOL_CALL_RESULT","toolCallId":"c","content":"x","runId":"r"}`, false, []string{"tool.completed"}},
		{`{"type":"TEXT_MESSAGE_START","messageId":"u","role":"user"}`, false, []string{"x.agui.text_message.start"}},
		{`{"type":"TEXT_MESSAGE_END","messageId":"u"}`, false, nil},
		{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}`, true, []string{"x.agui.text_message.content"}},
		{`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hm"}`, true, []string{"x.agui.reasoning_message.content"}},
		{`{"type":"STEP_FINISHED","stepName":"plan"}`, false, []string{"run.step.finished"}},
		{`{"type":"RUN_ERROR","message":"m","runId":"r"}`, false, []string{"run.failed"}},
		{`{"type":42}`, false, []string{"x.agui.unknown.event"}},
	})
	if ds[2].Step != "plan" || ds[3].Step != "plan" || ds[0].Step != "" {
		t.Errorf("steps %q %q %q", ds[0].Step, ds[2].Step, ds[3].Step)
	}
	if name := ds[3].Data["tool"].(map[string]any)["name"]; name != "search" {
		t.Errorf("joined tool name %v", name)
	}
	if ds[8].Data["reason"] != "error" || ds[8].Run != "r" {
		t.Errorf("run.failed %+v", ds[8])
	}
}

// FuzzAGUIMap maps arbitrary events without error or panic.
func FuzzAGUIMap(f *testing.F) {
	f.Add([]byte(`{"type":"STATE_DELTA","delta":{}}`), true)
	f.Add([]byte(`{"type":"TOOL_CALL_RESULT","content":null}`), false)
	f.Add([]byte(`[]`), false)
	v := mapping.AGUI()
	f.Fuzz(func(t *testing.T, raw []byte, deltas bool) {
		ms, _ := adapters.Decode(v.Transport, raw)
		for _, m := range ms {
			m.Deltas = deltas
			v.Identify(m)
			ds, err := v.Map(m, &mapping.State{})
			if err != nil {
				t.Fatal(err)
			}
			checkDrafts(t, ds)
		}
	})
}
