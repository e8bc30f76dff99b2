package truth

import (
	"strings"
	"testing"
)

// ev builds an event of typ in session s, run r, with data kv.
func ev(typ, s, r string, kv ...any) Event {
	e := Event{"type": typ, "session": s}
	if r != "" {
		e["run"] = r
	}
	d := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i].(string)] = kv[i+1]
	}
	e["data"] = d
	return e
}

func tool(typ, s, r, call string) Event {
	e := ev(typ, s, r, "tool", map[string]any{"name": "Bash", "call_id": call})
	if typ == "tool.requested" {
		e["id"] = "t" + strings.TrimPrefix(call, "c")
	}
	return e
}

func withID(e Event, id string) Event    { e["id"] = id; return e }
func withCause(e Event, id string) Event { e["cause"] = id; return e }
func subj(e Event, subject string) Event { e["subject"] = subject; return e }

// abortedTurn is permissionTurn's dismissed request whose call fails
// aborted (OpenCode's abort while the permission is pending).
func abortedTurn() []Event {
	evs := permissionTurn("dismissed", "tool.failed")
	evs[len(evs)-2]["data"].(map[string]any)["error"] = map[string]any{"type": "aborted"}
	return evs
}

// permissionTurn is a turn whose Bash call c1 asks permission (Claude Code's
// order: PreToolUse, then PermissionRequest), the request settled with
// resolution ("" for none), the call then ending with outcome.
func permissionTurn(resolution, outcome string) []Event {
	evs := []Event{
		ev("session.started", "s", ""),
		ev("run.started", "s", "r1", "trigger", "user"),
		tool("tool.requested", "s", "r1", "c1"),
		withID(subj(ev("attention.requested", "s", "r1", "kind", "permission"), "Bash"), "a1"),
	}
	if resolution == "answered" {
		evs = append(evs, subj(ev("attention.answered", "s", "r1", "answer", map[string]any{"option": "allow"}, "via", "oob"), "a1"))
	}
	if resolution != "" {
		evs = append(evs, subj(ev("attention.resolved", "s", "r1", "resolution", resolution), "a1"))
	}
	return append(evs, tool(outcome, "s", "r1", "c1"), ev("run.finished", "s", "r1"))
}

// TestCheck: each case is a record and the facts it is held to; want lists
// substrings of the violations expected (none for a true record).
func TestCheck(t *testing.T) {
	turn := []Event{
		ev("session.started", "s", ""),
		ev("run.started", "s", "r1", "trigger", "user"),
		tool("tool.requested", "s", "r1", "c1"),
		tool("tool.completed", "s", "r1", "c1"),
		ev("run.finished", "s", "r1"),
		ev("session.ended", "s", ""),
	}
	cases := []struct {
		name  string
		evs   []Event
		facts Facts
		want  []string
	}{
		{"a true turn", turn, Facts{Turns: 1, Sessions: 1, Ended: 1}, nil},
		{"a card claiming control nobody held", []Event{
			ev("session.started", "s", ""),
			withID(ev("attention.requested", "s", "", "kind", "permission", "respond_via", []any{"control"}), "a1"),
		}, Facts{Sessions: 1}, []string{"1 attention.requested declare respond_via control, but the control loop held 0 live"}},
		{"a card answered over the loop it claimed", []Event{
			ev("session.started", "s", ""),
			withID(ev("attention.requested", "s", "", "kind", "permission", "respond_via", []any{"control"}), "a1"),
			subj(ev("attention.answered", "s", "", "answer", map[string]any{"option": "yes"}, "via", "control"), "a1"),
			subj(ev("attention.resolved", "s", "", "resolution", "answered"), "a1"),
		}, Facts{Sessions: 1, Answers: 1, Control: 1, ViaControl: 1}, nil},
		{"a delegation whose child is its run", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			subj(ev("delegation.subagent.started", "s", "r1", "child", map[string]any{"run": "a1"}), "a1"),
			ev("run.started", "s", "a1", "trigger", "agent"),
			ev("run.finished", "s", "a1"),
			subj(ev("delegation.subagent.stopped", "s", "r1", "child", map[string]any{"run": "a1"}), "a1"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1, Subagents: 1}, nil},
		{"a delegation naming no child, or a run not in the record", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			subj(ev("delegation.subagent.started", "s", "r1"), "a1"),
			subj(ev("delegation.subagent.stopped", "s", "r1", "child", map[string]any{"run": "a2"}), "a1"),
			subj(ev("delegation.subagent.started", "s", "r1", "child", map[string]any{"session": "elsewhere"}), "a3"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1, Subagents: 2}, []string{"names no child", `child session "elsewhere" is not in the record`, `child run "a2" never started`}},
		{"a tool by a name nobody called", turn, Facts{Turns: 1, Sessions: 1, Ended: 1, ToolNames: []string{"exec_command"}},
			[]string{`tool "Bash" is none of the tools called`, `tool "Bash" is none of the tools called`}},
		{"more turns than the human started", turn, Facts{Turns: 2, Sessions: 1, Ended: 1}, []string{"turns the human started"}},
		{"runs counted whatever their trigger", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1"), ev("run.failed", "s", "r1", "reason", "error"),
			ev("run.started", "s", "r2"), ev("run.finished", "s", "r2"),
		}, Facts{Runs: 2, Sessions: 1, Failures: 1}, nil},
		{"a retry the record misses", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1"), ev("run.finished", "s", "r1"),
		}, Facts{Runs: 2, Sessions: 1}, []string{"runs (run.started in the root sessions): record says 1, really 2"}},
		{"cancelled without an interrupt", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.cancelled", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1}, []string{"run.cancelled: record says 1"}},
		{"cancelled after an interrupt", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.cancelled", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1, Interrupts: 1}, nil},
		{"two terminals", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.finished", "s", "r1"),
			ev("run.failed", "s", "r1", "reason", "x"),
		}, Facts{Turns: 1, Sessions: 1, Failures: 1}, []string{"has 2 terminals"}},
		{"a run left open", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
		}, Facts{Turns: 1, Sessions: 1}, []string{"never reached a terminal"}},
		{"a run the vendor never closes", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
		}, Facts{Turns: 1, Sessions: 1, OpenRuns: 1}, nil},
		{"second session.started", []Event{
			ev("session.started", "s", ""),
			ev("session.started", "s", ""),
		}, Facts{Sessions: 2}, []string{"second session.started"}},
		{"started again after the end", []Event{
			ev("session.started", "s", ""),
			ev("session.ended", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1, Ended: 1}, []string{"run.started after session.ended"}},
		{"tool event outside a run", []Event{
			ev("session.started", "s", ""),
			tool("tool.requested", "s", "", "c1"),
			tool("tool.completed", "s", "", "c1"),
		}, Facts{Sessions: 1}, []string{"outside any run", "outside any run"}},
		{"tool call never closed", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			tool("tool.requested", "s", "r1", "c1"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1}, []string{"tool call(s) never reached"}},
		{"a turn that ended unreported, closed with no by", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.cancelled", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1, Unreported: 1}, nil},
		{"a turn that ended unreported, cancelled by someone", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.cancelled", "s", "r1", "by", "user"),
		}, Facts{Turns: 1, Sessions: 1, Unreported: 1}, []string{"run.cancelled with a by"}},
		{"a stopped tool recorded completed", turn, Facts{Turns: 1, Sessions: 1, Ended: 1, ToolsStopped: 1},
			[]string{"tool calls stopped while running"}},
		{"a stopped tool recorded cancelled", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			tool("tool.requested", "s", "r1", "c1"),
			ev("tool.failed", "s", "r1", "tool", map[string]any{"name": "Bash", "call_id": "c1"}, "error", map[string]any{"type": "cancelled"}),
			ev("run.cancelled", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1, Interrupts: 1, ToolsStopped: 1}, nil},
		{"an abnormal end said normal", []Event{
			ev("session.started", "s", ""),
			ev("session.ended", "s", "", "reason", "normal"),
		}, Facts{Sessions: 1, Ended: 1, AbnormalEnds: 1}, []string{"session.ended reason normal"}},
		{"an abnormal end with no reason", []Event{
			ev("session.started", "s", ""),
			ev("session.ended", "s", ""),
		}, Facts{Sessions: 1, Ended: 1, AbnormalEnds: 1}, nil},
		{"a call without an id paired by cause", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			withID(ev("tool.requested", "s", "r1", "tool", map[string]any{"name": "Bash"}), "q1"),
			withID(ev("tool.requested", "s", "r1", "tool", map[string]any{"name": "Bash"}), "q2"),
			withCause(ev("tool.completed", "s", "r1", "tool", map[string]any{"name": "Bash"}), "q1"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1}, []string{"1 tool call(s) never reached"}},
		{"a session ending with a request pending", []Event{
			ev("session.started", "s", ""),
			withID(ev("attention.requested", "s", "", "kind", "permission"), "a1"),
			ev("session.ended", "s", ""),
		}, Facts{Sessions: 1, Ended: 1}, []string{"still pending"}},
		{"a request settled twice", []Event{
			ev("session.started", "s", ""),
			withID(ev("attention.requested", "s", "", "kind", "permission"), "a1"),
			subj(ev("attention.resolved", "s", "", "resolution", "dismissed"), "a1"),
			subj(ev("attention.resolved", "s", "", "resolution", "dismissed"), "a1"),
		}, Facts{Sessions: 1}, []string{"a second terminal"}},
		{"phantom compaction", []Event{
			ev("session.started", "s", ""),
			ev("session.compacted", "s", "", "trigger", "auto"),
		}, Facts{Sessions: 1}, []string{"compactions"}},
		{"answer recorded as dismissal", []Event{
			ev("session.started", "s", ""),
			withID(ev("attention.requested", "s", "", "kind", "question"), "q1"),
			subj(ev("attention.resolved", "s", "", "resolution", "dismissed"), "q1"),
		}, Facts{Sessions: 1, Answers: 1}, []string{"answers (attention.answered)", "answered requests"}},
		{"a resolution of no request", []Event{
			ev("session.started", "s", ""),
			withID(ev("attention.requested", "s", "", "kind", "question"), "q1"),
			subj(ev("attention.resolved", "s", "", "resolution", "dismissed"), "q1"),
			subj(ev("attention.resolved", "s", "", "resolution", "dismissed"), "approval_1"),
		}, Facts{Sessions: 1}, []string{`its subject "approval_1" names no request`}},
		{"an allowed permission recorded as dismissed", permissionTurn("dismissed", "tool.completed"),
			Facts{Turns: 1, Sessions: 1}, []string{"permission for call c1, which then ran, but the record says dismissed"}},
		{"a permission whose call failed after running, left open", permissionTurn("", "tool.failed"),
			Facts{Turns: 1, Sessions: 1}, []string{"the record says no terminal"}},
		{"an allowed permission recorded as answered", permissionTurn("answered", "tool.completed"),
			Facts{Turns: 1, Sessions: 1, Answers: 1}, nil},
		{"a refused permission may be dismissed", permissionTurn("dismissed", "tool.denied"),
			Facts{Turns: 1, Sessions: 1}, nil},
		{"a call aborted while its permission was pending did not run", abortedTurn(),
			Facts{Turns: 1, Sessions: 1}, nil},
		{"the cause names the call", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			tool("tool.requested", "s", "r1", "c1"),
			tool("tool.requested", "s", "r1", "c2"),
			withCause(withID(ev("attention.requested", "s", "r1", "kind", "permission"), "a1"), "t1"),
			subj(ev("attention.resolved", "s", "r1", "resolution", "dismissed"), "a1"),
			tool("tool.completed", "s", "r1", "c1"),
			tool("tool.denied", "s", "r1", "c2"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1}, []string{"event 5 (attention.requested): permission for call c1"}},
		{"two open calls of the tool are not guessed", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			tool("tool.requested", "s", "r1", "c1"),
			tool("tool.requested", "s", "r1", "c2"),
			withID(ev("attention.requested", "s", "r1", "kind", "permission"), "a1"),
			subj(ev("attention.resolved", "s", "r1", "resolution", "dismissed"), "a1"),
			tool("tool.completed", "s", "r1", "c1"),
			tool("tool.completed", "s", "r1", "c2"),
			ev("run.finished", "s", "r1"),
		}, Facts{Turns: 1, Sessions: 1}, nil},
		{"child session runs are not the human's turns", []Event{
			ev("session.started", "s", ""),
			ev("run.started", "s", "r1", "trigger", "user"),
			ev("run.finished", "s", "r1"),
			ev("session.started", "c", "", "parent", map[string]any{"session": "s"}),
			ev("run.started", "c", "r2", "trigger", "user"),
			ev("run.finished", "c", "r2"),
		}, Facts{Turns: 1, Sessions: 2}, nil},
		{"a resume is a new session naming the one it continues", []Event{
			ev("session.started", "s", ""),
			ev("session.ended", "s", ""),
			ev("session.started", "s~r1", "", "trigger", "resume", "resumed_from", "s"),
			ev("run.started", "s~r1", "r1", "trigger", "user"),
			ev("run.finished", "s~r1", "r1"),
			ev("session.ended", "s~r1", ""),
		}, Facts{Turns: 1, Sessions: 2, Ended: 2}, nil},
		{"a resume naming no earlier session", []Event{
			ev("session.started", "s~r1", "", "trigger", "resume", "resumed_from", "elsewhere"),
		}, Facts{Sessions: 1}, []string{"must name the earlier AEP session"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check([]Log{{Name: "log", Events: c.evs}}, c.facts, nil)
			if len(got) != len(c.want) {
				t.Fatalf("got %d violations, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %d = %q, want it to mention %q", i, got[i], w)
				}
			}
		})
	}
}

// TestSchemas validates a good and a bad event against the spec's schemas.
func TestSchemas(t *testing.T) {
	dir, ok := SchemaDir()
	if !ok {
		t.Skip("AEP schemas not found (AEP_SCHEMA_DIR)")
	}
	s, err := LoadSchemas(dir)
	if err != nil {
		t.Fatal(err)
	}
	good := Event{"aep": "0.1", "id": "01J", "type": "run.cancelled", "time": "2026-01-01T00:00:00.000Z",
		"source": "aep://h/agent/a/session/s", "agent": "a", "session": "s", "seq": 0, "run": "r",
		"data": map[string]any{"by": "user"}}
	if bad := s.Validate(good); len(bad) != 0 {
		t.Errorf("valid event rejected: %v", bad)
	}
	wrong := Event{}
	for k, v := range good {
		wrong[k] = v
	}
	wrong["data"] = map[string]any{"by": "gremlins"}
	if bad := s.Validate(wrong); len(bad) != 1 || !strings.HasPrefix(bad[0], "data:") {
		t.Errorf("bad payload: got %v, want one data violation", bad)
	}
	unknown := Event{}
	for k, v := range good {
		unknown[k] = v
	}
	unknown["type"] = "run.exploded"
	if bad := s.Validate(unknown); len(bad) != 1 || !strings.Contains(bad[0], "not registered") {
		t.Errorf("unregistered type: got %v", bad)
	}
}
