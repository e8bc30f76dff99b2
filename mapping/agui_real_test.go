package mapping_test

import (
	"reflect"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// TestAGUIOutcomes: RUN_FINISHED's outcome decides the terminal, an
// interrupt asks for its answer, which the resuming run's input gives.
func TestAGUIOutcomes(t *testing.T) {
	t.Run("interrupt and resume", func(t *testing.T) {
		ds := runTeeSteps(t, mapping.AGUI(), []teeStep{
			{`{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`, false, []string{"run.started"}},
			{`{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"delete_folder","threadId":"t","runId":"r1"}`, false, []string{"tool.requested"}},
			{`{"type":"RUN_FINISHED","threadId":"t","runId":"r1","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_approval","toolCallId":"c","message":"Delete it?"},{"id":"i2","reason":"need_value"}]}}`, false,
				[]string{"attention.requested", "attention.requested", "run.finished"}},
			{`{"type":"RUN_STARTED","threadId":"t","runId":"r2","input":{"threadId":"t","runId":"r2","resume":[{"interruptId":"i1","status":"resolved","payload":{"approved":true}},{"interruptId":"i2","status":"cancelled"}]}}`, false,
				[]string{"run.started", "attention.answered", "attention.resolved", "attention.resolved"}},
			{`{"type":"TOOL_CALL_RESULT","toolCallId":"c","messageId":"m","content":"removed","threadId":"t","runId":"r2"}`, false, []string{"tool.completed"}},
			{`{"type":"RUN_FINISHED","threadId":"t","runId":"r2","outcome":{"type":"success"},"result":{"n":1}}`, false, []string{"run.finished"}},
		})
		if ds[2].Data["kind"] != "permission" || ds[2].Subject != "c" || ds[2].Mark != "agui.int:i1" || ds[3].Data["kind"] != "input" {
			t.Errorf("interrupts %+v / %+v", ds[2], ds[3])
		}
		if ds[4].Data["stop_reason"] != "interrupt" || ds[4].Run != "r1" {
			t.Errorf("interrupted run.finished %+v", ds[4])
		}
		if a := ds[6]; a.SubjectRef != "agui.int:i1" || a.Run != "r2" || !reflect.DeepEqual(a.Data["answer"], map[string]any{"option": "resolved"}) {
			t.Errorf("answer %+v", a)
		}
		if ds[7].Data["resolution"] != "answered" || ds[8].Data["resolution"] != "dismissed" {
			t.Errorf("resolutions %v %v", ds[7].Data, ds[8].Data)
		}
		if s := ds[10].Data["summary"]; s != `{"n":1}` {
			t.Errorf("summary %v, want the result's JSON text", s)
		}
	})
	for _, c := range []struct{ name, finished, want string }{
		{"cancelled 1.0.0", `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`, "run.cancelled"},
		{"interrupt as a bare string", `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":"interrupt","interrupt":{"id":"i","reason":"approval"}}`, "attention.requested"},
		{"result string", `{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":"done"}`, "run.finished"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := mapping.AGUI()
			ds, _ := v.Map(decode(t, v, c.finished, false), &mapping.State{})
			if len(ds) == 0 || ds[0].Type != c.want {
				t.Fatalf("drafts %+v, want %s first", ds, c.want)
			}
			if c.want == "run.finished" && ds[0].Data["summary"] != "done" {
				t.Errorf("summary %v", ds[0].Data)
			}
		})
	}
}

// TestAGUIReusedRun: a runId used again opens and closes a run of its own.
func TestAGUIReusedRun(t *testing.T) {
	ds := runTeeSteps(t, mapping.AGUI(), []teeStep{
		{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, false, []string{"run.started"}},
		{`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`, false, []string{"run.finished"}},
		{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, false, []string{"run.started"}},
		{`{"type":"STEP_STARTED","stepName":"s","threadId":"t","runId":"r"}`, false, []string{"run.step.started"}},
		{`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`, false, []string{"run.finished"}},
	})
	got := []string{ds[0].Run, ds[1].Run, ds[2].Run, ds[3].Run, ds[4].Run}
	if want := []string{"r", "r", "r#2", "r#2", "r#2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
}

// TestAGUIEnd closes a run whose stream ended without a terminal, by why.
func TestAGUIEnd(t *testing.T) {
	v := mapping.AGUI()
	for reason, want := range map[string]string{"client_aborted": "run.cancelled", "upstream_dropped": "run.failed", "upstream_ended": "run.failed"} {
		st := &mapping.State{}
		v.Map(decode(t, v, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, false), st)
		m := mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindEnd, Thread: "t", Run: "r", Reason: reason}}
		if _, s := v.Identify(m); s != "t" {
			t.Errorf("%s: session %q", reason, s)
		}
		ds, err := v.Map(m, st)
		if err != nil || len(ds) != 1 || ds[0].Type != want || ds[0].Run != "r" {
			t.Errorf("%s: %+v %v, want %s of r", reason, ds, err, want)
		}
	}
}
