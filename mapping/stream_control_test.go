package mapping

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func newState() *State { return &State{Entries: map[string]string{}, Touch: map[string]uint64{}} }

// busEvent is one /event data line's moment.
func busEvent(typ, props string, control bool) Moment {
	return Moment{Raw: []byte(`{"type":"` + typ + `","properties":` + props + `}`),
		Facts: Facts{Kind: KindEvent, Name: typ}, Mode: Primary, Control: control, Nonce: "n"}
}

// kwFrame is one kimi web session event frame's moment.
func kwFrame(typ, payload string, control bool) Moment {
	return Moment{Raw: []byte(`{"type":"` + typ + `","seq":1,"session_id":"s","payload":{"agentId":"main",` + payload + `}}`),
		Facts: Facts{Kind: KindEvent, Name: typ, Session: "s"}, Mode: Primary, Control: control, Nonce: "n"}
}

const (
	ocAsk = `{"id":"per_1","sessionID":"s","permission":"bash","patterns":["ls /"]}`
	ocQ   = `{"id":"que_1","sessionID":"s","questions":[{"question":"Which db?","header":"DB","options":[{"label":"PG"},{"label":"SQLite"}]},{"question":"Extras?","header":"X","multiple":true,"options":[{"label":"cache"},{"label":"queue"}]}]}`
	kwAsk = `"approval_id":"ap_1","tool_call_id":"c1","tool_name":"Bash","action":"Running: ls"`
	kwQ2  = `"question_id":"question_1","questions":[` +
		`{"id":"q_0","question":"Which env?","options":[{"id":"opt_0_0","label":"dev"},{"id":"opt_0_1","label":"prod"}],"multi_select":false,"allow_other":true},` +
		`{"id":"q_1","question":"Extras?","options":[{"id":"opt_1_0","label":"cache"},{"id":"opt_1_1","label":"queue"}],"multi_select":true,"allow_other":true}]`
)

// TestStreamRespondVia: a stream's ask carries the server's options and
// respond_via control only when the bridge holds it over a live link;
// otherwise, and in companion mode, it stays the read-only channel's card
// with no way to answer, and nothing is held.
func TestStreamRespondVia(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vendor  string
		m       Moment
		held    bool
		options string
	}{
		{"opencode live", "opencode-sse", busEvent("permission.asked", ocAsk, true), true, "[once always reject]"},
		{"opencode no link", "opencode-sse", busEvent("permission.asked", ocAsk, false), true, ""},
		{"kilo question live", "kilocode-sse", busEvent("question.asked", ocQ, true), true, ""},
		{"kimi web live", "kimi-web", kwFrame("event.approval.requested", kwAsk, true), true, "[approved rejected]"},
		{"kimi web no link", "kimi-web", kwFrame("event.approval.requested", kwAsk, false), true, ""},
		{"kimi web question live", "kimi-web", kwFrame("event.question.requested", kwQ2, true), true, ""},
		{"kimi web question no link", "kimi-web", kwFrame("event.question.requested", kwQ2, false), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := Lookup(tc.vendor)
			if got := v.Hold(tc.m, Gate{}) != nil; got != tc.held {
				t.Fatalf("held %v", got)
			}
			comp := tc.m
			comp.Mode = Companion
			if v.Hold(comp, Gate{}) != nil {
				t.Error("a companion holds a request")
			}
			ds, err := v.Map(tc.m, newState())
			if err != nil {
				t.Fatal(err)
			}
			var req *Draft
			for i := range ds {
				if ds[i].Type == "attention.requested" {
					req = &ds[i]
				}
			}
			if req == nil {
				t.Fatalf("no request in %v", ds)
			}
			via, opts := req.Data["respond_via"], req.Data["options"]
			if tc.m.Control != (fmt.Sprint(via) == "[control]") || !tc.m.Control && via != nil {
				t.Errorf("respond_via %v with control %v", via, tc.m.Control)
			}
			var ids []string
			for _, o := range optionsOf(anySlice(opts)) {
				ids = append(ids, o.ID)
			}
			if got := strings.Join(ids, " "); tc.options != "" && "["+got+"]" != tc.options || tc.options == "" && opts != nil {
				t.Errorf("options %v, want %s", opts, tc.options)
			}
		})
	}
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

// TestStreamHoldReplies: an answer becomes the server's own reply body.
func TestStreamHoldReplies(t *testing.T) {
	oc, _ := Lookup("opencode-sse")
	kw, _ := Lookup("kimi-web")
	perm := oc.Hold(busEvent("permission.asked", ocAsk, true), Gate{})
	q := oc.Hold(busEvent("question.asked", ocQ, true), Gate{})
	ap := kw.Hold(kwFrame("event.approval.requested", kwAsk, true), Gate{})
	kq := kw.Hold(kwFrame("event.question.requested", kwQ2, true), Gate{})
	for _, tc := range []struct {
		name string
		h    *Hold
		a    Answer
		want string
	}{
		{"once", perm, Answer{Option: "once"}, `{"reply":"once"}`},
		{"allow word", perm, Answer{Text: "yes"}, `{"reply":"once"}`},
		{"always", perm, Answer{Option: "always"}, `{"reply":"always"}`},
		{"text rejects with a message", perm, Answer{Text: "use staging"}, `{"message":"use staging","reply":"reject"}`},
		{"question labels", q, Answer{Values: map[string]any{"1": "2", "2": []any{"1", "2"}}}, `{"answers":[["SQLite"],["cache","queue"]]}`},
		{"question other text", q, Answer{Values: map[string]any{"1": "MySQL", "2": []any{"2"}}}, `{"answers":[["MySQL"],["queue"]]}`},
		{"question refused", q, Answer{Option: "reject"}, string(BusQuestionRejected)},
		{"question refused in words", q, Answer{Text: "Reject"}, string(BusQuestionRejected)},
		{"question declined, a sender's word for any form", q, Answer{Option: "decline"}, string(BusQuestionRejected)},
		{"approved", ap, Answer{Option: "approved"}, `{"decision":"approved"}`},
		{"rejected with feedback", ap, Answer{Text: "not on prod"}, `{"decision":"rejected","feedback":"not on prod"}`},
		{"kimi web choices", kq, Answer{Values: map[string]any{"q_0": "opt_0_1", "q_1": []any{"opt_1_0", "opt_1_1"}}},
			`{"answers":{"q_0":{"kind":"single","option_id":"opt_0_1"},"q_1":{"kind":"multi","option_ids":["opt_1_0","opt_1_1"]}}}`},
		{"kimi web typed text and a skipped question", kq, Answer{Values: map[string]any{"q_0": "staging"}},
			`{"answers":{"q_0":{"kind":"other","text":"staging"},"q_1":{"kind":"skipped"}}}`},
		{"kimi web choices with typed text", kq, Answer{Values: map[string]any{"q_0": "opt_0_0", "q_1": []any{"opt_1_1", "a log"}}},
			`{"answers":{"q_0":{"kind":"single","option_id":"opt_0_0"},"q_1":{"kind":"multi_with_other","option_ids":["opt_1_1"],"other_text":"a log"}}}`},
		{"kimi web dismissed", kq, Answer{Option: "dismiss"}, string(KimiWebQuestionDismissed)},
		{"kimi web declined", kq, Answer{Option: "decline"}, string(KimiWebQuestionDismissed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.h.Resolve(tc.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := tc.h.Reply(a)
			if err != nil || string(b) != tc.want {
				t.Fatalf("reply %s %v, want %s", b, err, tc.want)
			}
		})
	}
}

// TestControlAnswered: the server's report settles a request a command
// was noted on via control, caused by the command, only when it applied
// the command's option; a different report is the agent's own UI's.
func TestControlAnswered(t *testing.T) {
	v, _ := Lookup("opencode-sse")
	for _, tc := range []struct {
		name, reported, via string
	}{
		{"the command's reply", "once", "control"},
		{"the TUI answered otherwise first", "reject", "oob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newState()
			m := busEvent("permission.asked", ocAsk, true)
			if _, err := v.Map(m, st); err != nil {
				t.Fatal(err)
			}
			h := v.Hold(m, Gate{})
			ack := h.NoteDrafts(st, Answer{Option: "once"}, "alice", "cmd1")
			if len(ack) != 1 || ack[0].Type != "control.accepted" || ack[0].Cause != "cmd1" {
				t.Fatalf("ack %v", ack)
			}
			ds, _ := v.Map(busEvent("permission.replied", `{"sessionID":"s","requestID":"per_1","reply":"`+tc.reported+`"}`, false), st)
			if len(ds) != 2 || ds[0].Type != "attention.answered" || ds[1].Type != "attention.resolved" {
				t.Fatalf("drafts %v", ds)
			}
			if ds[0].Data["via"] != tc.via {
				t.Errorf("via %v, want %s", ds[0].Data["via"], tc.via)
			}
			if control := tc.via == "control"; control != (ds[0].Cause == "cmd1" && ds[1].Cause == "cmd1" && ds[0].Data["by"] == "alice") {
				t.Errorf("causes %q %q by %v", ds[0].Cause, ds[1].Cause, ds[0].Data["by"])
			}
			if Pending(st, busAttnKey("per_1")) {
				t.Error("still pending")
			}
			if again, _ := v.Map(busEvent("permission.replied", `{"sessionID":"s","requestID":"per_1","reply":"once"}`, false), st); len(again) != 0 {
				t.Errorf("a second terminal: %v", again)
			}
		})
	}
}

// FuzzStreamHoldReply feeds the question hold arbitrary questions and
// answer values (both come from outside: the server, the sender): an
// answer the check lets through always becomes one JSON reply body, with
// one list per question.
func FuzzStreamHoldReply(f *testing.F) {
	f.Add(ocQ, `{"1":"2","2":["1"]}`)
	f.Add(`{"id":"q","questions":[{"options":[{"label":""}]}]}`, `{"1":"0"}`)
	f.Add(`{"id":"q","questions":"x"}`, `{}`)
	v, _ := Lookup("opencode-sse")
	f.Fuzz(func(t *testing.T, props, values string) {
		h := v.Hold(busEvent("question.asked", props, true), Gate{})
		if h == nil {
			return
		}
		var vals map[string]any
		if json.Unmarshal([]byte(values), &vals) != nil {
			return
		}
		a, err := h.Resolve(Answer{Values: vals})
		if err != nil {
			return
		}
		b, err := h.Reply(a)
		if err != nil {
			t.Fatalf("reply: %v", err)
		}
		var body struct{ Answers [][]string }
		if err := json.Unmarshal(b, &body); err != nil || !json.Valid(b) {
			t.Fatalf("reply %s: %v", b, err)
		}
	})
}

// TestQuestionRejected: a question the server reports rejected is the
// command's answer (option reject, via control, caused by it) only when a
// command refusing it was noted; rejected in the TUI, or after a command
// that answered it with values, it is dismissed with nothing answered.
// One terminal either way.
func TestQuestionRejected(t *testing.T) {
	v, _ := Lookup("opencode-sse")
	for _, tc := range []struct {
		name   string
		noted  *Answer
		answer bool
	}{
		{"refused over control", &Answer{Option: "reject"}, true},
		{"declined over control", &Answer{Option: "decline"}, true},
		{"rejected in the TUI", nil, false},
		{"rejected in the TUI after values were sent", &Answer{Values: map[string]any{"1": "1"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newState()
			m := busEvent("question.asked", ocQ, true)
			if _, err := v.Map(m, st); err != nil {
				t.Fatal(err)
			}
			if tc.noted != nil {
				v.Hold(m, Gate{}).NoteDrafts(st, *tc.noted, "alice", "cmd1")
			}
			ds, _ := v.Map(busEvent("question.rejected", `{"sessionID":"s","requestID":"que_1"}`, false), st)
			var types []string
			for _, d := range ds {
				types = append(types, d.Type)
			}
			last := ds[len(ds)-1]
			if tc.answer {
				if strings.Join(types, " ") != "attention.answered attention.resolved" {
					t.Fatalf("drafts %v", types)
				}
				if d := ds[0].Data; d["via"] != "control" || d["by"] != "alice" || fmt.Sprint(d["answer"]) != "map[option:"+tc.noted.Option+"]" || ds[0].Cause != "cmd1" {
					t.Errorf("answered %v cause %q", d, ds[0].Cause)
				}
				if last.Data["resolution"] != "answered" || last.Cause != "cmd1" {
					t.Errorf("resolved %v cause %q", last.Data, last.Cause)
				}
			} else if strings.Join(types, " ") != "attention.resolved" || last.Data["resolution"] != "dismissed" {
				t.Fatalf("drafts %v %v", types, last.Data)
			}
			if again, _ := v.Map(busEvent("question.rejected", `{"sessionID":"s","requestID":"que_1"}`, false), st); len(again) != 0 {
				t.Errorf("a second terminal: %v", again)
			}
			if _, left := st.Get(attnNotePrefix + busAttnKey("que_1")); left {
				t.Error("the command's note outlived the request")
			}
		})
	}
}

// TestKimiWebQuestionSettled: the server's report of a question card's
// answer or dismissal is the command's outcome (via control, by the
// sender, caused by the command) only when a command applying it was
// noted; otherwise it is the web UI's: answered out of band, or dismissed
// with nothing answered.
func TestKimiWebQuestionSettled(t *testing.T) {
	v, _ := Lookup("kimi-web")
	answered := kwFrame("event.question.answered", `"question_id":"question_1","answers":{"Which env?":"prod"}`, false)
	dismissed := kwFrame("event.question.dismissed", `"question_id":"question_1"`, false)
	for _, tc := range []struct {
		name   string
		noted  *Answer
		report Moment
		want   string // the answer's via and answer, "" for a dismissal
	}{
		{"answered over control", &Answer{Values: map[string]any{"q_0": "opt_0_1"}}, answered, "control map[values:map[q_0:prod]]"},
		{"answered in the web UI", nil, answered, "oob map[values:map[q_0:prod]]"},
		{"dismissed over control", &Answer{Option: "dismiss"}, dismissed, "control map[option:dismiss]"},
		{"declined over control", &Answer{Option: "decline"}, dismissed, "control map[option:decline]"},
		{"dismissed in the web UI", nil, dismissed, ""},
		{"dismissed in the web UI after values were sent", &Answer{Values: map[string]any{"q_0": "opt_0_1"}}, dismissed, ""},
		{"answered in the web UI after a dismissal was sent", &Answer{Option: "dismiss"}, answered, "oob map[values:map[q_0:prod]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newState()
			for _, m := range []Moment{kwFrame("turn.started", `"turn_id":0`, false), kwFrame("event.question.requested", kwQ2, true)} {
				if _, err := v.Map(m, st); err != nil {
					t.Fatal(err)
				}
			}
			if tc.noted != nil {
				v.Hold(kwFrame("event.question.requested", kwQ2, true), Gate{}).NoteDrafts(st, *tc.noted, "alice", "cmd1")
			}
			ds, _ := v.Map(tc.report, st)
			var types []string
			for _, d := range ds {
				types = append(types, d.Type)
			}
			last := ds[len(ds)-1]
			if tc.want == "" {
				if strings.Join(types, " ") != "attention.resolved" || last.Data["resolution"] != "dismissed" {
					t.Fatalf("drafts %v %v", types, last.Data)
				}
			} else {
				if strings.Join(types, " ") != "attention.answered attention.resolved" || last.Data["resolution"] != "answered" {
					t.Fatalf("drafts %v %v", types, last.Data)
				}
				d := ds[0].Data
				if got := fmt.Sprint(d["via"], " ", d["answer"]); got != tc.want {
					t.Errorf("answered %s, want %s", got, tc.want)
				}
				control := d["via"] == "control"
				if control != (ds[0].Cause == "cmd1" && last.Cause == "cmd1" && d["by"] == "alice") {
					t.Errorf("causes %q %q by %v", ds[0].Cause, last.Cause, d["by"])
				}
			}
			if Pending(st, kwAttn("question_1")) {
				t.Error("still pending")
			}
			if _, left := st.Get(attnNotePrefix + kwAttn("question_1")); left {
				t.Error("the command's note outlived the request")
			}
		})
	}
}
