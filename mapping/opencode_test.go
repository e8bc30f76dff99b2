package mapping_test

import (
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// ocLine is a plugin forwarder bus line of session s.
func ocLine(typ, props string) string {
	return `{"kind":"bus","event":{"type":"` + typ + `","properties":` + props + `}}`
}

func ocPart(msg, call, status string) string {
	return ocLine("message.part.updated", `{"sessionID":"s","part":{"type":"tool","tool":"bash","callID":"`+call+
		`","messageID":"`+msg+`","sessionID":"s","state":{"status":"`+status+`","input":{"command":"ls"}}}}`)
}

func ocHook(kind, call string) string {
	return `{"kind":"` + kind + `","input":{"tool":"bash","sessionID":"s","callID":"` + call + `"},"output":{"args":{"command":"ls"},"output":"ok"}}`
}

// TestBusPluginToolOrders holds the plugin table to one tool.requested
// and one terminal per call whichever of the tool hooks and the call's
// parts comes first: OpenCode 1.18.33 sends the running part before
// tool.execute.before, Kilo 7.7.7 the hook first (recorded in
// fixtures/{opencode,kilocode}/recorded/*/plugin.jsonl); a call id a later
// message reuses is still a new call.
func TestBusPluginToolOrders(t *testing.T) {
	start := []string{
		ocLine("session.created", `{"sessionID":"s","info":{"id":"s"}}`),
		ocLine("message.updated", `{"sessionID":"s","info":{"id":"msg_1","role":"user","sessionID":"s"}}`),
	}
	idle := ocLine("session.idle", `{"sessionID":"s"}`)
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"part first (OpenCode)", []string{ocPart("msg_2", "c1", "running"), ocHook("tool.before", "c1"),
			ocHook("tool.after", "c1"), ocPart("msg_2", "c1", "completed")},
			"tool.requested tool.completed"},
		{"hook first (Kilo)", []string{ocHook("tool.before", "c1"), ocPart("msg_2", "c1", "running"),
			ocHook("tool.after", "c1"), ocPart("msg_2", "c1", "completed")},
			"tool.requested tool.completed"},
		{"hook closes before any part", []string{ocHook("tool.before", "c1"), ocHook("tool.after", "c1"),
			ocPart("msg_2", "c1", "completed")},
			"tool.requested tool.completed"},
		{"a later message reuses the id", []string{ocHook("tool.before", "c1"), ocPart("msg_2", "c1", "running"),
			ocPart("msg_2", "c1", "completed"), ocPart("msg_3", "c1", "running"), ocHook("tool.before", "c1"),
			ocPart("msg_3", "c1", "completed")},
			"tool.requested tool.completed tool.requested tool.completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append(append(append([]string(nil), start...), tc.lines...), idle)
			var tools []fed
			for _, e := range feed(t, "kilocode", mapping.Primary, false, lines...) {
				if e.Type == "tool.requested" || e.Type == "tool.completed" || e.Type == "tool.failed" {
					tools = append(tools, e)
				}
			}
			if got := types(tools); got != tc.want {
				t.Errorf("tool events %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBusPluginServerExited: the forwarder's end of pipe (the server
// exited) cancels the turn it cut, by shutdown, and leaves a finished one
// alone; the next server's turn is a run of its own.
func TestBusPluginServerExited(t *testing.T) {
	user := func(id string) string {
		return ocLine("message.updated", `{"sessionID":"s","info":{"id":"`+id+`","role":"user","sessionID":"s"}}`)
	}
	end := `{"kind":"end","session":"s","reason":"shutdown"}`
	evs := feed(t, "opencode", mapping.Primary, false,
		ocLine("session.created", `{"sessionID":"s","info":{"id":"s"}}`), user("msg_1"), end,
		user("msg_2"), ocLine("session.idle", `{"sessionID":"s"}`), end)
	var runs []fed
	for _, e := range evs {
		if e.Type == "run.started" || e.Type == "run.cancelled" || e.Type == "run.finished" {
			runs = append(runs, e)
		}
	}
	if got := types(runs); got != "run.started run.cancelled run.started run.finished" {
		t.Fatalf("runs %q", got)
	}
	if runs[1].Data["by"] != "shutdown" || runs[1].Run != "msg_1" || runs[2].Run != "msg_2" {
		t.Errorf("runs %+v", runs)
	}
}

// TestBusQueuedTurn: a prompt sent while a turn runs, which the server
// answers as a turn of its own after that turn's idle (Kilo 7.7.7 queues
// it; its plugin channel has no session.turn.* events), is a run of its
// own; an answer re-sent after idle for a turn already run opens nothing.
func TestBusQueuedTurn(t *testing.T) {
	msg := func(id, role, parent string) string {
		return ocLine("message.updated", `{"sessionID":"s","info":{"id":"`+id+`","role":"`+role+`","parentID":"`+parent+`","sessionID":"s"}}`)
	}
	idle := ocLine("session.idle", `{"sessionID":"s"}`)
	created := ocLine("session.created", `{"sessionID":"s","info":{"id":"s"}}`)
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"queued prompt (Kilo)", []string{created, msg("msg_1", "user", ""), msg("msg_2", "assistant", "msg_1"),
			msg("msg_3", "user", ""), idle, msg("msg_4", "assistant", "msg_3"), idle},
			"run.started:msg_1 run.finished:msg_1 run.started:msg_3 run.finished:msg_3"},
		{"steered in one loop (OpenCode)", []string{created, msg("msg_1", "user", ""), msg("msg_2", "assistant", "msg_1"),
			msg("msg_3", "user", ""), msg("msg_4", "assistant", "msg_3"), idle, msg("msg_4", "assistant", "msg_3")},
			"run.started:msg_1 run.finished:msg_1"},
		{"answer re-sent after idle", []string{created, msg("msg_1", "user", ""), msg("msg_2", "assistant", "msg_1"),
			idle, msg("msg_2", "assistant", "msg_1")},
			"run.started:msg_1 run.finished:msg_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs []string
			for _, e := range feed(t, "kilocode", mapping.Primary, false, tc.lines...) {
				if e.Type == "run.started" || e.Type == "run.finished" || e.Type == "run.cancelled" {
					runs = append(runs, e.Type+":"+e.Run)
				}
			}
			if got := strings.Join(runs, " "); got != tc.want {
				t.Errorf("runs %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBusCutAnswer: an assistant answer the server closes with neither a
// finish nor an error was cut (Kilo 7.7.7 marks it so when SIGTERM stops a
// turn mid-retry, then goes idle): the idle cancels the run, claiming no
// cause; an answer that finishes is a finished run, and a later finished
// answer of the same turn undoes the cut.
func TestBusCutAnswer(t *testing.T) {
	asst := func(id, finish string) string {
		f := ""
		if finish != "" {
			f = `,"finish":"` + finish + `"`
		}
		return ocLine("message.updated", `{"sessionID":"s","info":{"id":"`+id+`","role":"assistant","parentID":"msg_1","sessionID":"s","time":{"created":1,"completed":2}`+f+`}}`)
	}
	for _, tc := range []struct {
		name, want string
		answers    []string
	}{
		{"cut", "run.cancelled", []string{asst("msg_2", "")}},
		{"finished", "run.finished", []string{asst("msg_2", "stop")}},
		{"cut, then finished", "run.finished", []string{asst("msg_2", ""), asst("msg_3", "stop")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, vendor := range []string{"kilocode", "opencode"} {
				lines := append([]string{ocLine("session.created", `{"sessionID":"s","info":{"id":"s"}}`),
					ocLine("message.updated", `{"sessionID":"s","info":{"id":"msg_1","role":"user","sessionID":"s"}}`)},
					tc.answers...)
				lines = append(lines, ocLine("session.idle", `{"sessionID":"s"}`))
				var end []fed
				for _, e := range feed(t, vendor, mapping.Primary, false, lines...) {
					if e.Type == "run.cancelled" || e.Type == "run.finished" || e.Type == "run.failed" {
						end = append(end, e)
					}
				}
				if got := types(end); got != tc.want {
					t.Errorf("%s: terminal %q, want %q", vendor, got, tc.want)
				} else if tc.want == "run.cancelled" && len(end[0].Data) != 0 {
					t.Errorf("%s: %v claims a cause", vendor, end[0].Data)
				}
			}
		})
	}
}
