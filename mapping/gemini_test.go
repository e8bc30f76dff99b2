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
		{"a run with no AfterAgent keeps no terminal (an interrupt fires AfterAgent)", []fleetStep{
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"BeforeAgent",` + s + `}`, "n2", []Draft{{Type: "run.started", Run: "n2"}}},
			{`{"hook_event_name":"SessionEnd",` + s + `,"reason":"logout"}`, "n3", []Draft{
				{Type: "session.ended", Data: map[string]any{"reason": "normal"}}}},
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
		{"notification is status only, fallback degrades", []fleetStep{
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
