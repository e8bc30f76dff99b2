package mapping

import "testing"

func TestKimiCodeMap(t *testing.T) {
	const s = `"session_id":"k1"`
	tests := []struct {
		name  string
		steps []fleetStep
	}{
		{"interrupt cancels the run, a late stop names it", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"cwd":"/p","prompt":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}`, "n1", []Draft{
				{Type: "run.started", Run: "n1", Data: map[string]any{"trigger": "user", "prompt": "a\nb"}}}},
			{`{"hook_event_name":"PreToolUse",` + s + `,"tool_name":"Bash","tool_input":{"command":"ls"},"tool_call_id":"c1"}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "Bash", Run: "n1"}}},
			{`{"hook_event_name":"Interrupt",` + s + `,"turn_id":"t9","reason":"cancelled"}`, "n3", []Draft{
				{Type: "run.cancelled", Run: "n1", Data: map[string]any{"by": "user"}}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n4", []Draft{{Type: "run.finished", Run: "n1"}}},
			{`{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_call_id":"c1","error":{"name":"AbortError","message":"aborted"}}`, "n5", []Draft{
				{Type: "tool.failed", Subject: "Bash", Data: map[string]any{
					"tool": map[string]any{"name": "Bash", "call_id": "c1"}, "error": map[string]any{"type": "AbortError", "message": "aborted"}}}}},
		}},
		{"stale run drained, steer never opens a run", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"plain"}`, "n1", []Draft{
				{Type: "run.started", Run: "n1", Data: map[string]any{"trigger": "user", "prompt": "plain"}}}},
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":[{"type":"text","text":"also"}],"is_steer":true}`, "n2", []Draft{
				{Type: "x.kimi-code.run.steer_submitted", Run: "n1", Data: map[string]any{"prompt": "also"}}}},
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":[]}`, "n3", []Draft{
				{Type: "run.cancelled", Run: "n1", Data: map[string]any{}},
				{Type: "run.started", Run: "n3", Data: map[string]any{"trigger": "user"}}}},
			{`{"hook_event_name":"StopFailure",` + s + `,"error_type":"ProviderError","error_message":"500"}`, "n4", []Draft{
				{Type: "run.failed", Run: "n3", Data: map[string]any{"reason": "ProviderError", "error": map[string]any{"type": "ProviderError", "message": "500"}}}}},
			{`{"hook_event_name":"UserPromptSubmit",` + s + `}`, "n5", []Draft{{Type: "run.started", Run: "n5"}}},
			{`{"hook_event_name":"SessionEnd",` + s + `,"reason":"exit"}`, "n6", []Draft{
				{Type: "run.cancelled", Run: "n5"}, {Type: "session.ended", Data: map[string]any{"reason": "normal"}}}},
		}},
		{"permission pair observed out of band", []fleetStep{
			{`{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"Bash","tool_call_id":"c3","display":"Run it?","turn_id":"t1"}`, "n1", []Draft{
				{Type: "attention.requested", Subject: "Bash", Mark: "attn:c3", CauseRef: "tool:c3", Data: map[string]any{
					"kind": "permission", "prompt": "Run it?", "respond_via": []any{"oob"}}}}},
			{`{"hook_event_name":"PermissionResult",` + s + `,"tool_name":"Bash","tool_call_id":"c3","decision":"rejected","feedback":"no"}`, "n2", []Draft{
				{Type: "attention.answered", SubjectRef: "attn:c3", CauseRef: "attn:c3", Mark: "attn:c3:answer", Data: map[string]any{
					"answer": map[string]any{"option": "rejected", "text": "no"}, "via": "oob"}},
				{Type: "tool.denied", Subject: "Bash", CauseRef: "attn:c3:answer", Data: map[string]any{
					"tool": map[string]any{"name": "Bash", "call_id": "c3"}, "by": "runtime"}},
				{Type: "attention.resolved", SubjectRef: "attn:c3", CauseRef: "attn:c3:answer", Data: map[string]any{"resolution": "answered"}}}},
			{`{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"Write","tool_call_id":"c4"}`, "n3", []Draft{
				{Type: "attention.requested", Subject: "Write", Mark: "attn:c4", CauseRef: "tool:c4", Data: map[string]any{
					"kind": "permission", "prompt": "Permission requested: Write", "respond_via": []any{"oob"}}}}},
			{`{"hook_event_name":"PermissionResult",` + s + `,"tool_name":"Write","tool_call_id":"c4","decision":"approved","selected_label":"Approve once"}`, "n4", []Draft{
				{Type: "attention.answered", SubjectRef: "attn:c4", CauseRef: "attn:c4", Mark: "attn:c4:answer", Data: map[string]any{
					"answer": map[string]any{"option": "approved"}, "via": "oob", "label": "Approve once"}},
				{Type: "attention.resolved", SubjectRef: "attn:c4", CauseRef: "attn:c4:answer"}}},
			{`{"hook_event_name":"PermissionRequest",` + s + `,"tool_name":"Bash","tool_call_id":"c5"}`, "n5", []Draft{
				{Type: "attention.requested", Subject: "Bash", Mark: "attn:c5", CauseRef: "tool:c5"}}},
			{`{"hook_event_name":"PermissionResult",` + s + `,"tool_name":"Bash","tool_call_id":"c5","decision":"cancelled"}`, "n6", []Draft{
				{Type: "attention.resolved", SubjectRef: "attn:c5", CauseRef: "attn:c5", Data: map[string]any{"resolution": "dismissed"}}}},
			{`{"hook_event_name":"PermissionResult",` + s + `,"tool_name":"Bash","tool_call_id":"c6","decision":"error","error":"x"}`, "n7", []Draft{
				{Type: "x.kimi-code.session.permission_result", Data: map[string]any{}}}},
			{`{"hook_event_name":"PermissionResult",` + s + `,"tool_name":"Bash","tool_call_id":"c9","decision":"rejected"}`, "n8", []Draft{
				{Type: "attention.answered", SubjectRef: "attn:c9", CauseRef: "attn:c9", Mark: "attn:c9:answer"}}},
		}},
		{"compaction, notification, subagents", []fleetStep{
			{`{"hook_event_name":"PreCompact",` + s + `,"trigger":"manual","token_count":12}`, "n1", []Draft{
				{Type: "x.kimi-code.session.pre_compact", Data: map[string]any{"trigger": "manual", "token_count": 12}}}},
			{`{"hook_event_name":"PostCompact",` + s + `,"trigger":"manual","estimated_token_count":3}`, "n2", []Draft{
				{Type: "session.compacted", Data: map[string]any{"trigger": "manual", "estimated_token_count": 3}}}},
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"task.failed","title":"T","body":"B","severity":"warning"}`, "n3", []Draft{
				{Type: "progress.status", Subject: "task.failed", Severity: "warning", Data: map[string]any{"severity": "warning", "message": "T"}}}},
			{`{"hook_event_name":"SubagentStart","agent_name":"explore","prompt":"p"}`, "n4", []Draft{
				{Type: "delegation.subagent.started", Subject: "explore", Data: map[string]any{}}}},
			{`{"hook_event_name":"SubagentStop","agent_name":"explore","response":"r"}`, "n5", []Draft{
				{Type: "delegation.subagent.stopped", Subject: "explore", Data: map[string]any{}}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { fleetRun(t, KimiCode(), tc.steps) })
	}
}

// TestKimiCodeReplyIsEmpty: Kimi Code 2.1.0 turns any hook stdout that is not
// JSON with a "message" (even "{}") into a user message to the model, so the
// neutral reply is no bytes at all, on every event it fires.
func TestKimiCodeReplyIsEmpty(t *testing.T) {
	for _, h := range []string{"SessionStart", "SessionEnd", "UserPromptSubmit", "UserPromptQueued",
		"TurnStarted", "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
		"PermissionResult", "Stop", "StopFailure", "Interrupt", "SubagentStart", "SubagentStop",
		"PreCompact", "PostCompact", "Notification", "SessionHeartbeat", "TaskStarted", ""} {
		if b := KimiCode().Reply(h); len(b) != 0 {
			t.Errorf("Reply(%s) = %q, want empty", h, b)
		}
	}
}
