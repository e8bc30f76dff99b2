package mapping

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fleetNormalize round-trips v through JSON so numbers and slices compare.
func fleetNormalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// fleetStep is one moment of a stateful table test and the drafts it must
// give (Type, Subject, Run, Mark, CauseRef, SubjectRef and Data compared;
// Data nil means "not compared").
type fleetStep struct {
	raw   string
	nonce string
	want  []Draft
}

// fleetRun feeds steps in order through v against one state.
func fleetRun(t *testing.T, v Vendor, steps []fleetStep) {
	t.Helper()
	st := &State{}
	for i, s := range steps {
		ds, err := v.Map(Moment{Raw: []byte(s.raw), Nonce: s.nonce}, st)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if len(ds) != len(s.want) {
			t.Fatalf("step %d (%s): got %d drafts %+v, want %d", i, s.raw, len(ds), ds, len(s.want))
		}
		for j, w := range s.want {
			d := ds[j]
			if d.Type != w.Type || d.Subject != w.Subject || d.Run != w.Run || d.Mark != w.Mark ||
				d.CauseRef != w.CauseRef || d.SubjectRef != w.SubjectRef || (w.Severity != "" && d.Severity != w.Severity) ||
				(w.Session != "" && d.Session != w.Session) {
				t.Errorf("step %d draft %d:\n got %+v\nwant %+v", i, j, d, w)
			}
			if w.Data != nil && !reflect.DeepEqual(fleetNormalize(t, d.Data), fleetNormalize(t, w.Data)) {
				t.Errorf("step %d draft %d data:\n got %v\nwant %v", i, j, d.Data, w.Data)
			}
		}
	}
}

func TestFleetIdentifyAndReply(t *testing.T) {
	for _, v := range []Vendor{Gemini(), Qwen(), VSCode(), KimiCode()} {
		tests := []struct {
			raw, hook, session string
		}{
			{`{"hook_event_name":"Stop","session_id":"s1"}`, "Stop", "s1"},
			{`{"hook_event_name":"SubagentStart"}`, "SubagentStart", UnknownSession},
			{`{"hook_event_name":"Stop","session_id":""}`, "Stop", UnknownSession},
			{`not json`, "", UnknownSession},
		}
		for _, tc := range tests {
			h, s := v.Identify(Moment{Raw: []byte(tc.raw)})
			if h != tc.hook || s != tc.session {
				t.Errorf("%s Identify(%s) = %q, %q; want %q, %q", v.Name, tc.raw, h, s, tc.hook, tc.session)
			}
		}
		want := "{}"
		switch v.Name {
		case "kimi-code":
			want = "" // any stdout reaches Kimi's model (TestKimiCodeReplyIsEmpty)
		case "gemini-cli":
			want = "" // "{}" to BeforeToolSelection changes Gemini's model request
		}
		if got := string(v.Reply("PreToolUse")); got != want {
			t.Errorf("%s Reply = %q, want %q", v.Name, got, want)
		}
		if _, ok := Lookup(v.Name); !ok {
			t.Errorf("%s not registered", v.Name)
		}
	}
}

func TestFleetPairing(t *testing.T) {
	st := &State{}
	a := pairOpen(Moment{Nonce: "n1"}, st, "read", "d1")
	b := pairOpen(Moment{Nonce: "n2"}, st, "read", "d1")
	c := pairOpen(Moment{Nonce: "n3"}, st, "read", "d2")
	if got := pairClose(st, "read", "d2"); got != c {
		t.Errorf("close d2 = %q, want %q", got, c)
	}
	if got := pairClose(st, "read", "d1"); got != a {
		t.Errorf("close d1 = %q, want %q (FIFO)", got, a)
	}
	if got := pairClose(st, "read", "d1"); got != b {
		t.Errorf("close d1 = %q, want %q", got, b)
	}
	if got := pairClose(st, "read", "d1"); got != "" {
		t.Errorf("close empty = %q, want none", got)
	}
	for i := 0; i < maxPending+5; i++ {
		pairOpen(Moment{Nonce: "x" + string(rune('a'+i))}, st, "t", "d")
	}
	if q, _ := st.Get(pendingKey("t", "d")); len(strings.Fields(q)) != maxPending {
		t.Errorf("queue length %d, want %d", len(strings.Fields(q)), maxPending)
	}
	if got := pairOpen(Moment{}, st, "t", "d"); got != "" {
		t.Errorf("pairOpen without nonce = %q, want none", got)
	}
}

// FuzzFleetMap feeds arbitrary payloads to the four fleet tables: no panic,
// every draft typed, and every type a legal dotted name.
func FuzzFleetMap(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"t","tool_input":{"a":1}}`,
		`{"hook_event_name":"AfterTool","tool_name":"t","tool_response":{"error":"boom"}}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":[{"type":"text","text":"x"},{"type":"image"}],"is_steer":true}`,
		`{"hook_event_name":"PermissionResult","tool_call_id":"c","decision":"rejected"}`,
		`{"hook_event_name":"TodoCreated","phase":"validation"}`,
		`{"hook_event_name":"Notification","notification_type":"permission_prompt"}`,
		`{"hook_event_name":"💥 weird-Hook!","tool_input":null}`,
		`[1,2`,
	} {
		f.Add([]byte(s), "nonce")
	}
	vs := []Vendor{Gemini(), Qwen(), VSCode(), KimiCode()}
	f.Fuzz(func(t *testing.T, raw []byte, nonce string) {
		for _, v := range vs {
			st := &State{}
			for i := 0; i < 2; i++ { // twice: the second sees state
				ds, err := v.Map(Moment{Raw: raw, Nonce: nonce}, st)
				if err != nil {
					t.Fatalf("%s: %v", v.Name, err)
				}
				for _, d := range ds {
					if d.Type == "" || strings.Contains(d.Type, "..") || strings.HasSuffix(d.Type, ".") {
						t.Fatalf("%s: bad type %q", v.Name, d.Type)
					}
					if d.Data == nil {
						t.Fatalf("%s: %s with nil data", v.Name, d.Type)
					}
				}
			}
		}
	})
}
