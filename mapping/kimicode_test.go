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
			// The outcome rides the run of its request, even after the run ended.
			{`{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_call_id":"c1","error":{"name":"AbortError","message":"aborted"}}`, "n5", []Draft{
				{Type: "tool.failed", Subject: "Bash", Run: "n1", Data: map[string]any{
					"tool": map[string]any{"name": "Bash", "call_id": "c1"}, "error": map[string]any{"type": "AbortError", "message": "aborted"}}}}},
		}},
		{"the interrupt names its turn: a queued turn that started first goes on", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"slow"}`, "n1", []Draft{
				{Type: "run.started", Run: "n1", Data: map[string]any{"trigger": "user", "prompt": "slow"}}}},
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":0,"origin_kind":"user"}`, "n2", nil},
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":"queued"}`, "n3", []Draft{
				{Type: "run.started", Run: "n3", Data: map[string]any{"trigger": "user", "prompt": "queued"}}}},
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":1,"origin_kind":"user"}`, "n4", nil},
			{`{"hook_event_name":"Interrupt",` + s + `,"turn_id":0,"reason":"cancelled"}`, "n5", []Draft{
				{Type: "run.cancelled", Run: "n1", Data: map[string]any{"by": "user"}}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n6", []Draft{{Type: "run.finished", Run: "n3"}}},
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
				{Type: "delegation.subagent.started", Subject: "explore", Data: map[string]any{"child": map[string]any{"agent": "explore"}}}}},
			{`{"hook_event_name":"SubagentStop","agent_name":"explore","response":"r"}`, "n5", []Draft{
				{Type: "delegation.subagent.stopped", Subject: "explore", Data: map[string]any{"child": map[string]any{"agent": "explore"}}}}},
		}},
		// The shapes below are Kimi Code 2.1.0's, as recorded.
		{"K2: a foreground subagent's Stop stays inside the parent's run", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":[{"type":"text","text":"go"}],"is_steer":false}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":0,"origin_kind":"user","prompt":"go"}`, "n2", nil},
			{`{"hook_event_name":"PreToolUse",` + s + `,"tool_name":"Agent","tool_input":{"prompt":"p","subagent_type":"coder"},"tool_call_id":"a1"}`, "n3", []Draft{{Type: "tool.requested", Subject: "Agent", Run: "n1"}}},
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":0,"origin_kind":"system_trigger","origin_name":"subagent","prompt":"p"}`, "n4", nil},
			{`{"hook_event_name":"SubagentStart",` + s + `,"agent_name":"coder","prompt":"p"}`, "n5", []Draft{{Type: "delegation.subagent.started", Subject: "coder", Run: "n1"}}},
			{`{"hook_event_name":"PreToolUse",` + s + `,"tool_name":"Bash","tool_input":{"command":"pwd"},"tool_call_id":"b1"}`, "n6", []Draft{{Type: "tool.requested", Subject: "Bash", Run: "n1"}}},
			{`{"hook_event_name":"Stop",` + s + `,"stop_hook_active":false}`, "n7", nil},
			{`{"hook_event_name":"SubagentStop",` + s + `,"agent_name":"coder","response":"r"}`, "n8", []Draft{{Type: "delegation.subagent.stopped", Subject: "coder", Run: "n1"}}},
			{`{"hook_event_name":"PostToolUse",` + s + `,"tool_name":"Agent","tool_call_id":"a1","tool_output":"done"}`, "n9", []Draft{{Type: "tool.completed", Subject: "Agent", Run: "n1"}}},
			{`{"hook_event_name":"Stop",` + s + `,"stop_hook_active":false}`, "n10", []Draft{{Type: "run.finished", Run: "n1"}}},
		}},
		{"K2: a background subagent outlives its parent's turn", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":[{"type":"text","text":"go"}]}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"PreToolUse",` + s + `,"tool_name":"Agent","tool_input":{"prompt":"p","run_in_background":true},"tool_call_id":"a1"}`, "n2", []Draft{{Type: "tool.requested", Subject: "Agent", Run: "n1"}}},
			{`{"hook_event_name":"SubagentStart",` + s + `,"agent_name":"coder"}`, "n3", []Draft{{Type: "delegation.subagent.started", Subject: "coder", Run: "n1"}}},
			{`{"hook_event_name":"TaskStarted",` + s + `,"task_id":"agent-1","kind":"agent","description":"bg agent","status":"running","detached":true}`, "n4", []Draft{
				{Type: "x.kimi-code.session.task_started", Run: "n1", Data: map[string]any{"task_id": "agent-1", "kind": "agent", "detached": true, "description": "bg agent"}}}},
			{`{"hook_event_name":"PostToolUse",` + s + `,"tool_name":"Agent","tool_call_id":"a1","tool_output":"running"}`, "n5", []Draft{{Type: "tool.completed", Subject: "Agent", Run: "n1"}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n6", []Draft{{Type: "run.finished", Run: "n1"}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n7", nil},
			{`{"hook_event_name":"SubagentStop",` + s + `,"agent_name":"coder"}`, "n8", []Draft{{Type: "delegation.subagent.stopped", Subject: "coder"}}},
			// K3: the finished task starts a turn of its own.
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":1,"origin_kind":"task"}`, "n9", []Draft{{Type: "run.started", Run: "n9", Data: map[string]any{"trigger": "agent"}}}},
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"task.completed","title":"Background agent completed","severity":"info"}`, "n10", []Draft{{Type: "progress.status", Subject: "task.completed", Run: "n9"}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n11", []Draft{{Type: "run.finished", Run: "n9"}}},
		}},
		{"K3: a queued prompt's turn gets its own run", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":[{"type":"text","text":"one"}]}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":0,"origin_kind":"user","prompt":"one"}`, "n2", nil},
			{`{"hook_event_name":"UserPromptQueued",` + s + `,"prompt_id":"p2","prompt":[{"type":"text","text":"two"}],"queue_length":1}`, "n3", []Draft{
				{Type: "x.kimi-code.run.prompt_queued", Run: "n1", Data: map[string]any{"prompt": "two", "queue_length": 1}}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n4", []Draft{{Type: "run.finished", Run: "n1"}}},
			{`{"hook_event_name":"TurnStarted",` + s + `,"turn_id":1,"origin_kind":"user","prompt":"two"}`, "n5", []Draft{{Type: "run.started", Run: "n5", Data: map[string]any{"trigger": "user", "prompt": "two"}}}},
			{`{"hook_event_name":"Stop",` + s + `}`, "n6", []Draft{{Type: "run.finished", Run: "n5"}}},
		}},
		{"K4: 2.1.0 approval and failure shapes", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit",` + s + `,"prompt":[{"type":"text","text":"x"}]}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"PreToolUse",` + s + `,"tool_name":"Bash","tool_input":{"command":"rm x"},"tool_call_id":"c1"}`, "n2", []Draft{{Type: "tool.requested", Subject: "Bash", Run: "n1"}}},
			{`{"hook_event_name":"PermissionRequest",` + s + `,"id":"approval_1","agent_id":"main","turn_id":0,"tool_call_id":"c1","tool_name":"Bash","action":"Running: rm x","display":{"kind":"command","command":"rm x"},"tool_input":{"command":"rm x"}}`, "n3", []Draft{
				{Type: "attention.requested", Subject: "Bash", Run: "n1", Mark: "attn:c1", CauseRef: "tool:c1", Data: map[string]any{"kind": "permission", "prompt": "Running: rm x", "respond_via": []any{"oob"}}}}},
			{`{"hook_event_name":"PermissionResult",` + s + `,"id":"approval_1","agent_id":"main","tool_call_id":"c1","tool_name":"Bash","action":"Running: rm x","decision":"rejected"}`, "n4", []Draft{
				{Type: "attention.answered", Run: "n1", SubjectRef: "attn:c1", CauseRef: "attn:c1", Mark: "attn:c1:answer", Data: map[string]any{"answer": map[string]any{"option": "rejected"}, "via": "oob"}},
				{Type: "tool.denied", Subject: "Bash", Run: "n1", CauseRef: "attn:c1:answer"},
				{Type: "attention.resolved", Run: "n1", SubjectRef: "attn:c1", CauseRef: "attn:c1:answer"}}},
			// The rejected call's failure repeats the denial: dropped.
			{`{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_call_id":"c1","error":{"code":"internal","message":"Tool \"Bash\" was not run because the user rejected the approval request.","retryable":false}}`, "n5", nil},
			{`{"hook_event_name":"PostToolUseFailure",` + s + `,"tool_name":"Bash","tool_call_id":"c2","error":{"code":"internal","message":"exit code: 2","retryable":false}}`, "n6", []Draft{
				{Type: "tool.failed", Subject: "Bash", Run: "n1", Data: map[string]any{"tool": map[string]any{"name": "Bash", "call_id": "c2"}, "error": map[string]any{"type": "internal", "message": "exit code: 2"}}}}},
			{`{"hook_event_name":"Interrupt",` + s + `,"turn_id":0,"reason":"cancelled"}`, "n7", []Draft{{Type: "run.cancelled", Run: "n1", Data: map[string]any{"by": "user"}}}},
			{`{"hook_event_name":"SessionHeartbeat",` + s + `}`, "n8", []Draft{{Type: "x.kimi-code.session.session_heartbeat"}}},
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

// TestKimiCodeResume: `kimi -S <id>` fires SessionStart{source: resume} with
// the same session id; the resumed part is a new AEP session linked to the
// one it continues (resume.go), not a second session.started.
func TestKimiCodeResume(t *testing.T) {
	st := &State{}
	v := KimiCode()
	ds, _ := v.Map(Moment{Raw: []byte(`{"hook_event_name":"SessionStart","session_id":"k1","source":"startup"}`), Nonce: "n1"}, st)
	if len(ds) != 1 || ds[0].Session != "" {
		t.Fatalf("startup: %+v", ds)
	}
	ds, _ = v.Map(Moment{Raw: []byte(`{"hook_event_name":"SessionStart","session_id":"k1","source":"resume"}`), Nonce: "n2"}, st)
	if len(ds) != 1 || ds[0].Type != "session.started" || ds[0].Session != "k1~rn2" ||
		ds[0].Data["trigger"] != "resume" || ds[0].Data["resumed_from"] != "k1" {
		t.Fatalf("resume: %+v", ds)
	}
	ds, _ = v.Map(Moment{Raw: []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"k1","prompt":"go"}`), Nonce: "n3"}, st)
	if len(ds) != 1 || ds[0].Type != "run.started" || ds[0].Session != "k1~rn2" {
		t.Fatalf("after resume: %+v", ds)
	}
}
