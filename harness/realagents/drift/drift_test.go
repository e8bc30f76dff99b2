package drift

import (
	"bytes"
	"reflect"
	"testing"
)

func TestCompare(t *testing.T) {
	old, cur := New(), New()
	old.Moment("Stop", []byte(`{"session_id":"s","turn_id":"t"}`))
	old.Moment("PreToolUse", []byte(`{"tool_input":{"command":"ls"},"answers":{"Which color?":"Red"}}`))
	old.Moment("Gone", []byte(`{}`))
	old.Tool("exec_command", "spawn_agent")
	cur.Moment("Stop", []byte(`{"session_id":"s"}`))
	cur.Moment("PreToolUse", []byte(`{"tool_input":{"command":"ls","edits":[{"path":"a"}]},"answers":{"Which size?":"L"}}`))
	cur.Moment("PostModelRequest", []byte(`{"status":"failed"}`))
	cur.Tool("exec_command", "apply_patch")
	d := Compare(old, cur)
	want := Diff{
		NewMoments: []string{"PostModelRequest"}, GoneMoments: []string{"Gone"},
		NewFields:  map[string][]string{"PreToolUse": {"tool_input.edits", "tool_input.edits[].path"}},
		GoneFields: map[string][]string{"Stop": {"turn_id"}},
		NewTools:   []string{"apply_patch"}, GoneTools: []string{"spawn_agent"},
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("Compare:\n got %+v\nwant %+v", d, want)
	}
	var b bytes.Buffer
	d.Write(&b, "  ")
	const text = `  moments added: PostModelRequest
  moments gone: Gone
  PreToolUse: fields added: tool_input.edits, tool_input.edits[].path
  Stop: fields gone: turn_id
  tools added: apply_patch
  tools gone: spawn_agent
`
	if b.String() != text {
		t.Fatalf("Write:\n%s\nwant\n%s", b.String(), text)
	}
}

func TestSame(t *testing.T) {
	a, b := New(), New()
	a.Moment("Stop", []byte(`{"x":1}`))
	b.Moment("Stop", []byte(`{"x":2}`))
	d := Compare(a, b)
	if !d.Empty() || !d.ToolsUnknown {
		t.Fatalf("got %+v, want empty with tools unknown", d)
	}
	var w bytes.Buffer
	d.Write(&w, "")
	if want := "tools offered: not compared (a side kept no tool list)\nno change in moments, fields or tools\n"; w.String() != want {
		t.Fatalf("Write: %q", w.String())
	}
}

func TestKeyName(t *testing.T) {
	for k, want := range map[string]string{
		"tool_input": "tool_input", "Which color should it be?": "*", "5e55a000-0000-4000-8000-000000000001": "*",
		"": "*", "mcp__server__tool": "mcp__server__tool",
	} {
		if got := keyName(k); got != want {
			t.Errorf("keyName(%q) = %q, want %q", k, got, want)
		}
	}
}
