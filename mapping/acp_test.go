package mapping

import (
	"reflect"
	"testing"
)

// step is one moment of a stateful table test and the types it yields.
type teeStep struct {
	raw    string
	deltas bool
	want   []string
}

func runTeeSteps(t *testing.T, v Vendor, steps []teeStep) []Draft {
	t.Helper()
	st := &State{}
	var all []Draft
	for i, s := range steps {
		ds, err := v.Map(Moment{Raw: []byte(s.raw), Nonce: "n", Deltas: s.deltas}, st)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Type)
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d: got %v want %v", i+1, got, s.want)
		}
		all = append(all, ds...)
	}
	return all
}

// TestACPTurn follows one prompt turn as the tee wraps it: the response
// finds its run through the request id, the tool keeps the name of its
// tool_call, and the permission answer refers to its request.
func TestACPTurn(t *testing.T) {
	ds := runTeeSteps(t, ACP(), []teeStep{
		{`{"kind":"request","method":"session/prompt","id":7,"tee":"T","params":{"sessionId":"s","prompt":[]}}`, false, []string{"run.started"}},
		{`{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"grep","status":"pending"}}}`, false, []string{"tool.requested"}},
		{`{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"grep -r x","status":"completed"}}}`, false, []string{"tool.completed"}},
		{`{"kind":"request","method":"session/request_permission","id":0,"params":{"sessionId":"s","toolCall":{"toolCallId":"c2"},"options":[]}}`, false, []string{"attention.requested"}},
		{`{"kind":"response","method":"session/request_permission","id":0,"sessionId":"s","result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`, false, []string{"attention.answered", "attention.resolved"}},
		{`{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`, true, []string{"x.acp.agent.message.chunk"}},
		{`{"kind":"response","method":"session/prompt","id":7,"sessionId":"s","result":{"stopReason":"max_turn_requests"}}`, false, []string{"run.finished"}},
		{`{"kind":"response","method":"session/prompt","id":8,"sessionId":"s","error":{"code":-32603,"message":"boom"}}`, false, []string{"run.failed"}},
		{`{"kind":"response","method":"initialize","id":1,"result":{}}`, false, nil},
		{`{"kind":"response","id":99,"result":{}}`, false, []string{"x.acp.response.unmatched"}},
		{`{"kind":"request","method":"session/close","id":9,"params":{"sessionId":"s"}}`, false, []string{"session.ended"}},
	})
	if ds[0].Run != "T:7" || ds[6].Run != "T:7" || ds[1].Run != "T:7" {
		t.Errorf("runs %q %q %q, want T:7", ds[0].Run, ds[1].Run, ds[6].Run)
	}
	if name := ds[2].Data["tool"].(map[string]any)["name"]; name != "grep" {
		t.Errorf("tool name %v, want the tool_call's", name)
	}
	if ds[3].Mark != "acp.attn:0" || ds[4].SubjectRef != "acp.attn:0" || ds[5].CauseRef != "acp.attn:0" {
		t.Errorf("attention refs %q %q %q", ds[3].Mark, ds[4].SubjectRef, ds[5].CauseRef)
	}
}

func TestACPIdentifyAndTypes(t *testing.T) {
	for _, c := range []struct{ raw, hook, session string }{
		{`{"kind":"request","method":"session/prompt","params":{"sessionId":"a"}}`, "request:session/prompt", "a"},
		{`{"kind":"response","method":"session/prompt","sessionId":"b","result":{}}`, "response:session/prompt", "b"},
		{`{"kind":"response","method":"session/new","result":{"sessionId":"c"}}`, "response:session/new", "c"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "request:initialize", UnknownSession},
		{`{"jsonrpc":"2.0","method":"x"}`, "notification:x", UnknownSession},
	} {
		h, s := acpIdentify(Moment{Raw: []byte(c.raw)})
		if h != c.hook || s != c.session {
			t.Errorf("%s: %q %q", c.raw, h, s)
		}
	}
	for in, want := range map[string]string{
		"fs/read_text_file": "x.acp.fs.read.text.file", "initialize": "x.acp.initialize.event",
		"": "x.acp.unknown.event", "_meta/Some-Thing": "x.acp.meta.some.thing",
	} {
		if got := vendorEventType("acp", wireSegments(in)...); got != want {
			t.Errorf("%q: %s want %s", in, got, want)
		}
	}
}

// FuzzACPMap maps arbitrary moments: never an error or a panic, and every
// type is a legal extension or core type.
func FuzzACPMap(f *testing.F) {
	f.Add([]byte(`{"kind":"request","method":"session/prompt","id":1,"params":{"sessionId":"s","prompt":"x"}}`), true)
	f.Add([]byte(`{"kind":"notification","method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":{}}}}`), false)
	f.Add([]byte(`{"kind":"response","method":"session/request_permission","id":[1],"result":null}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, deltas bool) {
		acpIdentify(Moment{Raw: raw})
		ds, err := acpMap(Moment{Raw: raw, Deltas: deltas, Nonce: "n"}, &State{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Type == "" || d.Data == nil {
				t.Fatalf("bad draft %+v", d)
			}
		}
	})
}
