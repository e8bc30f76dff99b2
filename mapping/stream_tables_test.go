package mapping_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/internal/pins"
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
