package mapping

import "testing"

func TestGeminiMap(t *testing.T) {
	const s = `"session_id":"s1"`
	tests := []struct {
		name  string
		steps []fleetStep
	}{
		{"run synthesized and closed", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `,"prompt":"go"}`, "n1", []Draft{
				{Type: "run.started", Run: "n1", Data: map[string]any{"trigger": "user", "prompt": "go"}}}},
			{`{"hook_event_name":"BeforeModel",` + s + `,"llm_request":{"model":"m"}}`, "n2", []Draft{
				{Type: "x.gemini-cli.session.before_model", Run: "n1", Data: map[string]any{"model": "m"}}}},
			{`{"hook_event_name":"AfterModel",` + s + `,"llm_request":{"model":"m"}}`, "n3", []Draft{
				{Type: "x.gemini-cli.session.after_model", Run: "n1", Severity: "debug", Data: map[string]any{"model": "m"}}}},
			{`{"hook_event_name":"AfterAgent",` + s + `,"prompt_response":"done"}`, "n4", []Draft{
				{Type: "run.finished", Run: "n1", Data: map[string]any{}}}},
			{`{"hook_event_name":"AfterAgent",` + s + `,"stop_hook_active":true}`, "n5", []Draft{
				{Type: "run.finished", Run: "n1", Data: map[string]any{}}}}, // the emitter suppresses it
			{`{"hook_event_name":"PreCompress",` + s + `,"trigger":"manual"}`, "n6", []Draft{
				{Type: "session.compacted", Data: map[string]any{"trigger": "manual"}}}},
		}},
		{"a run with no AfterAgent is closed when a later moment proves it over", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n2", []Draft{
				{Type: "run.cancelled", Run: "n1", Data: map[string]any{}}, {Type: "run.started", Run: "n2"}}},
			{`{"hook_event_name":"SessionEnd",` + s + `,"reason":"logout"}`, "n3", []Draft{
				{Type: "run.cancelled", Run: "n2", Data: map[string]any{}},
				// The turn never reported its end: "logout" does not say
				// the segment ended normally.
				{Type: "session.ended", Data: map[string]any{}}}},
		}},
		{"Esc while a command runs: its AfterTool says cancelled", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"sleep 9"}}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "run_shell_command", Run: "n1", Mark: "pair:n2"}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"sleep 9"},"tool_response":{"llmContent":"Command was cancelled by user before it could complete.","returnDisplay":"Command cancelled by user."}}`, "n3", []Draft{
				{Type: "tool.failed", Subject: "run_shell_command", Run: "n1", CauseRef: "pair:n2", Data: map[string]any{
					"tool": map[string]any{"name": "run_shell_command"}, "error": map[string]any{"type": "cancelled", "message": "Command cancelled by user."}}}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"x"},"tool_response":{"returnDisplay":"Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output."}}`, "n4", []Draft{
				{Type: "tool.failed", Subject: "run_shell_command", Run: "n1"}}},
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n5", []Draft{
				{Type: "run.cancelled", Run: "n1"}, {Type: "run.started", Run: "n5"}}},
		}},
		{"a card answered by the call running, a refused one dismissed with its call cancelled", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"touch a"}}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "run_shell_command", Run: "n1", Mark: "pair:n2"}}},
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"ToolPermission","message":"m","details":{"type":"exec","command":"touch a"}}`, "n3", []Draft{
				{Type: "attention.requested", Subject: "run_shell_command", Run: "n1", Mark: "attn:gem:pair:n2", CauseRef: "pair:n2", Data: map[string]any{
					"kind": "permission", "prompt": "Permission requested: run_shell_command — touch a", "options": adapterOptions(), "respond_via": []any{"oob"}}}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"touch a"},"tool_response":{"llmContent":"ok"}}`, "n4", []Draft{
				{Type: "attention.answered", Run: "n1", SubjectRef: "attn:gem:pair:n2", CauseRef: "attn:gem:pair:n2", Mark: "attn:gem:pair:n2:answered",
					Data: map[string]any{"answer": map[string]any{"option": "allow"}, "via": "oob"}},
				{Type: "attention.resolved", Run: "n1", SubjectRef: "attn:gem:pair:n2", CauseRef: "attn:gem:pair:n2:answered", Data: map[string]any{"resolution": "answered"}},
				{Type: "tool.completed", Subject: "run_shell_command", Run: "n1", CauseRef: "pair:n2"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"touch b"}}`, "n5", []Draft{
				{Type: "tool.requested", Subject: "run_shell_command", Run: "n1", Mark: "pair:n5"}}},
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"ToolPermission","message":"m","details":{"type":"exec","command":"touch b"}}`, "n6", []Draft{
				{Type: "attention.requested", Subject: "run_shell_command", Run: "n1", Mark: "attn:gem:pair:n5", CauseRef: "pair:n5"}}},
			// Refused: nothing fires until the next prompt.
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n7", []Draft{
				{Type: "attention.resolved", Run: "n1", SubjectRef: "attn:gem:pair:n5", CauseRef: "attn:gem:pair:n5", Data: map[string]any{"resolution": "dismissed"}},
				{Type: "tool.failed", Subject: "run_shell_command", Run: "n1", CauseRef: "pair:n5", Data: map[string]any{
					"tool": map[string]any{"name": "run_shell_command"}, "error": map[string]any{"type": "cancelled"}}},
				{Type: "run.cancelled", Run: "n1"}, {Type: "run.started", Run: "n7"}}},
			// The refused call's request no longer pairs with a later outcome.
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"touch b"},"tool_response":{}}`, "n8", []Draft{
				{Type: "tool.completed", Subject: "run_shell_command", Run: "n7"}}},
		}},
		{"a subagent's moments go to its child run", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"invoke_agent","tool_input":{"agent_name":"generalist","prompt":"p"}}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "invoke_agent", Run: "n1", Mark: "pair:n2"},
				{Type: "delegation.subagent.started", Subject: "sub-n2", Run: "n1", CauseRef: "pair:n2", Data: map[string]any{
					"agent_type": "generalist", "child": map[string]any{"run": "sub-n2"}}},
				{Type: "run.started", Run: "sub-n2", CauseRef: "pair:n2", Data: map[string]any{"trigger": "agent"}}}},
			// A call of the parent's started in the same reply, before the
			// subagent's first model request: the parent's.
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"}}`, "n3", []Draft{
				{Type: "tool.requested", Subject: "read_file", Run: "n1", Mark: "pair:n3"}}},
			// While it runs, the subagent's moments cannot be told apart.
			{`{"hook_event_name":"BeforeModel",` + s + `,"llm_request":{"model":"m"}}`, "n4", []Draft{
				{Type: "x.gemini-cli.session.before_model", Run: "n1"}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"},"tool_response":{}}`, "n5", []Draft{
				{Type: "tool.completed", Subject: "read_file", Run: "n1", CauseRef: "pair:n3"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"echo"}}`, "n6", []Draft{
				{Type: "tool.requested", Subject: "run_shell_command", Run: "sub-n2", Mark: "pair:n6"}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"echo"},"tool_response":{}}`, "n7", []Draft{
				{Type: "tool.completed", Subject: "run_shell_command", Run: "sub-n2", CauseRef: "pair:n6"}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"invoke_agent","tool_input":{"agent_name":"generalist","prompt":"p"},"tool_response":{"returnDisplay":{"isSubagentProgress":true,"state":"completed"}}}`, "n8", []Draft{
				{Type: "run.finished", Run: "sub-n2", CauseRef: "pair:n2", Data: map[string]any{}},
				{Type: "delegation.subagent.stopped", Subject: "sub-n2", Run: "n1", CauseRef: "pair:n2", Data: map[string]any{
					"agent_type": "generalist", "child": map[string]any{"run": "sub-n2"}, "status": "completed"}},
				{Type: "tool.completed", Subject: "invoke_agent", Run: "n1", CauseRef: "pair:n2"}}},
			{`{"hook_event_name":"BeforeModel",` + s + `,"llm_request":{"model":"m"}}`, "n9", []Draft{
				{Type: "x.gemini-cli.session.before_model", Run: "n1"}}},
		}},
		{"two subagents at once: their moments cannot be told apart and stay in the parent's run", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"invoke_agent","tool_input":{"agent_name":"generalist","prompt":"p"}}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "invoke_agent", Run: "n1", Mark: "pair:n2"},
				{Type: "delegation.subagent.started", Subject: "sub-n2", Run: "n1", CauseRef: "pair:n2"},
				{Type: "run.started", Run: "sub-n2", CauseRef: "pair:n2"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"invoke_agent","tool_input":{"agent_name":"generalist","prompt":"q"}}`, "n3", []Draft{
				{Type: "tool.requested", Subject: "invoke_agent", Run: "n1", Mark: "pair:n3"},
				{Type: "delegation.subagent.started", Subject: "sub-n3", Run: "n1", CauseRef: "pair:n3"},
				{Type: "run.started", Run: "sub-n3", CauseRef: "pair:n3"}}},
			{`{"hook_event_name":"BeforeModel",` + s + `,"llm_request":{"model":"m"}}`, "n4", []Draft{
				{Type: "x.gemini-cli.session.before_model", Run: "n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"echo"}}`, "n5", []Draft{
				{Type: "tool.requested", Subject: "run_shell_command", Run: "n1", Mark: "pair:n5"}}},
		}},
		{"a subagent the turn's end leaves running is cancelled with it", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"invoke_agent","tool_input":{"agent_name":"generalist"}}`, "n2", []Draft{
				{Type: "tool.requested", Run: "n1", Subject: "invoke_agent", Mark: "pair:n2"},
				{Type: "delegation.subagent.started", Run: "n1", Subject: "sub-n2", CauseRef: "pair:n2"},
				{Type: "run.started", Run: "sub-n2", CauseRef: "pair:n2"}}},
			{`{"hook_event_name":"BeforeModel",` + s + `,"llm_request":{"model":"m"}}`, "n3", []Draft{
				{Type: "x.gemini-cli.session.before_model", Run: "sub-n2"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"run_shell_command","tool_input":{"command":"sleep 9"}}`, "n4", []Draft{
				{Type: "tool.requested", Subject: "run_shell_command", Run: "sub-n2", Mark: "pair:n4"}}},
			{`{"hook_event_name":"SessionEnd",` + s + `,"reason":"exit"}`, "n5", []Draft{
				{Type: "tool.failed", Subject: "run_shell_command", Run: "sub-n2", CauseRef: "pair:n4"},
				{Type: "run.cancelled", Run: "sub-n2", CauseRef: "pair:n2"},
				{Type: "delegation.subagent.stopped", Subject: "sub-n2", Run: "n1", CauseRef: "pair:n2", Data: map[string]any{
					"agent_type": "generalist", "child": map[string]any{"run": "sub-n2"}, "status": "cancelled"}},
				{Type: "tool.failed", Subject: "invoke_agent", Run: "n1", CauseRef: "pair:n2"},
				{Type: "run.cancelled", Run: "n1"},
				{Type: "session.ended", Data: map[string]any{}}}},
		}},
		{"orphan terminal gets a run of its own", []fleetStep{
			{`{"hook_event_name":"AfterAgent",` + s + `}`, "n9", []Draft{{Type: "run.finished", Run: "n9"}}},
		}},
		{"tool pairing without a call id", []fleetStep{
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"}}`, "n1", []Draft{
				{Type: "tool.requested", Subject: "read_file", Mark: "pair:n1"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"b"}}`, "n2", []Draft{
				{Type: "tool.requested", Subject: "read_file", Mark: "pair:n2"}}},
			{`{"hook_event_name":"BeforeTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"}}`, "n3", []Draft{
				{Type: "tool.requested", Subject: "read_file", Mark: "pair:n3"}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"b"},"tool_response":{"llmContent":"B"}}`, "n4", []Draft{
				{Type: "tool.completed", Subject: "read_file", CauseRef: "pair:n2", Data: map[string]any{
					"tool": map[string]any{"name": "read_file"}, "result_digest": "ca57acd3637985cb7641ecef18f1387e",
					"result": map[string]any{"llmContent": "B"}}}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"},"tool_response":{"error":{"type":"E","message":"m"}}}`, "n5", []Draft{
				{Type: "tool.failed", Subject: "read_file", CauseRef: "pair:n1", Data: map[string]any{
					"tool": map[string]any{"name": "read_file"}, "error": map[string]any{"type": "E", "message": "m"}}}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"},"tool_response":{"error":"plain"}}`, "n6", []Draft{
				{Type: "tool.failed", Subject: "read_file", CauseRef: "pair:n3", Data: map[string]any{
					"tool": map[string]any{"name": "read_file"}, "error": map[string]any{"type": "tool_error", "message": "plain"}}}}},
			{`{"hook_event_name":"AfterTool",` + s + `,"tool_name":"read_file","tool_input":{"file_path":"a"},"tool_response":{}}`, "n7", []Draft{
				{Type: "tool.completed", Subject: "read_file"}}},
		}},
		{"a notification with no call to tie it to is status only, fallback degrades", []fleetStep{
			{`{"hook_event_name":"Notification",` + s + `,"notification_type":"ToolPermission","message":"m","details":{"x":1}}`, "n1", []Draft{
				{Type: "progress.status", Subject: "ToolPermission", Data: map[string]any{"message": "m"}}}},
			{`{"hook_event_name":"SomeFutureHook",` + s + `,"secret":"x"}`, "n2", []Draft{
				{Type: "x.gemini-cli.session.some_future_hook", Data: map[string]any{}}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { fleetRun(t, Gemini(), tc.steps) })
	}
}
