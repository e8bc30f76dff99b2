package mapping

import "testing"

func TestQwenMap(t *testing.T) {
	const s = `"session_id":"q1"`
	const bash = `"tool_name":"Bash","tool_input":{"command":"rm -rf build"}`
	tests := []struct {
		name  string
		steps []fleetStep
	}{
		{"a turn with the permission card and its settlement", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"clean"}`, "n1", []Draft{
				{Type: "run.started", Run: "n1", Data: map[string]any{"trigger": "user", "prompt": "clean"}}}},
			{`{"hook_event_name":"PreToolUse",` + s + `,` + bash + `,"tool_use_id":"t1"}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "Bash", Run: "n1"}}},
			{`{"hook_event_name":"PermissionRequest",` + s + `,` + bash + `}`, "n3", []Draft{
				{Type: "attention.requested", Subject: "Bash", Run: "n1", Mark: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					Data: map[string]any{"kind": "permission", "prompt": "Permission requested: Bash — rm -rf build",
						"options": qwenMenu([]byte(`{"tool_name":"Bash"}`)).options, "respond_via": []any{"oob"}}}}},
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"permission_prompt","message":"Bash wants"}`, "n4", nil},
			{`{"hook_event_name":"PostToolUse",` + s + `,` + bash + `,"tool_use_id":"t1","tool_response":{"output":""}}`, "n5", []Draft{
				{Type: "attention.answered", Run: "n1", SubjectRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					CauseRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					Mark:     toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)) + ":answered",
					Data:     map[string]any{"answer": map[string]any{}, "via": "oob"}},
				{Type: "attention.resolved", Run: "n1", SubjectRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					CauseRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)) + ":answered", Data: map[string]any{"resolution": "answered"}},
				{Type: "tool.completed", Subject: "Bash", Run: "n1"}}},
			{`{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_use_id":"t2","error":"killed","is_interrupt":true}`, "n6", []Draft{
				{Type: "tool.failed", Subject: "Bash", Run: "n1", Data: map[string]any{
					"tool": map[string]any{"name": "Bash", "call_id": "t2"}, "error": map[string]any{"type": "interrupt", "message": "killed"}}}}},
			{`{"hook_event_name":"Stop",` + s + `,"input_tokens":5,"output_tokens":7}`, "n7", []Draft{
				{Type: "run.finished", Run: "n1", Data: map[string]any{"gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 7}}}},
		}},
		{"todos once at postWrite, compaction once at post", []fleetStep{
			{`{"hook_event_name":"TodoCreated",` + s + `,"todo_id":"a","todo_content":"x","phase":"validation"}`, "n1", nil},
			{`{"hook_event_name":"TodoCreated",` + s + `,"todo_id":"a","todo_content":"x","phase":"postWrite","all_todos":[1]}`, "n2", []Draft{
				{Type: "progress.task.planned", Subject: "a", Data: map[string]any{"task": map[string]any{"title": "x"}}}}},
			{`{"hook_event_name":"TodoCompleted",` + s + `,"todo_id":"a"}`, "n3", []Draft{
				{Type: "progress.task.completed", Subject: "a", Data: map[string]any{}}}},
			{`{"hook_event_name":"PreCompact",` + s + `,"trigger":"manual"}`, "n4", nil},
			{`{"hook_event_name":"PostCompact",` + s + `,"trigger":"manual","compact_summary":"s"}`, "n5", []Draft{
				{Type: "session.compacted", Data: map[string]any{"trigger": "manual"}}}},
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"idle_prompt","message":"idle"}`, "n6", []Draft{
				{Type: "progress.status", Subject: "idle_prompt", Data: map[string]any{"message": "idle"}}}},
		}},
		{"stale turn drained, failure and session end", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"Edit","tool_input":{"file_path":"/a"}}`, "n2", []Draft{
				{Type: "attention.requested", Subject: "Edit", Run: "n1", Mark: toolAttentionKey("Edit", []byte(`{"file_path":"/a"}`))}}},
			{`{"hook_event_name":"UserPromptSubmit",` + s + `}`, "n3", []Draft{
				{Type: "attention.resolved", Run: "n1", SubjectRef: toolAttentionKey("Edit", []byte(`{"file_path":"/a"}`)),
					CauseRef: toolAttentionKey("Edit", []byte(`{"file_path":"/a"}`))},
				{Type: "run.cancelled", Run: "n1", Data: map[string]any{}},
				{Type: "run.started", Run: "n3"}}},
			{`{"hook_event_name":"StopFailure",` + s + `,"error":"rate_limit","error_details":"60s"}`, "n4", []Draft{
				{Type: "run.failed", Run: "n3", Data: map[string]any{"reason": "rate_limit", "error": map[string]any{"message": "60s"}}}}},
			{`{"hook_event_name":"StopFailure",` + s + `}`, "n5", []Draft{
				{Type: "run.failed", Run: "n3", Data: map[string]any{"reason": "unknown"}}}},
			{`{"hook_event_name":"SessionEnd",` + s + `,"reason":"clear"}`, "n6", []Draft{
				{Type: "session.ended", Data: map[string]any{"reason": "normal"}}}},
			{`{"hook_event_name":"MessageDisplay",` + s + `,"text":"hi"}`, "n7", []Draft{
				{Type: "x.qwen-code.session.message_display", Data: map[string]any{}}}},
		}},
		{"a card refused in Qwen's dialog is answered cancel (its No), and a call that never started is recorded", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt_id":"p1","prompt":"go"}`, "n1", []Draft{{Type: "run.started", Run: "p1"}}},
			{`{"hook_event_name":"PermissionRequest",` + s + `,"prompt_id":"p1",` + bash + `}`, "n2", []Draft{
				{Type: "attention.requested", Subject: "Bash", Run: "p1", Mark: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`))}}},
			{`{"hook_event_name":"PostToolBatch",` + s + `,"tool_calls":[{` + bash + `,"tool_use_id":"c3","status":"cancelled","tool_response":{"response_parts":[{"functionResponse":{"response":{"error":"[Operation Cancelled] Reason: User did not allow tool call"}}}],"execution_status":"not_started"}},` +
				`{"tool_name":"read_file","tool_input":{"path":"x"},"tool_use_id":"c4","status":"error","tool_response":{"error":"params must have required property 'file_path'","error_type":"invalid_tool_params","execution_status":"not_started"}}]}`, "n3", []Draft{
				{Type: "tool.requested", Subject: "Bash", Run: "p1", Data: map[string]any{
					"tool": map[string]any{"name": "Bash", "call_id": "c3"}, "args_digest": "ad1686665270a1d1d4adc01580820582", "args": map[string]any{"command": "rm -rf build"}}},
				{Type: "attention.answered", Run: "p1", SubjectRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					CauseRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					Mark:     toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)) + ":answered",
					Data:     map[string]any{"answer": map[string]any{"option": "cancel"}, "via": "oob"}},
				{Type: "attention.resolved", Run: "p1", SubjectRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)),
					CauseRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)) + ":answered", Data: map[string]any{"resolution": "answered"}},
				{Type: "tool.denied", Subject: "Bash", Run: "p1", CauseRef: toolAttentionKey("Bash", []byte(`{"command":"rm -rf build"}`)) + ":answered",
					Data: map[string]any{"tool": map[string]any{"name": "Bash", "call_id": "c3"}, "by": "user_setting"}},
				{Type: "tool.requested", Subject: "read_file", Run: "p1"},
				{Type: "tool.failed", Subject: "read_file", Run: "p1", Data: map[string]any{
					"tool": map[string]any{"name": "read_file", "call_id": "c4"}, "error": map[string]any{"type": "invalid_tool_params", "message": "params must have required property 'file_path'"}}},
				{Type: "x.qwen-code.session.post_tool_batch", Run: "p1"}}},
			// A cancelled call with no card pending is not taken for a refusal.
			{`{"hook_event_name":"PostToolBatch",` + s + `,"tool_calls":[{` + bash + `,"tool_use_id":"c5","status":"cancelled","tool_response":{"execution_status":"not_started"}}]}`, "n4", []Draft{
				{Type: "x.qwen-code.session.post_tool_batch", Run: "p1"}}},
		}},
		{"the turns Qwen runs by itself for background subagents", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt_id":"p1","prompt":"go"}`, "n1", []Draft{{Type: "run.started", Run: "p1"}}},
			{`{"hook_event_name":"Stop",` + s + `,"prompt_id":"p1"}`, "n2", []Draft{{Type: "run.finished", Run: "p1"}}},
			// A subagent's moments are its own, not a turn of the session's.
			{`{"hook_event_name":"PreToolUse",` + s + `,"prompt_id":"p1","agent_id":"a1","tool_name":"Bash","tool_use_id":"t1"}`, "n3", []Draft{
				{Type: "run.started", Run: "a1", Data: map[string]any{"trigger": "agent"}}, {Type: "tool.requested", Subject: "Bash", Run: "a1"}}},
			{`{"hook_event_name":"Stop",` + s + `,"prompt_id":"p1"}`, "n4", []Draft{
				{Type: "run.started", Run: "n4", Data: map[string]any{"trigger": "agent"}}, {Type: "run.finished", Run: "n4"}}},
			{`{"hook_event_name":"PreToolUse",` + s + `,"prompt_id":"p1","tool_name":"Bash","tool_use_id":"t2"}`, "n5", []Draft{
				{Type: "run.started", Run: "n5", Data: map[string]any{"trigger": "agent"}}, {Type: "tool.requested", Subject: "Bash", Run: "n5"}}},
			{`{"hook_event_name":"Stop",` + s + `,"prompt_id":"p1"}`, "n6", []Draft{{Type: "run.finished", Run: "n5"}}},
			// Another turn's id, or a failed turn's, opens nothing.
			{`{"hook_event_name":"Stop",` + s + `,"prompt_id":"p9"}`, "n7", []Draft{{Type: "run.finished", Run: "n5"}}},
		}},
		{"a resumed process begins its session when it loads its instructions", []fleetStep{
			{`{"hook_event_name":"InstructionsLoaded",` + s + `,"load_reason":"session_start"}`, "n1", []Draft{
				{Type: "x.qwen-code.session.instructions_loaded"}}},
			{`{"hook_event_name":"SessionStart",` + s + `,"source":"startup"}`, "n2", []Draft{{Type: "session.started"}}},
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt_id":"p1","prompt":"go"}`, "n3", []Draft{{Type: "run.started", Run: "p1"}}},
			// The API failed; headless Qwen said nothing. A new process:
			{`{"hook_event_name":"InstructionsLoaded",` + s + `,"load_reason":"session_start"}`, "n4", []Draft{
				{Type: "run.cancelled", Run: "p1", Session: "q1", Data: map[string]any{}},
				{Type: "x.qwen-code.session.instructions_loaded", Session: "q1~rn4"}}},
			{`{"hook_event_name":"InstructionsLoaded",` + s + `,"load_reason":"session_start"}`, "n5", []Draft{
				{Type: "x.qwen-code.session.instructions_loaded", Session: "q1~rn4"}}},
			{`{"hook_event_name":"SessionStart",` + s + `,"source":"resume"}`, "n6", []Draft{
				{Type: "session.started", Session: "q1~rn4", Data: map[string]any{"client": map[string]any{"name": "qwen-code"}, "trigger": "resume", "resumed_from": "q1"}}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { fleetRun(t, Qwen(), tc.steps) })
	}
}
