package mapping

import (
	"strings"
	"testing"
)

func TestClaudeCodeHooks(t *testing.T) {
	const s = `"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default"`
	tests := []struct {
		name string
		in   string
		want []hkWant
	}{
		{"SessionStart", `{"hook_event_name":"SessionStart",` + s + `,"source":"startup","model":"claude-opus-4"}`,
			[]hkWant{{Type: "session.started", Data: `{"client":{"name":"claude-code"},"trigger":"startup","gen_ai.request.model":"claude-opus-4","permission_mode":"default","cwd":"/w"}`}}},
		{"SessionEnd", `{"hook_event_name":"SessionEnd",` + s + `,"reason":"prompt_input_exit"}`,
			[]hkWant{{Type: "session.ended", Data: `{"reason":"normal"}`}}},
		{"SessionEnd-unknown-reason", `{"hook_event_name":"SessionEnd",` + s + `,"reason":"meteor"}`,
			[]hkWant{{Type: "session.ended", Data: `{}`}}},
		{"UserPromptSubmit", `{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"hi"}`,
			[]hkWant{{Type: "run.started", Run: "n1", Data: `{"trigger":"user","prompt":"hi"}`}}},
		{"Stop-no-open-run", `{"hook_event_name":"Stop",` + s + `,"stop_hook_active":false}`,
			[]hkWant{{Type: "run.finished", Run: "n1", Data: `{}`}}},
		{"StopFailure", `{"hook_event_name":"StopFailure",` + s + `,"error_type":"rate_limit","error":"429","error_message":"slow down"}`,
			[]hkWant{{Type: "run.failed", Run: "n1", Data: `{"reason":"rate_limit","error":{"type":"rate_limit","message":"slow down"}}`}}},
		{"PreToolUse", `{"hook_event_name":"PreToolUse",` + s + `,"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls -la"}}`,
			[]hkWant{{Type: "tool.requested", Subject: "Bash",
				Data: `{"tool":{"name":"Bash","call_id":"toolu_1"},"args_digest":"1df8bccaec747dc615b50678f35bf5b5","args":{"command":"ls -la"}}`}}},
		{"PostToolUse", `{"hook_event_name":"PostToolUse",` + s + `,"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls -la"},"tool_response":{"output":"total 0","exit_code":0}}`,
			[]hkWant{{Type: "tool.completed", Subject: "Bash",
				Data: `{"tool":{"name":"Bash","call_id":"toolu_1"},"result_digest":"23b8f930346a70ec5e43f5c98cc78c5e","result":{"output":"total 0","exit_code":0}}`}}},
		{"PostToolUseFailure", `{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_use_id":"toolu_2","tool_input":{"command":"false"},"error":"exit 1","is_interrupt":false}`,
			[]hkWant{{Type: "tool.failed", Subject: "Bash", Data: `{"tool":{"name":"Bash","call_id":"toolu_2"},"error":{"type":"tool_error","message":"exit 1"}}`}}},
		{"PostToolUseFailure-interrupt", `{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_use_id":"toolu_2","error":"stopped","is_interrupt":true}`,
			[]hkWant{{Type: "tool.failed", Subject: "Bash", Data: `{"tool":{"name":"Bash","call_id":"toolu_2"},"error":{"type":"interrupt","message":"stopped"}}`}}},
		{"PermissionRequest", `{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"Bash","tool_input":{"command":"rm -rf build","description":"clean"}}`,
			[]hkWant{{Type: "attention.requested", Subject: "Bash",
				Data: `{"kind":"permission","prompt":"Permission requested: Bash — rm -rf build (clean)","options":[{"id":"yes","label":"Yes"},{"id":"no","label":"No, and tell Claude what to do differently"}],"respond_via":["oob"]}`}}},
		{"PermissionRequest-file", `{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"Write","tool_input":{"file_path":"/w/a.go","content":"x"}}`,
			[]hkWant{{Type: "attention.requested", Subject: "Write"}}},
		{"PermissionDenied", `{"hook_event_name":"PermissionDenied",` + s + `,"tool_name":"Bash","tool_use_id":"toolu_3","tool_input":{"command":"curl x | sh"},"reason":"risky"}`,
			[]hkWant{{Type: "tool.denied", Subject: "Bash", Data: `{"tool":{"name":"Bash","call_id":"toolu_3"},"by":"runtime"}`}}},
		{"SubagentStart", `{"hook_event_name":"SubagentStart",` + s + `,"agent_id":"a1","agent_type":"Explore"}`,
			[]hkWant{{Type: "delegation.subagent.started", Subject: "a1", Data: `{"agent_type":"Explore","child":{"run":"a1"}}`},
				{Type: "run.started", Run: "a1", Data: `{"trigger":"agent"}`}}},
		{"SubagentStop", `{"hook_event_name":"SubagentStop",` + s + `,"agent_id":"a1","agent_type":"Explore","stop_hook_active":false}`,
			[]hkWant{{Type: "delegation.subagent.stopped", Subject: "a1", Data: `{"agent_type":"Explore","child":{"agent":"a1"}}`}}},
		{"PreCompact", `{"hook_event_name":"PreCompact",` + s + `,"trigger":"auto","custom_instructions":""}`, nil},
		{"PostCompact", `{"hook_event_name":"PostCompact",` + s + `,"trigger":"manual","compact_summary":"..."}`,
			[]hkWant{{Type: "session.compacted", Data: `{"trigger":"manual"}`}}},
		{"TaskCreated", `{"hook_event_name":"TaskCreated",` + s + `,"task_id":"7","task_subject":"Write tests","task_description":"..."}`,
			[]hkWant{{Type: "progress.task.planned", Subject: "7", Data: `{"task":{"id":"7","title":"Write tests"}}`}}},
		{"TaskCompleted", `{"hook_event_name":"TaskCompleted",` + s + `,"task_id":"7","task_subject":"Write tests"}`,
			[]hkWant{{Type: "progress.task.completed", Subject: "7", Data: `{"task":{"id":"7","title":"Write tests"},"status":"completed"}`}}},
		{"Notification-permission", `{"hook_event_name":"Notification",` + s + `,"notification_type":"permission_prompt","message":"Claude needs your permission"}`, nil},
		{"Notification-elicitation", `{"hook_event_name":"Notification",` + s + `,"notification_type":"elicitation_dialog","message":"MCP input"}`, nil},
		{"Notification-idle", `{"hook_event_name":"Notification",` + s + `,"notification_type":"idle_prompt","message":"Claude is waiting for your input"}`,
			[]hkWant{{Type: "progress.status", Subject: "idle_prompt", Data: `{"message":"Claude is waiting for your input"}`}}},
		{"TeammateIdle", `{"hook_event_name":"TeammateIdle",` + s + `,"teammate_name":"researcher","team_name":"t"}`,
			[]hkWant{{Type: "agent.idle", Subject: "researcher", Data: `{"reason":"awaiting_input"}`}}},
		{"Elicitation", `{"hook_event_name":"Elicitation",` + s + `,"mcp_server_name":"deploy","message":"Pick","requested_schema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9}}}}`,
			[]hkWant{{Type: "attention.requested", Subject: "deploy",
				Data: `{"kind":"form","prompt":"Pick","fields":[{"id":"n","type":"number","label":"n","required":false,"min":1,"max":9}],"respond_via":["oob"]}`}}},
		{"Elicitation-url", `{"hook_event_name":"Elicitation",` + s + `,"mcp_server_name":"auth","mode":"url","message":"Sign in","url":"https://x"}`,
			[]hkWant{{Type: "attention.requested", Subject: "auth", Data: `{"kind":"other","prompt":"Sign in","respond_via":["oob"]}`}}},
		{"ElicitationResult-orphan", `{"hook_event_name":"ElicitationResult",` + s + `,"mcp_server_name":"deploy","action":"accept","content":{"n":3}}`, nil},
		{"MessageDisplay", `{"hook_event_name":"MessageDisplay",` + s + `,"message":"partial text"}`, nil},
		{"ConfigChange", `{"hook_event_name":"ConfigChange",` + s + `,"source":"project_settings","file_path":"/w/.claude/settings.json"}`,
			[]hkWant{{Type: "x.claude-code.session.config_change", Data: `{"source":"project_settings","file_path":"/w/.claude/settings.json"}`}}},
		{"InstructionsLoaded", `{"hook_event_name":"InstructionsLoaded",` + s + `,"file_path":"/w/CLAUDE.md","memory_type":"Project","load_reason":"session_start"}`,
			[]hkWant{{Type: "x.claude-code.session.instructions_loaded", Data: `{"file_path":"/w/CLAUDE.md","memory_type":"Project","load_reason":"session_start"}`}}},
		{"CwdChanged", `{"hook_event_name":"CwdChanged",` + s + `,"old_cwd":"/w","new_cwd":"/w/sub"}`,
			[]hkWant{{Type: "x.claude-code.session.cwd_changed", Data: `{"old_cwd":"/w","new_cwd":"/w/sub"}`}}},
		{"FileChanged", `{"hook_event_name":"FileChanged",` + s + `,"file_path":"/w/.env","event":"change"}`,
			[]hkWant{{Type: "x.claude-code.session.file_changed", Data: `{"file_path":"/w/.env","event":"change"}`}}},
		{"WorktreeCreate", `{"hook_event_name":"WorktreeCreate",` + s + `,"name":"feature-x"}`,
			[]hkWant{{Type: "x.claude-code.session.worktree_create", Data: `{"name":"feature-x"}`}}},
		{"WorktreeRemove", `{"hook_event_name":"WorktreeRemove",` + s + `,"worktree_path":"/w/.wt/x"}`,
			[]hkWant{{Type: "x.claude-code.session.worktree_remove", Data: `{"worktree_path":"/w/.wt/x"}`}}},
		{"Setup", `{"hook_event_name":"Setup",` + s + `,"trigger":"init"}`,
			[]hkWant{{Type: "x.claude-code.session.setup", Data: `{"trigger":"init"}`}}},
		{"UserPromptExpansion", `{"hook_event_name":"UserPromptExpansion",` + s + `,"expansion_type":"slash_command","command_name":"review","prompt":"/review"}`,
			[]hkWant{{Type: "x.claude-code.session.user_prompt_expansion", Data: `{"expansion_type":"slash_command","command_name":"review","prompt":"/review"}`}}},
		{"PostToolBatch", `{"hook_event_name":"PostToolBatch",` + s + `,"tool_calls":[{},{}]}`,
			[]hkWant{{Type: "x.claude-code.session.post_tool_batch", Data: `{"count":2}`}}},
		{"fallback", `{"hook_event_name":"SomeFutureHook",` + s + `}`,
			[]hkWant{{Type: "x.claude-code.session.some_future_hook", Data: `{}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hkCheck(t, hkRun(t, ClaudeCode(), &State{}, tt.in), tt.want)
		})
	}
}

func TestClaudeCodeExtensionLevels(t *testing.T) {
	ds := hkRun(t, ClaudeCode(), &State{},
		`{"hook_event_name":"InstructionsLoaded","session_id":"s1","file_path":"/w/CLAUDE.md","memory_type":"Project","load_reason":"session_start"}`)
	lv := ds[0].Levels
	if lv["memory_type"] != 1 || lv["load_reason"] != 1 || lv["file_path"] != 2 {
		t.Errorf("levels = %v, want structural fields at metadata and the path at redacted", lv)
	}
}

func TestClaudeCodeTurn(t *testing.T) {
	st := &State{}
	const s = `"session_id":"s1"`
	bash := `"tool_name":"Bash","tool_input":{"command":"go test ./..."}`
	got := hkRun(t, ClaudeCode(), st,
		`{"hook_event_name":"UserPromptSubmit",`+s+`,"prompt":"run the tests"}`,
		`{"hook_event_name":"PreToolUse",`+s+`,`+bash+`,"tool_use_id":"toolu_1"}`,
		`{"hook_event_name":"PermissionRequest",`+s+`,`+bash+`}`,
		`{"hook_event_name":"PostToolUseFailure",`+s+`,`+bash+`,"tool_use_id":"toolu_1","error":"FAIL"}`,
		`{"hook_event_name":"Stop",`+s+`}`,
	)
	key := toolAttentionKey("Bash", []byte(`{"command":"go test ./..."}`))
	hkCheck(t, got, []hkWant{
		{Type: "run.started", Run: "n1"},
		{Type: "tool.requested", Subject: "Bash", Run: "n1"},
		{Type: "attention.requested", Subject: "Bash", Run: "n1"},
		// The call ran (and failed): the request was allowed, by whom the
		// hooks do not say.
		{Type: "attention.answered", Run: "n1", Data: `{"answer":{"option":"yes"},"via":"oob"}`, SubjectRef: key},
		{Type: "attention.resolved", Run: "n1", Data: `{"resolution":"answered"}`, SubjectRef: key},
		{Type: "tool.failed", Subject: "Bash", Run: "n1"},
		{Type: "run.finished", Run: "n1"},
	})
	if got[2].Mark != key || got[3].CauseRef != key || got[4].CauseRef != got[3].Mark || got[3].Mark == "" {
		t.Errorf("request Mark %q, answered CauseRef %q / Mark %q, resolved CauseRef %q; want the request %q, then the answer",
			got[2].Mark, got[3].CauseRef, got[3].Mark, got[4].CauseRef, key)
	}
	hkNoPending(t, st)
}

// TestClaudeCodePermissionOutcomes: only a call that ran answers its
// permission request. A request the turn ends on (the dialog's No/Esc
// fires no hook), the auto-mode classifier's PermissionDenied and a call
// PostToolBatch reports refused leave it dismissed; a request naming its
// call is matched by the call id even when the input changed.
func TestClaudeCodePermissionOutcomes(t *testing.T) {
	const s = `"session_id":"s1"`
	bash := func(cmd string) string { return `"tool_name":"Bash","tool_input":{"command":"` + cmd + `"}` }
	tests := []struct {
		name  string
		in    []string
		types []string
		res   []string // the resolutions, in order
	}{
		{"no hook after the dialog: dismissed at the next prompt", []string{
			`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"a","prompt_id":"p1"}`,
			`{"hook_event_name":"PreToolUse",` + s + `,` + bash("rm x") + `,"tool_use_id":"t1"}`,
			`{"hook_event_name":"PermissionRequest",` + s + `,` + bash("rm x") + `}`,
			`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"b","prompt_id":"p2"}`,
		}, []string{"run.started", "tool.requested", "attention.requested", "attention.resolved", "run.cancelled", "run.started"}, []string{"dismissed"}},
		{"classifier deny: dismissed", []string{
			`{"hook_event_name":"PermissionRequest",` + s + `,` + bash("rm x") + `}`,
			`{"hook_event_name":"PermissionDenied",` + s + `,` + bash("rm x") + `,"tool_use_id":"t1"}`,
		}, []string{"attention.requested", "attention.resolved", "tool.denied"}, []string{"dismissed"}},
		{"refused in the batch: dismissed at Stop", []string{
			`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"a"}`,
			`{"hook_event_name":"PreToolUse",` + s + `,` + bash("rm x") + `,"tool_use_id":"t1"}`,
			`{"hook_event_name":"PermissionRequest",` + s + `,` + bash("rm x") + `}`,
			`{"hook_event_name":"PostToolBatch",` + s + `,"tool_calls":[{"tool_name":"Bash","tool_use_id":"t1"}]}`,
			`{"hook_event_name":"Stop",` + s + `}`,
		}, []string{"run.started", "tool.requested", "attention.requested", "tool.denied", "x.claude-code.session.post_tool_batch", "attention.resolved", "run.finished"}, []string{"dismissed"}},
		{"matched by call id although the input changed", []string{
			`{"hook_event_name":"PermissionRequest",` + s + `,` + bash("rm x") + `,"tool_use_id":"t1"}`,
			`{"hook_event_name":"PostToolUse",` + s + `,` + bash("rm -i x") + `,"tool_use_id":"t1","tool_response":{}}`,
		}, []string{"attention.requested", "attention.answered", "attention.resolved", "tool.completed"}, []string{"answered"}},
		{"an unanswered question is no permission: dismissed when its call ends", []string{
			`{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Q?"}]}}`,
			`{"hook_event_name":"PostToolUse",` + s + `,"tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Q?"}]},"tool_use_id":"t1","tool_response":{}}`,
		}, []string{"attention.requested", "attention.resolved", "tool.completed"}, []string{"dismissed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &State{}
			got := hkRun(t, ClaudeCode(), st, tt.in...)
			var types, res []string
			for _, d := range got {
				types = append(types, d.Type)
				if d.Type == "attention.resolved" {
					res = append(res, d.Data["resolution"].(string))
				}
			}
			if strings.Join(types, " ") != strings.Join(tt.types, " ") || strings.Join(res, " ") != strings.Join(tt.res, " ") {
				t.Errorf("got %v resolved %v, want %v resolved %v", types, res, tt.types, tt.res)
			}
			for k := range st.Entries {
				if strings.HasPrefix(k, "attn-") {
					t.Errorf("left open in state: %s", k)
				}
			}
		})
	}
}

func TestClaudeCodeInterruptAndSessionEnd(t *testing.T) {
	st := &State{}
	const s = `"session_id":"s1"`
	got := hkRun(t, ClaudeCode(), st,
		`{"hook_event_name":"UserPromptSubmit",`+s+`,"prompt":"a"}`,
		`{"hook_event_name":"PermissionRequest",`+s+`,"tool_name":"Bash","tool_input":{"command":"make"}}`,
		// Esc: no Stop. The next prompt drains the turn.
		`{"hook_event_name":"UserPromptSubmit",`+s+`,"prompt":"b"}`,
		`{"hook_event_name":"Elicitation",`+s+`,"mcp_server_name":"m","message":"?","requested_schema":{"type":"object","properties":{"x":{"type":"string"}}}}`,
		`{"hook_event_name":"SessionEnd",`+s+`,"reason":"logout"}`,
	)
	hkCheck(t, got, []hkWant{
		{Type: "run.started", Run: "n1"},
		{Type: "attention.requested", Subject: "Bash", Run: "n1"},
		{Type: "attention.resolved", Run: "n1", Data: `{"resolution":"dismissed"}`},
		{Type: "run.cancelled", Run: "n1", Data: `{}`},
		{Type: "run.started", Run: "n3"},
		{Type: "attention.requested", Subject: "m", Run: "n3"},
		{Type: "attention.resolved", Run: "n3", Data: `{"resolution":"dismissed"}`},
		{Type: "run.cancelled", Run: "n3", Data: `{}`},
		{Type: "session.ended", Data: `{"reason":"normal"}`},
	})
	hkNoPending(t, st)
}

// hkNoPending fails when an attention request is still pending in st.
func hkNoPending(t *testing.T, st *State) {
	t.Helper()
	for k := range st.Entries {
		if strings.HasPrefix(k, "attn-") || k == stateRun {
			t.Errorf("left open in state: %s", k)
		}
	}
}

func TestClaudeCodeStopContinuation(t *testing.T) {
	ds := hkRun(t, ClaudeCode(), &State{},
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"a"}`,
		`{"hook_event_name":"Stop","session_id":"s1","stop_hook_active":false}`,
		`{"hook_event_name":"Stop","session_id":"s1","stop_hook_active":true}`,
	)
	// The second terminal names the same run; the emitter suppresses it.
	hkCheck(t, ds, []hkWant{{Type: "run.started", Run: "n1"}, {Type: "run.finished", Run: "n1"}, {Type: "run.finished", Run: "n1"}})
}

func TestClaudeCodeAskUserQuestion(t *testing.T) {
	st := &State{}
	ds := hkRun(t, ClaudeCode(), st,
		`{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which DB?","header":"DB","multiSelect":false,"options":[{"label":"Postgres","description":"d"},{"label":"SQLite"}]}]}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s1","tool_name":"AskUserQuestion","tool_use_id":"t1","tool_input":{"questions":[{"question":"Which DB?","header":"DB","multiSelect":false,"options":[{"label":"Postgres","description":"d"},{"label":"SQLite"}]}],"answers":{"Which DB?":"SQLite"},"annotations":{}},"tool_response":{"answers":{"Which DB?":"SQLite"}}}`,
	)
	hkCheck(t, ds, []hkWant{
		{Type: "attention.requested", Subject: "AskUserQuestion",
			Data: `{"kind":"form","prompt":"claude-code asks 1 question","fields":[{"id":"1","type":"select","label":"DB: Which DB?","required":true,"other":true,"choices":[{"id":"1","label":"Postgres"},{"id":"2","label":"SQLite"}]}],"respond_via":["oob"]}`},
		{Type: "attention.answered", Data: `{"answer":{"values":{"1":"2"}},"via":"oob"}`},
		{Type: "attention.resolved", Data: `{"resolution":"answered"}`},
		{Type: "tool.completed", Subject: "AskUserQuestion"},
	})
	hkJSONEqual(t, ds[0].Meta, `{"prompt":"claude-code asks 1 question","fields":[{"id":"1","type":"select","label":"1","required":true,"other":true,"choices":[{"id":"1","label":"1"},{"id":"2","label":"2"}]}]}`)
}

func TestClaudeCodeElicitationAnswered(t *testing.T) {
	st := &State{}
	const schema = `{"type":"object","properties":{"env":{"type":"string","enum":["stg","prod"],"enumNames":["Staging","Production"],"title":"Env"},"why":{"type":"string"},"n":{"type":"number"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"},{"const":"b"}]}}},"required":["env"]}`
	ds := hkRun(t, ClaudeCode(), st,
		`{"hook_event_name":"Elicitation","session_id":"s1","mcp_server_name":"deploy","elicitation_id":"e1","message":"Configure","requested_schema":`+schema+`}`,
		`{"hook_event_name":"ElicitationResult","session_id":"s1","mcp_server_name":"deploy","elicitation_id":"e1","action":"accept","content":{"env":"prod","why":"hotfix","n":2,"ok":true,"tags":["a","b"]}}`,
		// A second result for the same request is an orphan: nothing.
		`{"hook_event_name":"ElicitationResult","session_id":"s1","mcp_server_name":"deploy","elicitation_id":"e1","action":"accept","content":{}}`,
	)
	key := elicitationKey([]byte(`{"mcp_server_name":"deploy","elicitation_id":"e1"}`))
	hkCheck(t, ds, []hkWant{
		{Type: "attention.requested", Subject: "deploy",
			Data: `{"kind":"form","prompt":"Configure","respond_via":["oob"],"fields":[
				{"id":"env","type":"select","label":"Env","required":true,"choices":[{"id":"stg","label":"Staging"},{"id":"prod","label":"Production"}]},
				{"id":"why","type":"string","label":"why","required":false},
				{"id":"n","type":"number","label":"n","required":false},
				{"id":"ok","type":"boolean","label":"ok","required":false},
				{"id":"tags","type":"select","label":"tags","required":false,"multi":true,"choices":[{"id":"a","label":"A"},{"id":"b","label":"b"}]}]}`},
		{Type: "attention.answered", SubjectRef: key,
			Data: `{"answer":{"values":{"env":"prod","why":"hotfix","n":2,"ok":true,"tags":["a","b"]}},"via":"oob"}`},
		{Type: "attention.resolved", SubjectRef: key, Data: `{"resolution":"answered"}`},
	})
	hkJSONEqual(t, ds[0].Meta["prompt"], `"claude-code requests input (5 fields)"`)
	hkJSONEqual(t, ds[1].Meta, `{"answer":{"values":{"env":"prod","n":2,"ok":true,"tags":["a","b"]}}}`)
	if ds[2].CauseRef != ds[1].Mark || ds[1].Mark == "" {
		t.Errorf("resolved cause %q, answered mark %q", ds[2].CauseRef, ds[1].Mark)
	}
}

func TestClaudeCodeElicitationDeclined(t *testing.T) {
	ds := hkRun(t, ClaudeCode(), &State{},
		`{"hook_event_name":"Elicitation","session_id":"s1","mcp_server_name":"m","message":"?","requested_schema":{"type":"object","properties":{}}}`,
		`{"hook_event_name":"ElicitationResult","session_id":"s1","mcp_server_name":"m","action":"decline"}`,
	)
	hkCheck(t, ds, []hkWant{
		{Type: "attention.requested", Subject: "m", Data: `{"kind":"form","prompt":"?","fields":[],"respond_via":["oob"]}`},
		{Type: "attention.resolved", Data: `{"resolution":"dismissed"}`},
	})
}

func TestClaudeCodeReplyIsEmpty(t *testing.T) {
	for _, h := range []string{"PermissionRequest", "PreToolUse", "Stop", "UserPromptSubmit", "SessionStart", "Elicitation", "WorktreeCreate"} {
		if b := ClaudeCode().Reply(h); len(b) != 0 {
			t.Errorf("Reply(%s) = %q, want empty", h, b)
		}
	}
}

func TestPermissionPrompt(t *testing.T) {
	tests := []struct{ tool, in, want string }{
		{"shell", `{"command":["bash","-lc","ls"]}`, "Permission requested: shell — bash -lc ls"},
		{"WebFetch", `{"url":"https://example.com","prompt":"x"}`, "Permission requested: WebFetch — https://example.com"},
		{"Task", `{"description":"explore"}`, "Permission requested: Task — explore"},
		{"Odd", `null`, "Permission requested: Odd"},
	}
	for _, tt := range tests {
		if got := permissionPrompt(tt.tool, []byte(tt.in)); got != tt.want {
			t.Errorf("permissionPrompt(%s, %s) = %q, want %q", tt.tool, tt.in, got, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo", 2); got != "h…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("abc", 5); got != "abc" {
		t.Errorf("clip = %q", got)
	}
}

func FuzzClaudeCodeMap(f *testing.F) {
	f.Add(`{"hook_event_name":"Elicitation","mcp_server_name":"m","requested_schema":{"properties":{"a":{"enum":[1,{"x":2}],"enumNames":[null]},"b":{"type":"array","items":{"oneOf":[{"const":null}]}}}}}`)
	f.Add(`{"hook_event_name":"ElicitationResult","mcp_server_name":"m","action":"accept","content":[1]}`)
	f.Add(`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"options":"x"},7]}}`)
	f.Add(`{"questions":[]}`)
	f.Add(`{"hook_event_name":"SessionEnd"}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, raw string) {
		st := &State{}
		for _, h := range []string{"", "UserPromptSubmit", "Elicitation", "ElicitationResult", "SessionEnd"} {
			if _, err := ClaudeCode().Map(Moment{Hook: h, Raw: []byte(raw), Nonce: "n"}, st); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestClaudeCodeQueuedTurn: a prompt queued into a running turn stays in
// it; once Esc interrupts, the queued prompt runs as its own turn, whose
// moments carry a new prompt_id with no UserPromptSubmit of their own.
func TestClaudeCodeQueuedTurn(t *testing.T) {
	st := &State{}
	got := hkRun(t, ClaudeCode(), st,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt_id":"p1","prompt":"first"}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt_id":"p1","prompt":"queued"}`,
		`{"hook_event_name":"PreToolUse","session_id":"s1","prompt_id":"p2","tool_name":"Bash","tool_use_id":"c1","tool_input":{"command":"echo"}}`,
		`{"hook_event_name":"PostToolUse","session_id":"s1","prompt_id":"p2","tool_name":"Bash","tool_use_id":"c1","tool_input":{"command":"echo"},"tool_response":"ok"}`,
		`{"hook_event_name":"Stop","session_id":"s1","prompt_id":"p2"}`,
		`{"hook_event_name":"Stop","session_id":"s1","prompt_id":"p2"}`,
		`{"hook_event_name":"SessionEnd","session_id":"s1","prompt_id":"p3","reason":"prompt_input_exit"}`,
	)
	hkCheck(t, got, []hkWant{
		{Type: "run.started", Run: "p1"},
		{Type: "x.claude-code.run.prompt_queued", Run: "p1"},
		{Type: "run.cancelled", Run: "p1", Data: `{}`},
		{Type: "run.started", Run: "p2", Data: `{"trigger":"user"}`},
		{Type: "tool.requested", Subject: "Bash", Run: "p2"},
		{Type: "tool.completed", Subject: "Bash", Run: "p2"},
		{Type: "run.finished", Run: "p2"},
		{Type: "run.finished", Run: "p2"},
		{Type: "session.ended", Data: `{"reason":"normal"}`},
	})
}
