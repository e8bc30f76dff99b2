package mapping

import (
	"encoding/json"
	"reflect"
	"testing"
)

// want is the part of a draft a table test pins: type, subject, run and the
// payload (compared as JSON), plus the reference keys when set.
type hkWant struct {
	Type, Subject, Run string
	Data               string // JSON; "" skips the comparison
	SubjectRef         string
}

// checkDrafts compares got with ws in order.
func hkCheck(t *testing.T, got []Draft, ws []hkWant) {
	t.Helper()
	if len(got) != len(ws) {
		t.Fatalf("got %d drafts %v, want %d", len(got), hkTypes(got), len(ws))
	}
	for i, w := range ws {
		g := got[i]
		if g.Type != w.Type || g.Subject != w.Subject || g.Run != w.Run {
			t.Errorf("draft %d = (%s, subject %q, run %q), want (%s, %q, %q)",
				i, g.Type, g.Subject, g.Run, w.Type, w.Subject, w.Run)
		}
		if w.SubjectRef != "" && g.SubjectRef != w.SubjectRef {
			t.Errorf("draft %d SubjectRef = %q, want %q", i, g.SubjectRef, w.SubjectRef)
		}
		if w.Data != "" {
			hkJSONEqual(t, g.Data, w.Data)
		}
	}
}

func hkTypes(ds []Draft) []string {
	var ts []string
	for _, d := range ds {
		ts = append(ts, d.Type)
	}
	return ts
}

// jsonEqual compares v, round-tripped through JSON, with the JSON text w.
func hkJSONEqual(t *testing.T, v any, w string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var got, exp any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(w), &exp); err != nil {
		t.Fatalf("bad want %s: %v", w, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("data = %s\nwant   %s", b, w)
	}
}

// run feeds payloads through v.Map against one state, with nonces n1, n2...
func hkRun(t *testing.T, v Vendor, st *State, payloads ...string) []Draft {
	t.Helper()
	var all []Draft
	for i, p := range payloads {
		ds, err := v.Map(Moment{Raw: []byte(p), Nonce: "n" + string(rune('1'+i))}, st)
		if err != nil {
			t.Fatalf("map %s: %v", p, err)
		}
		all = append(all, ds...)
	}
	return all
}

func TestCodexHooks(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []hkWant
	}{
		{"SessionStart",
			`{"hook_event_name":"SessionStart","session_id":"s1","source":"startup","model":"gpt-5.2-codex","cwd":"/home/user/proj"}`,
			[]hkWant{{Type: "session.started", Data: `{"client":{"name":"codex"},"trigger":"startup","gen_ai.request.model":"gpt-5.2-codex","cwd":"/home/user/proj"}`}}},
		{"UserPromptSubmit",
			`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t1","prompt":"Fix the failing test"}`,
			[]hkWant{{Type: "run.started", Run: "t1", Data: `{"trigger":"user","prompt":"Fix the failing test"}`}}},
		{"Stop",
			`{"hook_event_name":"Stop","session_id":"s1","turn_id":"t1"}`,
			[]hkWant{{Type: "run.finished", Run: "t1", Data: `{}`}}},
		{"PreToolUse",
			`{"hook_event_name":"PreToolUse","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_use_id":"call_1","tool_input":{"command":"ls -la"}}`,
			[]hkWant{{Type: "tool.requested", Subject: "shell", Run: "t1",
				Data: `{"tool":{"name":"shell","call_id":"call_1"},"args_digest":"1df8bccaec747dc615b50678f35bf5b5","args":{"command":"ls -la"}}`}}},
		{"PostToolUse",
			`{"hook_event_name":"PostToolUse","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_use_id":"call_1","tool_response":{"output":"total 0","exit_code":0}}`,
			[]hkWant{{Type: "tool.completed", Subject: "shell", Run: "t1",
				Data: `{"tool":{"name":"shell","call_id":"call_1"},"result_digest":"23b8f930346a70ec5e43f5c98cc78c5e","result":{"output":"total 0","exit_code":0}}`}}},
		{"PermissionRequest",
			`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_input":{"command":"rm -rf build","description":"clean build dir"}}`,
			[]hkWant{{Type: "attention.requested", Subject: "shell", Run: "t1",
				Data: `{"kind":"permission","prompt":"Permission requested: shell — rm -rf build (clean build dir)","options":[{"id":"allow","label":"Allow (aep-hook's option)"},{"id":"deny","label":"Deny (aep-hook's option)"}],"respond_via":["oob"]}`}}},
		{"SubagentStart",
			`{"hook_event_name":"SubagentStart","session_id":"s1","turn_id":"t1","agent_id":"sub_1","agent_type":"explore"}`,
			[]hkWant{{Type: "delegation.subagent.started", Subject: "sub_1", Run: "t1", Data: `{"agent_type":"explore","child":{"run":"sub_1"}}`}}},
		{"SubagentStop",
			`{"hook_event_name":"SubagentStop","session_id":"s1","turn_id":"t1","agent_id":"sub_1"}`,
			[]hkWant{{Type: "delegation.subagent.stopped", Subject: "sub_1", Run: "t1", Data: `{"child":{"agent":"sub_1"}}`}}},
		{"PreCompact", `{"hook_event_name":"PreCompact","session_id":"s1","trigger":"auto"}`, nil},
		{"PostCompact",
			`{"hook_event_name":"PostCompact","session_id":"s1","trigger":"auto"}`,
			[]hkWant{{Type: "session.compacted", Data: `{"trigger":"auto"}`}}},
		{"fallback",
			`{"hook_event_name":"SomeFutureHook","session_id":"s1"}`,
			[]hkWant{{Type: "x.codex.session.some_future_hook", Data: `{}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hkCheck(t, hkRun(t, Codex(), &State{}, tt.in), tt.want)
		})
	}
}

func TestCodexInterruptDrain(t *testing.T) {
	st := &State{}
	got := hkRun(t, Codex(), st,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t1","prompt":"a"}`,
		`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_input":{"command":"make"}}`,
		// No Stop: the user pressed Esc. The next prompt drains t1.
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t2","prompt":"b"}`,
		`{"hook_event_name":"Stop","session_id":"s1","turn_id":"t2"}`,
		// A prompt after a clean Stop drains nothing.
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t3","prompt":"c"}`,
	)
	key := toolAttentionKey("shell", []byte(`{"command":"make"}`))
	hkCheck(t, got, []hkWant{
		{Type: "run.started", Run: "t1"},
		{Type: "attention.requested", Subject: "shell", Run: "t1"},
		{Type: "attention.resolved", Run: "t1", Data: `{"resolution":"dismissed"}`, SubjectRef: key},
		{Type: "run.cancelled", Run: "t1", Data: `{}`},
		{Type: "run.started", Run: "t2"},
		{Type: "run.finished", Run: "t2"},
		{Type: "run.started", Run: "t3"},
	})
}

// TestCodexUnreportedEnd: a Codex with PreModelRequest / Interrupt (0.169)
// reports interrupts, so a turn with no Stop (an API failure) is no
// cancellation: it keeps no terminal at the next prompt and at SessionEnd,
// while its pending request is still dismissed.
func TestCodexUnreportedEnd(t *testing.T) {
	st := &State{}
	got := hkRun(t, Codex(), st,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t1","prompt":"a"}`,
		`{"hook_event_name":"PreModelRequest","session_id":"s1","turn_id":"t1"}`,
		`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_input":{"command":"make"}}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t2","prompt":"b"}`,
		`{"hook_event_name":"SessionEnd","session_id":"s1","reason":"other"}`,
	)
	hkCheck(t, got, []hkWant{
		{Type: "run.started", Run: "t1"},
		{Type: "x.codex.session.pre_model_request", Run: "t1"},
		{Type: "attention.requested", Subject: "shell", Run: "t1"},
		{Type: "attention.resolved", Run: "t1", Data: `{"resolution":"dismissed"}`},
		{Type: "run.started", Run: "t2"},
		{Type: "session.ended", Data: `{"reason":"normal"}`},
	})
}

// TestCodexModelAttempts: PostModelRequest (0.171) states each model
// attempt; a failed attempt that a retry follows ends nothing, a turn whose
// last attempt failed and that gets no Stop failed (at the next prompt or
// SessionEnd), and a finished turn carries the tokens its attempts used.
func TestCodexModelAttempts(t *testing.T) {
	const (
		failed    = `"status":"failed","error":"{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}","token_usage":null`
		completed = `"status":"completed","error":null,"token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":20,"total_tokens":120}`
	)
	st := &State{}
	got := hkRun(t, Codex(), st,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t1","prompt":"a"}`,
		`{"hook_event_name":"PreModelRequest","session_id":"s1","turn_id":"t1","kind":"sampling","request_id":"r1","attempt_number":1,"thread_id":"s1"}`,
		`{"hook_event_name":"PostModelRequest","session_id":"s1","turn_id":"t1","kind":"sampling","request_id":"r1","attempt_number":1,`+failed+`}`,
		`{"hook_event_name":"PostModelRequest","session_id":"s1","turn_id":"t1","kind":"sampling","request_id":"r1","attempt_number":2,`+completed+`}`,
		`{"hook_event_name":"PostModelRequest","session_id":"s1","turn_id":"t1","kind":"sampling","request_id":"r2","attempt_number":1,`+completed+`}`,
		`{"hook_event_name":"Stop","session_id":"s1","turn_id":"t1"}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t2","prompt":"b"}`,
		`{"hook_event_name":"PostModelRequest","session_id":"s1","turn_id":"t2","attempt_number":1,"status":"failed","error":"stream disconnected before completion: x"}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","turn_id":"t3","prompt":"c"}`,
		`{"hook_event_name":"PostModelRequest","session_id":"s1","turn_id":"t3","attempt_number":1,`+failed+`}`,
		`{"hook_event_name":"SessionEnd","session_id":"s1","reason":"other"}`,
	)
	hkCheck(t, got, []hkWant{
		{Type: "run.started", Run: "t1"},
		{Type: "x.codex.session.pre_model_request", Run: "t1", Data: `{"kind":"sampling","request_id":"r1","attempt_number":1,"thread_id":"s1"}`},
		{Type: "x.codex.session.post_model_request", Run: "t1", Data: `{"kind":"sampling","request_id":"r1","attempt_number":1,"status":"failed","error":"{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}"}`},
		{Type: "x.codex.session.post_model_request", Run: "t1", Data: `{"kind":"sampling","request_id":"r1","attempt_number":2,"status":"completed","token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":20,"total_tokens":120}}`},
		{Type: "x.codex.session.post_model_request", Run: "t1"},
		{Type: "run.finished", Run: "t1", Data: `{"gen_ai.usage.input_tokens":200,"gen_ai.usage.output_tokens":40}`},
		{Type: "run.started", Run: "t2"},
		{Type: "x.codex.session.post_model_request", Run: "t2"},
		{Type: "run.failed", Run: "t2", Data: `{"reason":"model_request_failed","error":{"type":"stream_disconnected"}}`},
		{Type: "run.started", Run: "t3"},
		{Type: "x.codex.session.post_model_request", Run: "t3"},
		{Type: "run.failed", Run: "t3", Data: `{"reason":"model_request_failed","error":{"type":"invalid_request_error"}}`},
		{Type: "session.ended", Data: `{"reason":"normal"}`},
	})
}

// TestCodexToolNames: a namespaced tool's hooks carry the namespace glued
// to the name; the record names the tool as the model called it.
func TestCodexToolNames(t *testing.T) {
	for in, want := range map[string]string{
		"multi_agent_v1wait_agent": "wait_agent", "spawn_agent": "spawn_agent", "Bash": "Bash",
		"mcp__docs__search": "mcp__docs__search", "apply_patch": "apply_patch", "multi_agent_v1": "multi_agent_v1",
	} {
		if got := codexToolName(in); got != want {
			t.Errorf("codexToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCodexPatchPermission: an apply_patch PermissionRequest names no call
// and its command lacks the trailing newline the tool hooks keep; the
// call's PostToolUse still answers it.
func TestCodexPatchPermission(t *testing.T) {
	st := &State{}
	got := hkRun(t, Codex(), st,
		`{"hook_event_name":"PreToolUse","session_id":"s1","turn_id":"t1","tool_name":"apply_patch","tool_use_id":"c1","tool_input":{"command":"*** Begin Patch\n*** End Patch\n"}}`,
		`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t1","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** End Patch"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s1","turn_id":"t1","tool_name":"apply_patch","tool_use_id":"c1","tool_input":{"command":"*** Begin Patch\n*** End Patch\n"},"tool_response":"ok"}`,
	)
	hkCheck(t, got, []hkWant{
		{Type: "tool.requested", Subject: "apply_patch", Run: "t1"},
		{Type: "attention.requested", Subject: "apply_patch", Run: "t1"},
		{Type: "attention.answered", Run: "t1", Data: `{"answer":{"option":"allow"},"via":"oob"}`},
		{Type: "attention.resolved", Run: "t1", Data: `{"resolution":"answered"}`},
		{Type: "tool.completed", Subject: "apply_patch", Run: "t1"},
	})
}

// TestCodexPermissionSettledByPostToolUse: the call ran, so its permission
// request was answered (allowed); nobody says by whom.
func TestCodexPermissionSettledByPostToolUse(t *testing.T) {
	st := &State{}
	got := hkRun(t, Codex(), st,
		`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_input":{"command":"make"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_use_id":"c1","tool_input":{"command":"make"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s1","turn_id":"t1","tool_name":"shell","tool_use_id":"c1","tool_input":{"command":"make"},"tool_response":"ok"}`,
		`{"hook_event_name":"Stop","session_id":"s1","turn_id":"t1"}`,
	)
	hkCheck(t, got, []hkWant{
		{Type: "attention.requested", Subject: "shell", Run: "t1"},
		{Type: "tool.requested", Subject: "shell", Run: "t1"},
		{Type: "attention.answered", Run: "t1", Data: `{"answer":{"option":"allow"},"via":"oob"}`},
		{Type: "attention.resolved", Run: "t1", Data: `{"resolution":"answered"}`},
		{Type: "tool.completed", Subject: "shell", Run: "t1"},
		{Type: "run.finished", Run: "t1"},
	})
}

func TestCodexReply(t *testing.T) {
	for hook, want := range map[string]string{
		"Stop": "{}", "SubagentStop": "{}", "SessionStart": "", "UserPromptSubmit": "",
		"PreToolUse": "", "PostToolUse": "", "PermissionRequest": "", "PostCompact": "",
	} {
		if got := string(Codex().Reply(hook)); got != want {
			t.Errorf("Reply(%s) = %q, want %q", hook, got, want)
		}
	}
}

func TestCodexIdentify(t *testing.T) {
	hook, sess := Codex().Identify(Moment{Raw: []byte(`{"hook_event_name":"Stop","session_id":"th_1"}`)})
	if hook != "Stop" || sess != "th_1" {
		t.Errorf("Identify = %q, %q", hook, sess)
	}
	if _, sess := Codex().Identify(Moment{Raw: []byte(`{}`)}); sess != UnknownSession {
		t.Errorf("missing session lane = %q", sess)
	}
}

func FuzzCodexMap(f *testing.F) {
	f.Add(`{"hook_event_name":"PermissionRequest","session_id":"s","turn_id":"t","tool_name":"shell","tool_input":{"command":["ls","-la"]}}`)
	f.Add(`{"hook_event_name":"UserPromptSubmit","turn_id":7}`)
	f.Add(`{"hook_event_name":"PostToolUse","tool_input":"x","tool_response":null}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, raw string) {
		st := &State{}
		for i := 0; i < 2; i++ {
			if _, err := Codex().Map(Moment{Raw: []byte(raw), Nonce: "n"}, st); err != nil {
				t.Fatal(err)
			}
		}
	})
}
