package mapping

import (
	"fmt"
	"testing"
)

// TestResume: a vendor resume of a session starts a new AEP session
// ("{id}~r{nonce}") whose session.started names the one it continues, and
// every later moment of the vendor session goes there; a second resume
// continues the first. What the earlier session left open stays there.
func TestResume(t *testing.T) {
	prompt := map[string]string{ // a turn's opening hook per vendor
		"claude-code": `"hook_event_name":"UserPromptSubmit","prompt":"go","prompt_id":"p%d"`,
		"codex":       `"hook_event_name":"UserPromptSubmit","prompt":"go","turn_id":"t%d"`,
		"gemini-cli":  `"hook_event_name":"BeforeAgent","prompt":"go%d"`,
		"qwen-code":   `"hook_event_name":"UserPromptSubmit","prompt":"go","prompt_id":"p%d"`,
	}
	for _, v := range []Vendor{ClaudeCode(), Codex(), Gemini(), Qwen()} {
		t.Run(v.Name, func(t *testing.T) {
			st := &State{}
			moment := func(nonce, body string) []Draft {
				t.Helper()
				ds, err := v.Map(Moment{Raw: []byte(`{"session_id":"s",` + body + `}`), Nonce: nonce}, st)
				if err != nil {
					t.Fatal(err)
				}
				return ds
			}
			type want struct{ typ, session, from string }
			check := func(ds []Draft, ws ...want) {
				t.Helper()
				if len(ds) != len(ws) {
					t.Fatalf("got %v, want %d drafts", hkTypes(ds), len(ws))
				}
				for i, w := range ws {
					from, _ := ds[i].Data["resumed_from"].(string)
					if ds[i].Type != w.typ || ds[i].Session != w.session || from != w.from {
						t.Errorf("draft %d = %s in %q from %q, want %s in %q from %q", i, ds[i].Type, ds[i].Session, from, w.typ, w.session, w.from)
					}
				}
				if w := ws[0]; w.from != "" && ds[0].Data["trigger"] != "resume" {
					t.Errorf("resumed session.started trigger = %v", ds[0].Data["trigger"])
				}
			}
			check(moment("n1", `"hook_event_name":"SessionStart","source":"startup"`), want{"session.started", "", ""})
			check(moment("n2", fmt.Sprintf(prompt[v.Name], 1)), want{"run.started", "", ""})
			// The first part ends with its turn still open (no Stop): the
			// session's end drains it there.
			moment("n3", `"hook_event_name":"SessionEnd","reason":"other"`)
			check(moment("n4", `"hook_event_name":"SessionStart","source":"resume"`), want{"session.started", "s~rn4", "s"})
			check(moment("n5", fmt.Sprintf(prompt[v.Name], 2)), want{"run.started", "s~rn4", ""})
			// Resumed again without an end in between: the open turn stays
			// in s~rn4 (nothing drains it into the next session). Qwen's
			// resumed process proves it over: it is closed there, in s~rn4.
			again := []want{{"session.started", "s~rn6", "s~rn4"}}
			if v.Name == "qwen-code" {
				again = append([]want{{"run.cancelled", "s~rn4", ""}}, again...)
			}
			check(moment("n6", `"hook_event_name":"SessionStart","source":"resume"`), again...)
			check(moment("n7", fmt.Sprintf(prompt[v.Name], 3)), want{"run.started", "s~rn6", ""})
			end := []want{{"run.cancelled", "s~rn6", ""}, {"session.ended", "s~rn6", ""}}
			if v.Name == "codex" || v.Name == "claude-code" {
				// Their interrupts close the run, or (Claude Code's headless
				// end, reason other) none can have come: one they never
				// closed keeps no terminal.
				end = end[1:]
			}
			check(moment("n8", `"hook_event_name":"SessionEnd","reason":"other"`), end...)
		})
	}
}
