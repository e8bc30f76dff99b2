package mapping

import "testing"

func TestVSCodeMap(t *testing.T) {
	tests := []struct {
		name  string
		steps []fleetStep
	}{
		{"a session without session_id, success-only tools, pre-moment compaction", []fleetStep{
			{`{"hook_event_name":"SessionStart","timestamp":"2026-07-16T09:00:00.000Z","transcript_path":"/t.md","cwd":"/w","source":"new","model":"m","agent_type":"Agent"}`, "n1", []Draft{
				{Type: "session.started", Data: map[string]any{"client": map[string]any{"name": "vscode"}, "trigger": "new",
					"gen_ai.request.model": "m", "agent_type": "Agent", "cwd": "/w"}}}},
			{`{"hook_event_name":"UserPromptSubmit","prompt":"p","transcript_path":"/t.md"}`, "n2", []Draft{
				{Type: "run.started", Run: "n2", Data: map[string]any{"trigger": "user", "prompt": "p"}}}},
			{`{"hook_event_name":"PreToolUse","tool_name":"runInTerminal","tool_input":{"command":"ls -la"},"tool_use_id":"c1"}`, "n3", []Draft{
				{Type: "tool.requested", Subject: "runInTerminal", Run: "n2", Data: map[string]any{
					"tool": map[string]any{"name": "runInTerminal", "call_id": "c1"}, "args_digest": "1df8bccaec747dc615b50678f35bf5b5",
					"args": map[string]any{"command": "ls -la"}}}}},
			{`{"hook_event_name":"PostToolUse","tool_name":"runInTerminal","tool_input":{"command":"ls"},"tool_use_id":"c1","tool_response":"ok"}`, "n4", []Draft{
				{Type: "tool.completed", Subject: "runInTerminal", Run: "n2"}}},
			{`{"hook_event_name":"PreCompact","trigger":"auto","custom_instructions":"keep"}`, "n5", []Draft{
				{Type: "session.compacted", Run: "n2", Data: map[string]any{"trigger": "auto"}}}},
			{`{"hook_event_name":"SubagentStart","agent_id":"a7","agent_type":"Plan"}`, "n6", []Draft{
				{Type: "delegation.subagent.started", Subject: "a7", Run: "n2", Data: map[string]any{"agent_type": "Plan", "child": map[string]any{"agent": "a7"}}}}},
			{`{"hook_event_name":"Stop","stop_hook_active":false}`, "n7", []Draft{
				{Type: "run.finished", Run: "n2", Data: map[string]any{}}}},
			{`{"hook_event_name":"Stop","stop_hook_active":true}`, "n8", []Draft{
				{Type: "run.finished", Run: "n2"}}}, // the emitter suppresses it
			{`{"hook_event_name":"SessionEnd"}`, "n9", []Draft{
				{Type: "x.vscode.session.session_end", Data: map[string]any{}}}},
		}},
		{"stale run drained at the next prompt", []fleetStep{
			{`{"hook_event_name":"UserPromptSubmit","session_id":"v"}`, "n1", []Draft{{Type: "run.started", Run: "n1"}}},
			{`{"hook_event_name":"UserPromptSubmit","session_id":"v"}`, "n2", []Draft{
				{Type: "run.cancelled", Run: "n1"}, {Type: "run.started", Run: "n2"}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { fleetRun(t, VSCode(), tc.steps) })
	}
}
