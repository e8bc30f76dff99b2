package mapping

import (
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

// piMoment is the pi event raw as the forwarder or the held run hands it.
func piMoment(raw, nonce string, control bool) Moment {
	return Moment{Raw: []byte(raw), Facts: Facts{Kind: KindEvent, Name: gjson.Get(raw, "type").String(), Session: "s"},
		Nonce: nonce, Control: control}
}

const (
	piCall   = `{"type":"tool_call","toolCallId":"c1","toolName":"bash","input":{"command":"touch x"}}`
	piStart  = `{"type":"tool_execution_start","toolCallId":"c1","toolName":"bash","args":{"command":"touch x"}}`
	piOK     = `{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"ok"}]},"isError":false}`
	piBlockd = `{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"not now"}]},"isError":true}`
)

func draftTypes(ds []Draft) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Type)
	}
	return out
}

// TestPiGateHolds: the gate holds only a tool_call whose tool it lists,
// and its replies are the handler's: nothing for allow (the call runs),
// pi's {block, reason} for a refusal, the answer's text as the reason.
func TestPiGateHolds(t *testing.T) {
	v, _ := Lookup("pi")
	m := piMoment(piCall, "n1", false)
	for _, tc := range []struct {
		tools []string
		held  bool
	}{{nil, false}, {[]string{"read"}, false}, {[]string{"BASH"}, true}, {[]string{"read", "bash"}, true}, {[]string{"*"}, true}} {
		if got := v.Hold(m, Gate{Tools: tc.tools}) != nil; got != tc.held {
			t.Errorf("gate %v holds bash: %v, want %v", tc.tools, got, tc.held)
		}
	}
	for _, raw := range []string{piStart, piOK, `{"type":"tool_call","toolCallId":"c1","input":{}}`} {
		if v.Hold(piMoment(raw, "n", false), Gate{Tools: []string{"*"}}) != nil {
			t.Errorf("the gate holds %s", raw)
		}
	}
	h := v.Hold(m, Gate{Tools: []string{"bash"}})
	if h.Key != "attn:gate:c1" || len(h.Options) != 2 {
		t.Errorf("hold %+v", h)
	}
	for _, tc := range []struct {
		in   Answer
		want string
	}{
		{Answer{Text: "allow"}, ""},
		{Answer{Option: "allow"}, ""},
		{Answer{Option: "deny"}, `{"block":true,"reason":"` + deniedMessage + `"}`},
		{Answer{Text: "no"}, `{"block":true,"reason":"` + deniedMessage + `"}`},
		{Answer{Text: "use the staging bucket"}, `{"block":true,"reason":"use the staging bucket"}`},
		{Answer{Option: "deny", Text: " not now "}, `{"block":true,"reason":"not now"}`},
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
	if _, err := h.Resolve(Answer{Option: "always"}); err == nil {
		t.Error("an option the gate does not offer resolved")
	}
}

// TestPiGateRequest: a tool_call observed (no relay took it) adds
// nothing; held live it raises the gate's request (control, aep-hook's
// two options, caused by the call). An unanswered request expires
// (attention.timeout) at pi's report of the call, which went on; one the
// user's abort ended is dismissed and the call fails aborted; a refusal
// over the loop makes
// that report (isError) the call's tool.denied by policy, caused by the
// command; an allow leaves the call's own outcome.
func TestPiGateRequest(t *testing.T) {
	v, _ := Lookup("pi")
	gate := Gate{Tools: []string{"bash"}}
	open := func() *State {
		st := &State{}
		for i, raw := range []string{`{"type":"session_start","reason":"startup"}`, `{"type":"agent_start"}`, piStart} {
			if _, err := v.Map(piMoment(raw, "o"+string(rune('0'+i)), false), st); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	st := open()
	if ds, err := v.Map(piMoment(piCall, "n1", false), st); err != nil || len(ds) != 0 {
		t.Fatalf("observed tool_call: %v %v", draftTypes(ds), err)
	}

	ds, _ := v.Map(piMoment(piCall, "n1", true), st)
	if !reflect.DeepEqual(draftTypes(ds), []string{"attention.requested"}) {
		t.Fatalf("held tool_call: %v", draftTypes(ds))
	}
	req := ds[0]
	h := v.Hold(piMoment(piCall, "n1", true), gate)
	if !reflect.DeepEqual(req.Data["respond_via"], []any{"control"}) || req.Data["kind"] != "permission" ||
		len(req.Data["options"].([]any)) != 2 || req.CauseRef != "tool:c1" || req.Run == "" {
		t.Errorf("request %+v", req)
	}
	if req.Mark != h.Key || !Pending(st, h.Key) {
		t.Fatalf("request mark %q, hold key %q, pending %v", req.Mark, h.Key, Pending(st, h.Key))
	}
	ds, _ = v.Map(piMoment(piOK, "n2", false), st)
	if got := draftTypes(ds); !reflect.DeepEqual(got, []string{"attention.timeout", "tool.completed"}) || ds[0].SubjectRef != h.Key || Pending(st, h.Key) {
		t.Fatalf("unanswered gate at the call's end: %v %+v", got, ds)
	}

	// The user aborts while the call waits: the extension says so before
	// pi ends the call, unrun.
	st = open()
	v.Map(piMoment(piCall, "n1", true), st)
	ds, _ = v.Map(piMoment(`{"type":"aep_gate","toolCallId":"c1","released":"aborted"}`, "n2", false), st)
	if got := draftTypes(ds); !reflect.DeepEqual(got, []string{"attention.resolved"}) || ds[0].Data["resolution"] != "dismissed" {
		t.Fatalf("aborted wait: %v", got)
	}
	ds, _ = v.Map(piMoment(`{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"Operation aborted"}]},"isError":true}`, "n3", false), st)
	if got := draftTypes(ds); !reflect.DeepEqual(got, []string{"tool.failed"}) || ds[0].Data["error"].(map[string]any)["type"] != "aborted" {
		t.Fatalf("aborted call's end: %v %+v", got, ds)
	}

	// Refused over the loop: recorded when pi reports the blocked call.
	st = open()
	v.Map(piMoment(piCall, "n1", true), st)
	out := h.OutcomeDrafts(st, Answer{Option: "deny", Text: "not now"}, "alice", "cmd1")
	if got := draftTypes(out); !reflect.DeepEqual(got, []string{"control.accepted", "attention.answered", "attention.resolved"}) {
		t.Fatalf("deny outcome %v", got)
	}
	ds, _ = v.Map(piMoment(piBlockd, "n2", false), st)
	if got := draftTypes(ds); !reflect.DeepEqual(got, []string{"tool.denied"}) {
		t.Fatalf("refused call's end: %v", got)
	}
	if d := ds[0]; d.Cause != "cmd1" || d.Data["by"] != "policy" || d.Run == "" || d.Subject != "bash" {
		t.Errorf("tool.denied %+v", d)
	}
	if ds, _ = v.Map(piMoment(piBlockd, "n3", false), st); !reflect.DeepEqual(draftTypes(ds), []string{"tool.failed"}) {
		t.Errorf("the refusal outlived its call: %v", draftTypes(ds))
	}

	// A refusal pi did not apply (the call ran): its own outcome stands.
	st = open()
	v.Map(piMoment(piCall, "n1", true), st)
	h.OutcomeDrafts(st, Answer{Option: "deny"}, "alice", "cmd2")
	if ds, _ = v.Map(piMoment(piOK, "n2", false), st); !reflect.DeepEqual(draftTypes(ds), []string{"tool.completed"}) {
		t.Errorf("unapplied refusal: %v", draftTypes(ds))
	}

	// Allowed: the call's own outcome.
	st = open()
	v.Map(piMoment(piCall, "n1", true), st)
	if out := h.OutcomeDrafts(st, Answer{Option: "allow"}, "alice", "cmd3"); len(out) != 3 {
		t.Errorf("allow outcome %v", draftTypes(out))
	}
	if ds, _ = v.Map(piMoment(piOK, "n2", false), st); !reflect.DeepEqual(draftTypes(ds), []string{"tool.completed"}) {
		t.Errorf("allowed call's end: %v", draftTypes(ds))
	}

	// The session ends while a request is open (its held run was killed).
	st = open()
	v.Map(piMoment(piCall, "n1", true), st)
	ds, _ = v.Map(piMoment(`{"type":"session_shutdown","reason":"quit"}`, "n2", false), st)
	if got := draftTypes(ds); len(got) == 0 || got[0] != "attention.resolved" || got[len(got)-1] != "session.ended" {
		t.Errorf("shutdown with an open request: %v", got)
	}
}
