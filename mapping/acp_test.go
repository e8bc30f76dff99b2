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

// TestACPLoadReplay: the history a session/load replays, before its
// result (claude-agent-acp, OpenCode, Kimi) or after it (Gemini CLI), is
// one x.acp.history.replayed summary, never tool events; the turn after
// the load is live again, and a load of a session the record started is
// no second session.started.
func TestACPLoadReplay(t *testing.T) {
	call := func(kind, status string) string {
		return `{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"` + kind + `","toolCallId":"c","kind":"execute","status":"` + status + `"}}}`
	}
	load := `{"kind":"request","method":"session/load","id":1,"params":{"sessionId":"s"}}`
	loaded := `{"kind":"response","method":"session/load","id":1,"sessionId":"s","result":{}}`
	prompt := `{"kind":"request","method":"session/prompt","id":2,"tee":"T","params":{"sessionId":"s","prompt":[]}}`
	commands := `{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update"}}}`
	for _, c := range []struct {
		name  string
		steps []teeStep
	}{
		{"before the result", []teeStep{
			{load, false, []string{"x.acp.session.load"}},
			{call("tool_call", "completed"), false, nil},
			{call("tool_call_update", "completed"), false, nil},
			{loaded, false, []string{"x.acp.history.replayed", "session.started"}},
			{prompt, false, []string{"run.started"}},
			{call("tool_call", "pending"), false, []string{"tool.requested"}},
		}},
		{"after the result", []teeStep{
			{load, false, []string{"x.acp.session.load"}},
			{loaded, false, []string{"session.started"}},
			{commands, false, []string{"x.acp.available.commands.update"}},
			{call("tool_call", "completed"), false, nil},
			{prompt, false, []string{"x.acp.history.replayed", "run.started"}},
		}},
		{"a failed load", []teeStep{
			{load, false, []string{"x.acp.session.load"}},
			{`{"kind":"response","method":"session/load","id":1,"sessionId":"s","error":{"code":-32603}}`, false, nil},
			{call("tool_call", "pending"), false, []string{"tool.requested"}},
		}},
		{"a load of a session started here", []teeStep{
			{`{"kind":"response","method":"session/new","id":1,"result":{"sessionId":"s"}}`, false, []string{"session.started"}},
			{load, false, []string{"x.acp.session.load"}},
			{loaded, false, []string{"x.acp.session.loaded"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := runTeeSteps(t, mapping.ACP(), c.steps)
			for _, d := range ds {
				if d.Type == "x.acp.history.replayed" && (d.Data["tool_calls"] != 1 || d.Data["updates"] == 0) {
					t.Errorf("summary %v", d.Data)
				}
			}
		})
	}
}

// TestACPCutTurns: how a prompt turn the agent cuts short is recorded
// depends on what the tee saw before the answer: the editor's cancel, its
// signal or closed stdin, the agent's death.
func TestACPCutTurns(t *testing.T) {
	answer := func(reason, result string) string {
		return `{"kind":"response","method":"session/prompt","id":2,"sessionId":"s","reason":"` + reason + `",` + result + `}`
	}
	cancelled, failed := `"result":{"stopReason":"cancelled"}`, `"error":{"code":-32603,"message":"x"}`
	for _, c := range []struct {
		name, answer string
		cancel       bool
		want, by     string
	}{
		{"the editor cancelled", answer("", cancelled), true, "run.cancelled", "user"},
		{"cancelled, then the editor stopped the agent", answer("agent_stopped", cancelled), true, "run.cancelled", "user"},
		{"the editor's signal", answer("agent_stopped", cancelled), false, "run.cancelled", "shutdown"},
		{"an error after the editor's signal", answer("agent_stopped", failed), false, "run.cancelled", "shutdown"},
		{"the editor closed stdin", answer("client_closed", cancelled), false, "run.cancelled", "shutdown"},
		{"the agent died, its worker answers", answer("agent_exited", cancelled), false, "run.failed", ""},
		{"finished after the signal", answer("agent_stopped", `"result":{"stopReason":"end_turn"}`), false, "run.finished", ""},
		{"the agent's own word", answer("", cancelled), false, "run.cancelled", "user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps := []teeStep{{`{"kind":"request","method":"session/prompt","id":2,"params":{"sessionId":"s","prompt":[]}}`, false, []string{"run.started"}}}
			if c.cancel {
				steps = append(steps, teeStep{`{"kind":"notification","method":"session/cancel","params":{"sessionId":"s"}}`, false, []string{"x.acp.session.cancel"}})
			}
			ds := runTeeSteps(t, mapping.ACP(), append(steps, teeStep{c.answer, false, []string{c.want}}))
			if by, _ := ds[len(ds)-1].Data["by"].(string); by != c.by {
				t.Errorf("by %q, want %q", by, c.by)
			}
		})
	}
}

// TestACPToolNames: a call is named by the agent's own tool name, else
// its kind, never by a display title; OpenCode's and Kimi Code's pending
// title is its tool.
func TestACPToolNames(t *testing.T) {
	for _, c := range []struct{ name, peer, update, want string }{
		{"claude-agent-acp", "", `"_meta":{"claudeCode":{"toolName":"Bash"}},"name":"Bash","title":"Terminal","kind":"execute","status":"pending"`, "Bash"},
		{"qwen code", "", `"_meta":{"toolName":"run_shell_command"},"title":"touch x","kind":"execute"`, "run_shell_command"},
		{"gemini cli", "", `"title":"notes.txt","kind":"read","status":"in_progress"`, "read"},
		{"opencode pending", "OpenCode", `"title":"bash","kind":"execute","status":"pending"`, "bash"},
		{"opencode running", "OpenCode", `"title":"touch x","kind":"execute","status":"in_progress"`, "execute"},
		{"kimi pending", "Kimi Code CLI", `"title":"Bash","kind":"execute","status":"pending"`, "Bash"},
		{"title only", "", `"title":"run tests"`, "run tests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := decode(t, mapping.ACP(), `{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c",`+c.update+`}}}`, false)
			m.Facts.Peer.Name = c.peer
			ds, _ := mapping.ACP().Map(m, &mapping.State{})
			if len(ds) == 0 || ds[0].Data["tool"].(map[string]any)["name"] != c.want {
				t.Errorf("got %v, want %q", ds, c.want)
			}
		})
	}
}

// TestACPUsage: the prompt result's usage (the schema's, or Gemini CLI's
// _meta quota) rides run.finished; a usage update keeps the context window
// and the cost.
func TestACPUsage(t *testing.T) {
	for _, c := range []struct{ name, raw, key string }{
		{"result usage", `{"kind":"response","method":"session/prompt","id":2,"sessionId":"s","result":{"stopReason":"end_turn","usage":{"inputTokens":200,"outputTokens":40}}}`, "usage"},
		{"gemini quota", `{"kind":"response","method":"session/prompt","id":2,"sessionId":"s","result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":200,"output_tokens":40}}}}}`, "usage"},
	} {
		ds, _ := mapping.ACP().Map(decode(t, mapping.ACP(), c.raw, false), &mapping.State{})
		want := map[string]any{"gen_ai.usage.input_tokens": int64(200), "gen_ai.usage.output_tokens": int64(40)}
		if len(ds) != 1 || !reflect.DeepEqual(ds[0].Data[c.key], want) {
			t.Errorf("%s: %+v", c.name, ds)
		}
	}
	ds, _ := mapping.ACP().Map(decode(t, mapping.ACP(), `{"kind":"notification","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":120,"size":1000000,"cost":{"amount":0.5,"currency":"USD"}}}}`, false), &mapping.State{})
	want := map[string]any{"used": int64(120), "size": int64(1000000), "cost": map[string]any{"currency": "USD", "total": 0.5}}
	if len(ds) != 1 || !reflect.DeepEqual(ds[0].Data, want) {
		t.Errorf("usage update %+v", ds)
	}
}

// TestACPHook: the name a transport gives a moment (ACPHook) is the one
// the table's Identify gives it, for every kind.
func TestACPHook(t *testing.T) {
	for _, k := range []mapping.Kind{mapping.KindRequest, mapping.KindResponse, mapping.KindNotification, mapping.KindEnd} {
		for _, method := range []string{"session/update", "session/prompt", "initialize", ""} {
			f := mapping.Facts{Kind: k, Method: method}
			hook, _ := mapping.ACP().Identify(mapping.Moment{Facts: f, Raw: []byte(`{}`)})
			if got, want := mapping.ACPHook(f), k.String()+":"+method; got != want || hook != want {
				t.Errorf("%v %q: ACPHook %q, Identify %q, want %q", k, method, got, hook, want)
			}
		}
	}
}
