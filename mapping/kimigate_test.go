package mapping

import (
	"reflect"
	"testing"
)

const (
	kimiPre  = `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/w","tool_name":"Shell","tool_input":{"command":"touch x"},"tool_call_id":"c1"}`
	kimiPost = `{"hook_event_name":"PostToolUse","session_id":"s","cwd":"/w","tool_name":"Shell","tool_input":{"command":"touch x"},"tool_call_id":"c1","tool_output":"ok"}`
)

// TestKimiGateHolds: the PreToolUse gate holds only the tools listed, and
// its replies are Kimi Code's: nothing for no objection, the documented
// deny decision with the reason for a refusal.
func TestKimiGateHolds(t *testing.T) {
	v, _ := Lookup("kimi-code")
	m := Moment{Raw: []byte(kimiPre)}
	for _, tc := range []struct {
		tools []string
		held  bool
	}{{nil, false}, {[]string{"WriteFile"}, false}, {[]string{"shell"}, true}, {[]string{"*"}, true}} {
		if got := v.Hold(m, Gate{Tools: tc.tools}) != nil; got != tc.held {
			t.Errorf("gate %v holds Shell: %v, want %v", tc.tools, got, tc.held)
		}
	}
	if v.Hold(Moment{Raw: []byte(kimiPost)}, Gate{Tools: []string{"*"}}) != nil {
		t.Error("the gate holds a PostToolUse")
	}
	h := v.Hold(m, Gate{Tools: []string{"Shell"}})
	for _, tc := range []struct {
		in   Answer
		want string
	}{
		{Answer{Text: "allow"}, ""},
		{Answer{Option: "deny"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + deniedMessage + `"}}`},
		{Answer{Text: "use the staging bucket"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the staging bucket"}}`},
	} {
		a, err := h.Resolve(tc.in)
		if err != nil {
			t.Fatalf("%+v: %v", tc.in, err)
		}
		b, err := h.Reply(a)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: reply %q (%v), want %q", tc.in, b, err, tc.want)
		}
	}
}

// TestKimiGateRequest: a PreToolUse the loop holds live raises the gate's
// request (control, the adapter's two options); observed alone it raises
// none; a request nobody answered expires at the call's outcome.
func TestKimiGateRequest(t *testing.T) {
	v, _ := Lookup("kimi-code")
	types := func(ds []Draft) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Type)
		}
		return out
	}
	st := &State{}
	ds, err := v.Map(Moment{Raw: []byte(kimiPre), Nonce: "n1"}, st)
	if err != nil || !reflect.DeepEqual(types(ds), []string{"tool.requested"}) {
		t.Fatalf("observed PreToolUse: %v %v", types(ds), err)
	}
	st = &State{}
	ds, _ = v.Map(Moment{Raw: []byte(kimiPre), Nonce: "n1", Control: true}, st)
	if !reflect.DeepEqual(types(ds), []string{"tool.requested", "attention.requested"}) {
		t.Fatalf("held PreToolUse: %v", types(ds))
	}
	req := ds[1]
	if !reflect.DeepEqual(req.Data["respond_via"], []any{"control"}) || req.Data["kind"] != "permission" || len(req.Data["options"].([]any)) != 2 {
		t.Errorf("request data %v", req.Data)
	}
	h := v.Hold(Moment{Raw: []byte(kimiPre)}, Gate{Tools: []string{"Shell"}})
	if req.Mark != h.Key || !Pending(st, h.Key) {
		t.Fatalf("request mark %q, hold key %q, pending %v", req.Mark, h.Key, Pending(st, h.Key))
	}
	ds, _ = v.Map(Moment{Raw: []byte(kimiPost), Nonce: "n2"}, st)
	if got := types(ds); !reflect.DeepEqual(got, []string{"attention.timeout", "tool.completed"}) {
		t.Fatalf("unanswered gate at PostToolUse: %v", got)
	}
	if ds[0].SubjectRef != h.Key || Pending(st, h.Key) {
		t.Errorf("timeout %+v, still pending %v", ds[0], Pending(st, h.Key))
	}

	// Denied over the loop: the refusal is the call's outcome, by policy,
	// caused by the command.
	st = &State{}
	v.Map(Moment{Raw: []byte(kimiPre), Nonce: "n1", Control: true}, st)
	out := h.OutcomeDrafts(st, Answer{Option: "deny", Text: "not now"}, "alice", "cmd1")
	if got := types(out); !reflect.DeepEqual(got, []string{"control.accepted", "attention.answered", "attention.resolved", "tool.denied"}) {
		t.Fatalf("deny outcome %v", got)
	}
	if d := out[3]; d.Cause != "cmd1" || d.Data["by"] != "policy" {
		t.Errorf("tool.denied %+v", d)
	}
	if out := h.OutcomeDrafts(&State{}, Answer{Option: "allow"}, "alice", "cmd2"); len(out) != 3 {
		t.Errorf("allow outcome %v", types(out))
	}
}
