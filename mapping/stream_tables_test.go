package mapping_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// fed is one emitted event, as the stream-table tests read it.
type fed struct {
	Type    string         `json:"type"`
	Session string         `json:"session"`
	Run     string         `json:"run"`
	Step    string         `json:"step"`
	Subject string         `json:"subject"`
	Data    map[string]any `json:"data"`
}

// feed runs JSON lines through vendor's table (pins.Feed) and decodes the
// events.
func feed(t *testing.T, vendor string, mode mapping.Mode, deltas bool, lines ...string) []fed {
	t.Helper()
	var in [][]byte
	for _, l := range lines {
		in = append(in, []byte(l))
	}
	out, err := pins.Feed(vendor, in, mode, deltas)
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]fed, len(out))
	for i, l := range out {
		if err := json.Unmarshal(l, &evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return evs
}

func types(evs []fed) string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return strings.Join(ts, " ")
}

// piLine is a forwarder line of session s.
func piLine(s, event string) string { return `{"session":{"id":"` + s + `"},"event":` + event + `}` }

func TestPiSequences(t *testing.T) {
	p := func(ev string) string { return piLine("s1", ev) }
	cases := []struct {
		name   string
		deltas bool
		lines  []string
		want   string
		check  func(t *testing.T, evs []fed)
	}{
		{name: "a loop with a retry is two runs; a duplicate start opens nothing", lines: []string{
			p(`{"type":"session_start","reason":"startup"}`),
			p(`{"type":"session_start","reason":"new"}`),
			p(`{"type":"agent_start"}`), p(`{"type":"agent_start"}`),
			p(`{"type":"agent_end","messages":[{"role":"assistant","stopReason":"error","errorMessage":"500"}]}`),
			p(`{"type":"agent_start"}`),
			p(`{"type":"agent_end","messages":[{"role":"assistant","stopReason":"stop"}]}`),
			p(`{"type":"agent_settled","aborted":false}`),
		}, want: "session.started run.started run.failed run.started run.finished x.pi.agent.settled",
			check: func(t *testing.T, evs []fed) {
				if evs[1].Run == evs[3].Run || evs[1].Run != evs[2].Run {
					t.Errorf("runs %q %q %q: want the retry a run of its own", evs[1].Run, evs[2].Run, evs[3].Run)
				}
			}},
		{name: "an empty end with no open run is dropped", lines: []string{
			p(`{"type":"agent_end","messages":[]}`),
		}, want: ""},
		{name: "quitting mid-loop cancels the run, then ends the session", lines: []string{
			p(`{"type":"session_start","reason":"startup"}`), p(`{"type":"agent_start"}`),
			p(`{"type":"tool_execution_start","toolCallId":"c1","toolName":"bash","args":{"command":"sleep 9"}}`),
			p(`{"type":"session_shutdown","reason":"quit"}`),
		}, want: "session.started run.started tool.requested run.cancelled session.ended"},
		{name: "turns stamp the step; tools pair and split on isError", lines: []string{
			p(`{"type":"agent_start"}`), p(`{"type":"turn_start","turnIndex":3}`),
			p(`{"type":"tool_execution_start","toolCallId":"c1","toolName":"read","args":{"path":"x"}}`),
			p(`{"type":"tool_execution_end","toolCallId":"c1","toolName":"read","isError":true,"durationMs":7,"result":{"content":[{"type":"text","text":"ENOENT"}]}}`),
			p(`{"type":"turn_end","turnIndex":3}`),
		}, want: "run.started run.step.started tool.requested tool.failed run.step.finished",
			check: func(t *testing.T, evs []fed) {
				if evs[1].Step != "3" || evs[4].Step != "3" {
					t.Errorf("steps %q %q, want 3", evs[1].Step, evs[4].Step)
				}
				if evs[3].Data["duration_ms"] != float64(7) {
					t.Errorf("tool.failed data %v, want duration_ms 7", evs[3].Data)
				}
			}},
		{name: "stream updates only behind the opt-in", lines: []string{
			p(`{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"text_delta","delta":"x"}}`),
		}, want: ""},
		{name: "stream updates with the opt-in", deltas: true, lines: []string{
			p(`{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"text_delta","delta":"x"}}`),
		}, want: "x.pi.message.delta"},
		{name: "a resume after the end is a new AEP session naming the old one", lines: []string{
			p(`{"type":"session_start","reason":"startup"}`), p(`{"type":"session_shutdown","reason":"quit"}`),
			p(`{"type":"session_start","reason":"resume"}`), p(`{"type":"agent_start"}`),
			p(`{"type":"agent_end","messages":[{"role":"assistant","stopReason":"stop"}]}`),
		}, want: "session.started session.ended session.started run.started run.finished",
			check: func(t *testing.T, evs []fed) {
				r := evs[2]
				if !strings.HasPrefix(r.Session, "s1~r") || r.Data["resumed_from"] != "s1" || r.Data["trigger"] != "resume" {
					t.Errorf("resumed session.started %+v", r)
				}
				if evs[3].Session != r.Session || evs[4].Session != r.Session {
					t.Errorf("the resumed run went to %q, want %q", evs[3].Session, r.Session)
				}
			}},
		{name: "an extension's dialog is vendor-scoped, its title gated", lines: []string{
			p(`{"type":"ui_prompt_start","reason":"ui_prompt","kind":"select","title":"Allow rm -rf /?"}`),
		}, want: "x.pi.ui_prompt.start",
			check: func(t *testing.T, evs []fed) {
				if _, ok := evs[0].Data["title"]; ok || evs[0].Data["kind"] != "select" {
					t.Errorf("data %v: want kind, no title at metadata", evs[0].Data)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := feed(t, "pi", "", c.deltas, c.lines...)
			if got := types(evs); got != c.want {
				t.Fatalf("events %q\nwant   %q", got, c.want)
			}
			if c.check != nil {
				c.check(t, evs)
			}
		})
	}
}

// kwFrame is a kimi web session event frame of session s.
func kwFrame(seq int, typ, payload string, volatile bool) string {
	v := ""
	if volatile {
		v = `,"volatile":true`
	}
	return `{"type":"` + typ + `","seq":` + strconv.Itoa(seq) + `,"session_id":"s1","timestamp":"2026-11-30T16:00:00.000Z","epoch":"ep1","payload":{"type":"` + typ + `","agentId":"main","sessionId":"s1"` + payload + `}` + v + `}`
}

func TestKimiWebSequences(t *testing.T) {
	turnStart := kwFrame(1, "turn.started", `,"turnId":0,"origin":{"kind":"user"},"prompt":"go"`, false)
	approval := kwFrame(3, "event.approval.requested", `,"approval_id":"approval_1","tool_call_id":"call_1","tool_name":"Bash","action":"Running: rm x"`, false)
	cases := []struct {
		name   string
		mode   mapping.Mode
		deltas bool
		lines  []string
		want   string
		check  func(t *testing.T, evs []fed)
	}{
		{name: "a rejected approval denies its call once, by the runtime", mode: mapping.Primary, lines: []string{
			turnStart, approval,
			kwFrame(4, "event.approval.resolved", `,"approval_id":"approval_1","decision":"rejected","feedback":"not now"`, false),
			kwFrame(5, "permission.approval.resolved", `,"id":"approval_1"`, false),
			kwFrame(6, "tool.call.started", `,"turnId":0,"toolCallId":"call_1","name":"Bash","args":{"command":"rm x"}`, false),
			kwFrame(7, "tool.result", `,"turnId":0,"toolCallId":"call_1","output":"not run: rejected","isError":true`, false),
			kwFrame(8, "turn.ended", `,"turnId":0,"reason":"completed"`, false),
		}, want: "run.started attention.requested attention.answered attention.resolved tool.requested tool.denied run.finished",
			check: func(t *testing.T, evs []fed) {
				if evs[5].Data["by"] != "runtime" {
					t.Errorf("tool.denied %v", evs[5].Data)
				}
				if evs[2].Subject != evs[3].Subject || evs[2].Subject == "approval_1" {
					t.Errorf("the answer and resolution name the request event: %q %q", evs[2].Subject, evs[3].Subject)
				}
			}},
		{name: "answers keyed by question text become the fields' ids", mode: mapping.Primary, lines: []string{
			turnStart,
			kwFrame(2, "event.question.requested", `,"question_id":"question_1","questions":[{"id":"q_0","question":"Which env?","options":[{"id":"opt_0_0","label":"dev"}],"allow_other":true}]`, false),
			kwFrame(3, "event.question.answered", `,"question_id":"question_1","answers":{"Which env?":"dev"}`, false),
		}, want: "run.started attention.requested attention.answered attention.resolved"},
		{name: "a turn's end whose start was never seen closes nothing", mode: mapping.Primary, lines: []string{
			kwFrame(9, "turn.ended", `,"turnId":4,"reason":"completed"`, false),
		}, want: ""},
		{name: "a failed turn is run.failed with the vendor's word", mode: mapping.Primary, lines: []string{
			turnStart, kwFrame(2, "turn.ended", `,"turnId":0,"reason":"failed"`, false),
		}, want: "run.started run.failed",
			check: func(t *testing.T, evs []fed) {
				if evs[1].Data["reason"] != "failed" {
					t.Errorf("run.failed %v", evs[1].Data)
				}
			}},
		{name: "steps carry the vendor's step number", mode: mapping.Primary, lines: []string{
			turnStart,
			kwFrame(2, "turn.step.started", `,"turnId":0,"step":1,"stepId":"u-1"`, false),
			kwFrame(3, "turn.step.interrupted", `,"turnId":0,"step":1,"reason":"aborted"`, false),
			kwFrame(4, "turn.ended", `,"turnId":0,"reason":"cancelled"`, false),
		}, want: "run.started run.step.started run.step.finished run.cancelled",
			check: func(t *testing.T, evs []fed) {
				if evs[1].Step != "1" || evs[2].Step != "1" || evs[2].Data["status"] != "interrupted" {
					t.Errorf("steps %+v %+v", evs[1], evs[2])
				}
			}},
		{name: "volatile frames and bus echoes never emit", mode: mapping.Primary, lines: []string{
			kwFrame(1, "assistant.delta", `,"delta":"hi"`, true),
			kwFrame(1, "permission.approval.requested", `,"id":"approval_1"`, false),
		}, want: ""},
		{name: "token deltas only behind the opt-in", mode: mapping.Primary, deltas: true, lines: []string{
			kwFrame(1, "assistant.delta", `,"delta":"hi"`, true),
			kwFrame(1, "agent.status.updated", ``, true),
		}, want: "x.kimi-code.web.assistant.delta"},
		{name: "companion mode only names the channel's moments", lines: []string{
			turnStart, approval, kwFrame(4, "turn.ended", `,"turnId":0,"reason":"completed"`, false),
		}, want: "x.kimi-code.web.turn.started x.kimi-code.web.event.approval.requested x.kimi-code.web.turn.ended"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := feed(t, "kimi-web", c.mode, c.deltas, c.lines...)
			if got := types(evs); got != c.want {
				t.Fatalf("events %q\nwant   %q", got, c.want)
			}
			if c.check != nil {
				c.check(t, evs)
			}
		})
	}
}
