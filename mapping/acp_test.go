package mapping_test

import (
	"reflect"
	"testing"

	"github.com/aep-hook/aep-hook/adapters"
	"github.com/aep-hook/aep-hook/mapping"
)

// step is one moment of a stateful table test and the types it yields.
type teeStep struct {
	raw    string
	deltas bool
	want   []string
}

func runTeeSteps(t *testing.T, v mapping.Vendor, steps []teeStep) []mapping.Draft {
	t.Helper()
	st := &mapping.State{}
	var all []mapping.Draft
	for i, s := range steps {
		ds, err := v.Map(decode(t, v, s.raw, s.deltas), st)
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
	ds := runTeeSteps(t, mapping.ACP(), []teeStep{
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

// decode is the moment the table's transport makes of a JSON line (as the
// map verb and the pins harness do), with nonce "n".
func decode(t testing.TB, v mapping.Vendor, raw string, deltas bool) mapping.Moment {
	t.Helper()
	ms, err := adapters.Decode(v.Transport, []byte(raw))
	if err != nil || len(ms) != 1 {
		t.Fatalf("decode %s: %d moments, %v", raw, len(ms), err)
	}
	ms[0].Nonce, ms[0].Deltas = "n", deltas
	return ms[0]
}

func TestACPIdentify(t *testing.T) {
	for _, c := range []struct{ raw, hook, session string }{
		{`{"kind":"request","method":"session/prompt","params":{"sessionId":"a"}}`, "request:session/prompt", "a"},
		{`{"kind":"response","method":"session/prompt","sessionId":"b","result":{}}`, "response:session/prompt", "b"},
		{`{"kind":"response","method":"session/new","result":{"sessionId":"c"}}`, "response:session/new", "c"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "request:initialize", mapping.UnknownSession},
		{`{"jsonrpc":"2.0","method":"x"}`, "notification:x", mapping.UnknownSession},
	} {
		h, s := mapping.ACP().Identify(decode(t, mapping.ACP(), c.raw, false))
		if h != c.hook || s != c.session {
			t.Errorf("%s: %q %q", c.raw, h, s)
		}
	}
}

// FuzzACPMap maps arbitrary moments: never an error or a panic, and every
// type is a legal extension or core type.
func FuzzACPMap(f *testing.F) {
	f.Add([]byte(`{"kind":"request","method":"session/prompt","id":1,"params":{"sessionId":"s","prompt":"x"}}`), true)
	f.Add([]byte(`{"kind":"notification","method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":{}}}}`), false)
	f.Add([]byte(`{"kind":"response","method":"session/request_permission","id":[1],"result":null}`), false)
	v := mapping.ACP()
	f.Fuzz(func(t *testing.T, raw []byte, deltas bool) {
		ms, _ := adapters.Decode(v.Transport, raw)
		for _, m := range ms {
			m.Deltas, m.Nonce = deltas, "n"
			v.Identify(m)
			ds, err := v.Map(m, &mapping.State{})
			if err != nil {
				t.Fatal(err)
			}
			checkDrafts(t, ds)
		}
	})
}

// checkDrafts fails on a draft without a type or a payload.
func checkDrafts(t *testing.T, ds []mapping.Draft) {
	t.Helper()
	for _, d := range ds {
		if d.Type == "" || d.Data == nil {
			t.Fatalf("bad draft %+v", d)
		}
	}
}
