package tees

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/realagents/drift"
)

// TestSurface: an ACP recording's surface names each message by direction
// and method (an update by its kind, a response by the request it
// answers) with its fields, and keeps the tools offered; a field an agent
// renames between versions shows in the comparison.
func TestSurface(t *testing.T) {
	rec, err := LoadRecording(filepath.Join(harness.Fixtures, "acp", "recorded", "claude-agent-acp-allow"))
	if err != nil {
		t.Fatal(err)
	}
	s := Surface([]Recording{rec})
	for moment, field := range map[string]string{
		"agent update tool_call":                     "_meta.claudeCode.toolName",
		"agent request session/request_permission":   "toolCall.rawInput.command",
		"editor response session/request_permission": "outcome.optionId",
		"agent response session/prompt":              "usage.inputTokens",
		"editor request session/prompt":              "prompt[].text",
	} {
		if !s.Moments[moment][field] {
			t.Errorf("%s: no %s in %v", moment, field, s.Moments[moment])
		}
	}
	if !s.Tools["Bash"] {
		t.Errorf("tools %v", s.Tools)
	}
	renamed := rec
	renamed.Entries = append([]Entry(nil), rec.Entries...)
	for i, e := range renamed.Entries {
		renamed.Entries[i].Line = strings.ReplaceAll(e.Line, `"toolName"`, `"tool_name"`)
	}
	renamed.Meta.Tools = append([]string{"Bash2"}, rec.Meta.Tools...)
	d := drift.Compare(s, Surface([]Recording{renamed}))
	if !contains(d.NewFields["agent update tool_call"], "_meta.claudeCode.tool_name") ||
		!contains(d.GoneFields["agent update tool_call"], "_meta.claudeCode.toolName") || !contains(d.NewTools, "Bash2") {
		t.Errorf("diff %+v", d)
	}
}
