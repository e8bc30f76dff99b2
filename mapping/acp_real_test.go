package mapping_test

import (
	"reflect"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// The permission flows of real ACP agents: Qwen Code 0.15 announces a call
// needing permission only in session/request_permission; its answer must
// say allow or reject; a rejected call is denied, and what the agent
// reports of it after stays an update.
func TestACPPermissionFlows(t *testing.T) {
	const (
		prompt = `{"kind":"request","method":"session/prompt","id":2,"tee":"T","params":{"sessionId":"s","prompt":[{"type":"text","text":"fix it"},{"type":"image","data":"AAAA"},{"type":"text","text":"now"}]}}`
		ask    = `{"kind":"request","method":"session/request_permission","id":0,"params":{"sessionId":"s","options":[{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"call_1","status":"pending","title":"touch x (mark)","kind":"execute","rawInput":{"command":"touch x"}}}}`
		allow  = `{"kind":"response","method":"session/request_permission","id":0,"sessionId":"s","result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}}`
		reject = `{"kind":"response","method":"session/request_permission","id":0,"sessionId":"s","result":{"outcome":{"outcome":"selected","optionId":"cancel"}}}`
		done   = `{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","_meta":{"toolName":"run_shell_command"}}}}`
		failed = `{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"failed"}}}`
	)
	t.Run("allow", func(t *testing.T) {
		ds := runTeeSteps(t, mapping.ACP(), []teeStep{
			{prompt, false, []string{"run.started"}},
			{ask, false, []string{"tool.requested", "attention.requested"}},
			{allow, false, []string{"attention.answered", "attention.resolved"}},
			{done, false, []string{"tool.completed"}},
		})
		if p := ds[0].Data["prompt"]; p != "fix it\nnow" {
			t.Errorf("prompt %q, want the text blocks as one string", p)
		}
		if tool := ds[1].Data["tool"]; !reflect.DeepEqual(tool, map[string]any{"name": "execute", "call_id": "call_1"}) {
			t.Errorf("tool %v: a call first seen in a permission request is named by its kind, not its title", tool)
		}
		if a := ds[3].Data["answer"]; !reflect.DeepEqual(a, map[string]any{"option": "proceed_once", "kind": "allow_once"}) {
			t.Errorf("answer %v", a)
		}
		for _, d := range ds[1:] {
			if d.Run != "T:2" {
				t.Errorf("%s run %q, want T:2", d.Type, d.Run)
			}
		}
	})
	t.Run("reject", func(t *testing.T) {
		ds := runTeeSteps(t, mapping.ACP(), []teeStep{
			{prompt, false, []string{"run.started"}},
			{ask, false, []string{"tool.requested", "attention.requested"}},
			{reject, false, []string{"attention.answered", "attention.resolved", "tool.denied"}},
			{failed, false, []string{"x.acp.tool_call.update"}},
			{failed, false, []string{"x.acp.tool_call.update"}},
		})
		if d := ds[5]; d.Data["by"] != "user_setting" || d.Subject != "call_1" || d.Run != "T:2" {
			t.Errorf("tool.denied %+v", d)
		}
		if k := ds[3].Data["answer"].(map[string]any)["kind"]; k != "reject_once" {
			t.Errorf("answer kind %v", k)
		}
	})
	t.Run("announced before", func(t *testing.T) {
		runTeeSteps(t, mapping.ACP(), []teeStep{
			{prompt, false, []string{"run.started"}},
			{`{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","status":"pending","title":"Shell","kind":"execute","rawInput":{},"_meta":{"toolName":"run_shell_command"}}}}`, false, []string{"tool.requested"}},
			{ask, false, []string{"attention.requested"}},
			{reject, false, []string{"attention.answered", "attention.resolved", "tool.denied"}},
		})
	})
	t.Run("cancelled", func(t *testing.T) {
		runTeeSteps(t, mapping.ACP(), []teeStep{
			{prompt, false, []string{"run.started"}},
			{ask, false, []string{"tool.requested", "attention.requested"}},
			{`{"kind":"response","method":"session/request_permission","id":0,"sessionId":"s","result":{"outcome":{"outcome":"cancelled"}}}`, false, []string{"attention.resolved"}},
		})
	})
}

// TestACPEnd closes a prompt turn the tee saw end unanswered, by why it
// ended.
func TestACPEnd(t *testing.T) {
	const prompt = `{"kind":"request","method":"session/prompt","id":3,"tee":"T","params":{"sessionId":"s","prompt":[]}}`
	end := func(reason string) string {
		return `{"kind":"end","method":"session/prompt","id":3,"sessionId":"s","tee":"T","reason":"` + reason + `"}`
	}
	for _, c := range []struct {
		name   string
		steps  []teeStep
		typ    string
		detail map[string]any
	}{
		{"exited", []teeStep{{prompt, false, []string{"run.started"}}, {end("agent_exited"), false, []string{"run.failed"}}},
			"run.failed", map[string]any{"reason": "agent_exited", "error": map[string]any{"type": "agent_exited"}}},
		{"stopped", []teeStep{{prompt, false, []string{"run.started"}}, {end("agent_stopped"), false, []string{"run.cancelled"}}},
			"run.cancelled", map[string]any{"by": "shutdown", "reason": "agent_stopped"}},
		{"closed", []teeStep{{prompt, false, []string{"run.started"}}, {end("client_closed"), false, []string{"run.cancelled"}}},
			"run.cancelled", map[string]any{"by": "shutdown", "reason": "client_closed"}},
		{"cancel asked", []teeStep{{prompt, false, []string{"run.started"}},
			{`{"kind":"notification","method":"session/cancel","params":{"sessionId":"s"}}`, false, []string{"x.acp.session.cancel"}},
			{end("agent_exited"), false, []string{"run.cancelled"}}},
			"run.cancelled", map[string]any{"by": "user"}},
		{"other request", []teeStep{{`{"kind":"end","method":"session/new","id":1,"reason":"agent_exited"}`, false, nil}}, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := runTeeSteps(t, mapping.ACP(), c.steps)
			if c.typ == "" {
				return
			}
			last := ds[len(ds)-1]
			if last.Run != "T:3" || !reflect.DeepEqual(last.Data, c.detail) {
				t.Errorf("%s run %q data %v, want T:3 %v", last.Type, last.Run, last.Data, c.detail)
			}
		})
	}
}

// TestACPPeer: session.started names the agent the connection's
// initialize named (the pin's "acp" without one).
func TestACPPeer(t *testing.T) {
	v := mapping.ACP()
	m := decode(t, v, `{"kind":"response","method":"session/new","result":{"sessionId":"s"}}`, false)
	ds, _ := v.Map(m, &mapping.State{})
	if c := ds[0].Data["client"]; !reflect.DeepEqual(c, map[string]any{"name": "acp"}) {
		t.Errorf("client %v", c)
	}
	m.Facts.Peer = mapping.Peer{Name: "qwen-code", Version: "0.24.4"}
	ds, _ = v.Map(m, &mapping.State{})
	if c := ds[0].Data["client"]; !reflect.DeepEqual(c, map[string]any{"name": "qwen-code", "version": "0.24.4"}) {
		t.Errorf("client %v", c)
	}
}
