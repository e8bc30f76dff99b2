// Package payloads builds the hostile-but-valid hook payloads the process
// tests and the benchmarks share.
package payloads

import (
	"fmt"
	"strings"
)

// StructuredOutput is a tool result of about 16 MiB made of many small
// records whose keys are out of order, as a tool's JSON output is.
func StructuredOutput() string {
	var b strings.Builder
	b.WriteString(`{"content":[`)
	for i := 0; b.Len() < 16<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"text","text":"row %d: a value","n":%d}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// StructuredAgents are the vendors StructuredPostToolUse has a payload for.
var StructuredAgents = []string{"claude-code", "codex", "gemini-cli"}

// StructuredPostToolUse is agent's moment after a tool call (PostToolUse,
// Gemini CLI's AfterTool) in session whose result is out, as each vendor
// sends it: its members in the order the recorded sessions show, so the
// call's id (and Claude Code's duration) follow the result.
func StructuredPostToolUse(agent, session, out string) string {
	sid := fmt.Sprintf("%q", session)
	switch agent {
	case "codex":
		return `{"session_id":` + sid + `,"turn_id":"t1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"PostToolUse","model":"m","permission_mode":"default",` +
			`"tool_name":"shell","tool_input":{"command":"q"},"tool_response":` + out + `,"tool_use_id":"call_1"}`
	case "gemini-cli":
		return `{"session_id":` + sid + `,"transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"AfterTool","timestamp":"2026-11-30T10:00:00Z",` +
			`"tool_name":"run_shell_command","tool_input":{"command":"q"},"tool_response":{"llmContent":` + out + `,"returnDisplay":"ok"}}`
	default:
		return `{"session_id":` + sid + `,"transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PostToolUse",` +
			`"tool_name":"mcp__db__query","tool_input":{"q":"select"},"tool_response":` + out + `,"tool_use_id":"toolu_1","duration_ms":1200}`
	}
}
