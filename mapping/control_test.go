package mapping

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	bashPerm  = `{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"touch x"}}`
	suggested = `{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"touch x"},"permission_suggestions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`
	askPerm   = `{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Color?","header":"C","options":[{"label":"Red"},{"label":"Blue"}],"multiSelect":false},{"question":"Sizes?","options":[{"label":"S"},{"label":"M"}],"multiSelect":true}]}}`
	elicit    = `{"hook_event_name":"Elicitation","session_id":"s","mcp_server_name":"m","message":"Deploy","requested_schema":{"type":"object","properties":{"env":{"type":"string","enum":["stg","prod"]},"n":{"type":"integer","minimum":1,"maximum":3},"why":{"type":"string"},"ok":{"type":"boolean"}},"required":["env","ok"]}}`
)

func hold(t *testing.T, vendor, payload string) *Hold {
	t.Helper()
	v, _ := Lookup(vendor)
	h := v.Hold(Moment{Raw: []byte(payload)}, Gate{})
	if h == nil {
		t.Fatalf("%s does not hold %s", vendor, payload)
	}
	return h
}

// TestResolve holds the answer check to AEP-0006 (form values) and
// AEP-0008 (text against options: an option word is that option, other
// text refuses with the text as the reason, never allows).
func TestResolve(t *testing.T) {
	cases := []struct {
		name, vendor, payload string
		in                    Answer
		want                  Answer
		invalid               string // a part of the error, "" for none
	}{
		{"claude option", "claude-code", bashPerm, Answer{Option: "yes"}, Answer{Option: "yes"}, ""},
		{"claude unknown option", "claude-code", bashPerm, Answer{Option: "allow-forever"}, Answer{}, "not one of this request's options"},
		{"the word deny", "claude-code", bashPerm, Answer{Text: "  DENY "}, Answer{Option: "no"}, ""},
		{"the word allow", "claude-code", bashPerm, Answer{Text: "allow"}, Answer{Option: "yes"}, ""},
		{"a label", "claude-code", bashPerm, Answer{Text: "yes"}, Answer{Option: "yes"}, ""},
		{"guidance refuses", "claude-code", bashPerm, Answer{Text: "use the staging registry instead"},
			Answer{Option: "no", Text: "use the staging registry instead"}, ""},
		{"a refusal keeps its reason", "codex", bashPerm, Answer{Option: "deny", Text: "not now"}, Answer{Option: "deny", Text: "not now"}, ""},
		{"an allow drops text", "codex", bashPerm, Answer{Option: "allow", Text: "ok"}, Answer{Option: "allow"}, ""},
		{"nothing", "codex", bashPerm, Answer{}, Answer{}, "names no option"},
		{"values on a permission", "qwen-code", bashPerm, Answer{Values: map[string]any{"1": "x"}}, Answer{}, "not values"},
		{"qwen words", "qwen-code", bashPerm, Answer{Text: "no"}, Answer{Option: "cancel"}, ""},
		{"form values", "claude-code", askPerm, Answer{Values: map[string]any{"1": "2", "2": []any{"1", "2"}}},
			Answer{Values: map[string]any{"1": "2", "2": []any{"1", "2"}}}, ""},
		{"form other text", "claude-code", askPerm, Answer{Values: map[string]any{"1": "Green", "2": []any{"1"}}},
			Answer{Values: map[string]any{"1": "Green", "2": []any{"1"}}}, ""},
		{"form missing required", "claude-code", askPerm, Answer{Values: map[string]any{"1": "1"}}, Answer{}, `required field "2"`},
		{"form unknown field", "claude-code", askPerm, Answer{Values: map[string]any{"1": "1", "2": []any{"1"}, "9": "x"}}, Answer{}, `no field "9"`},
		{"form text with two questions", "claude-code", askPerm, Answer{Text: "Red"}, Answer{}, "answered with values"},
		{"closed select", "claude-code", elicit, Answer{Values: map[string]any{"env": "dev", "ok": true}}, Answer{}, `"dev" is not a choice`},
		{"number range", "claude-code", elicit, Answer{Values: map[string]any{"env": "stg", "ok": true, "n": float64(9)}}, Answer{}, "out of its range"},
		{"boolean type", "claude-code", elicit, Answer{Values: map[string]any{"env": "stg", "ok": "yes"}}, Answer{}, "true or false"},
		{"elicitation accepted", "claude-code", elicit, Answer{Values: map[string]any{"env": "prod", "ok": true, "why": "now"}},
			Answer{Values: map[string]any{"env": "prod", "ok": true, "why": "now"}}, ""},
		{"elicitation declined", "claude-code", elicit, Answer{Option: "decline"}, Answer{Option: "decline"}, ""},
		{"elicitation declined in words", "claude-code", elicit, Answer{Text: "Cancel"}, Answer{Option: "cancel"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := hold(t, c.vendor, c.payload).Resolve(c.in)
			if c.invalid != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.invalid) {
					t.Fatalf("err %v, want invalid (%s)", err, c.invalid)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v %v, want %+v", got, err, c.want)
			}
		})
	}
}

// TestHoldReplies holds each vendor's reply to its hook documentation.
func TestHoldReplies(t *testing.T) {
	cases := []struct {
		name, vendor, payload string
		a                     Answer
		want                  string // the reply, "" when the vendor cannot apply it
	}{
		{"claude yes", "claude-code", bashPerm, Answer{Option: "yes"},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"claude suggestions", "claude-code", suggested, Answer{Option: "yes-apply-suggestions"},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]},"hookEventName":"PermissionRequest"}}`},
		{"claude no with guidance", "claude-code", bashPerm, Answer{Option: "no", Text: "use make clean"},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"use make clean"},"hookEventName":"PermissionRequest"}}`},
		{"claude ask", "claude-code", askPerm, Answer{Values: map[string]any{"1": "2", "2": []any{"1", "2"}}},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{"answers":{"Color?":"Blue","Sizes?":"S, M"},"questions":[{"question":"Color?","header":"C","options":[{"label":"Red"},{"label":"Blue"}],"multiSelect":false},{"question":"Sizes?","options":[{"label":"S"},{"label":"M"}],"multiSelect":true}]}},"hookEventName":"PermissionRequest"}}`},
		{"claude ask other", "claude-code", askPerm, Answer{Values: map[string]any{"1": "Green", "2": []any{"2"}}},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{"answers":{"Color?":"Green","Sizes?":"M"},"questions":[{"question":"Color?","header":"C","options":[{"label":"Red"},{"label":"Blue"}],"multiSelect":false},{"question":"Sizes?","options":[{"label":"S"},{"label":"M"}],"multiSelect":true}]}},"hookEventName":"PermissionRequest"}}`},
		{"elicitation accept", "claude-code", elicit, Answer{Values: map[string]any{"env": "prod", "ok": true}},
			`{"hookSpecificOutput":{"action":"accept","content":{"env":"prod","ok":true},"hookEventName":"Elicitation"}}`},
		{"elicitation decline", "claude-code", elicit, Answer{Option: "decline"},
			`{"hookSpecificOutput":{"action":"decline","hookEventName":"Elicitation"}}`},
		{"codex allow", "codex", bashPerm, Answer{Option: "allow"},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"codex deny", "codex", bashPerm, Answer{Option: "deny"},
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"` + deniedMessage + `"},"hookEventName":"PermissionRequest"}}`},
		{"qwen once", "qwen-code", bashPerm, Answer{Option: "proceed_once"},
			`{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`},
		{"qwen always", "qwen-code", bashPerm, Answer{Option: "proceed_always_project"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := hold(t, c.vendor, c.payload).Reply(c.a)
			if c.want == "" {
				if err == nil {
					t.Fatalf("reply %s, want a refusal", b)
				}
				return
			}
			if err != nil || string(b) != c.want {
				t.Fatalf("reply %s %v\nwant      %s", b, err, c.want)
			}
			if !json.Valid(b) {
				t.Fatal("not JSON")
			}
		})
	}
}

// TestOutcomeSettles holds the outcome drafts to one terminal per request:
// once answered over control, the call's later PostToolUse settles nothing.
func TestOutcomeSettles(t *testing.T) {
	v, _ := Lookup("claude-code")
	st := &State{}
	m := Moment{Raw: []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt_id":"p","prompt":"go"}`), Nonce: "n0"}
	if _, err := v.Map(m, st); err != nil {
		t.Fatal(err)
	}
	m = Moment{Raw: []byte(bashPerm), Nonce: "n1", Control: true}
	if _, err := v.Map(m, st); err != nil {
		t.Fatal(err)
	}
	h := v.Hold(m, Gate{})
	if !Pending(st, h.Key) {
		t.Fatal("the card is not pending under the hold's key")
	}
	ds := h.OutcomeDrafts(st, Answer{Option: "yes"}, "alice", "cmd1")
	var types []string
	for _, d := range ds {
		types = append(types, d.Type)
		if d.Cause != "cmd1" || d.CauseRef != "" {
			t.Errorf("%s: cause %q ref %q, want the command's id", d.Type, d.Cause, d.CauseRef)
		}
	}
	if want := []string{"control.accepted", "attention.answered", "attention.resolved"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("types %v, want %v", types, want)
	}
	if got := ds[1].Data; !reflect.DeepEqual(got, map[string]any{"answer": map[string]any{"option": "yes"}, "by": "alice", "via": "control"}) {
		t.Errorf("answered data %v", got)
	}
	if Pending(st, h.Key) {
		t.Fatal("still pending after the answer")
	}
	post := `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"touch x"},"tool_use_id":"t1","tool_response":{}}`
	later, _ := v.Map(Moment{Raw: []byte(post), Nonce: "n2"}, st)
	for _, d := range later {
		if strings.HasPrefix(d.Type, "attention.") {
			t.Errorf("a second settlement: %s", d.Type)
		}
	}
}
