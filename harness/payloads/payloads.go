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
// sends it.
func StructuredPostToolUse(agent, session, out string) string {
	sid := fmt.Sprintf("%q", session)
	switch agent {
	case "codex":
		return `{"hook_event_name":"PostToolUse","session_id":` + sid + `,"turn_id":"t1","tool_name":"shell","tool_use_id":"call_1","tool_input":{"command":"q"},"tool_response":` + out + `}`
	case "gemini-cli":
		return `{"hook_event_name":"AfterTool","session_id":` + sid + `,"transcript_path":"/tmp/t.jsonl","cwd":"/tmp","timestamp":"2026-11-30T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"q"},"tool_response":{"llmContent":` + out + `}}`
	default:
		return `{"hook_event_name":"PostToolUse","session_id":` + sid + `,"transcript_path":"/tmp/t.jsonl","cwd":"/tmp","tool_name":"mcp__db__query","tool_input":{"q":"select"},"tool_use_id":"toolu_1","tool_response":` + out + `}`
	}
}
