package mapping

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/redact"
)

// The fleet tables' pin check below runs every entry of a vendor's Annex A
// pin through Vendor.Map alone (fresh state per entry) and projects the
// drafts onto the default posture with the schemas' x-aep-capture levels:
// it pins the tables independently of the emitter, which the conformance
// harness covers end to end.

// fleetSpecDir returns the aep-spec checkout, or "" when it is absent.
func fleetSpecDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("AEP_CONFORMANCE_DIR"); d != "" {
		return filepath.Clean(filepath.Join(d, "..", "..", ".."))
	}
	d := filepath.Join("..", "..", "shared", "aep-spec")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// fleetSchema is the capture-annotated shape of one payload property.
type fleetSchema struct {
	Capture    string                 `json:"x-aep-capture"`
	Properties map[string]fleetSchema `json:"properties"`
}

func fleetLoadSchema(t *testing.T, spec, typ string) fleetSchema {
	t.Helper()
	var s fleetSchema
	b, err := os.ReadFile(filepath.Join(spec, "schemas", "types", typ+".schema.json"))
	if err != nil {
		return s // x.* and unknown types: no schema
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("schema %s: %v", typ, err)
	}
	return s
}

// fleetProject keeps the fields of data at or below ceiling: schema levels
// for core types (unannotated = metadata, AEP-0002 §5.1 rule 4), the draft's
// Levels for x.* types (undeclared = full); objects emptied by the cut drop.
func fleetProject(s fleetSchema, data map[string]any, levels map[string]redact.Level, ceiling redact.Level, ext bool) map[string]any {
	out := map[string]any{}
	for k, v := range data {
		lvl := redact.Metadata
		var sub fleetSchema
		if ext {
			lvl = redact.Full
			if l, ok := levels[k]; ok {
				lvl = l
			}
		} else if p, ok := s.Properties[k]; ok {
			sub = p
			if p.Capture != "" {
				lvl, _ = redact.ParseLevel(p.Capture)
			}
		}
		if lvl > ceiling {
			continue
		}
		if m, ok := v.(map[string]any); ok && !ext {
			pm := fleetProject(sub, m, nil, ceiling, false)
			if len(pm) == 0 && len(m) > 0 {
				continue
			}
			out[k] = pm
			continue
		}
		out[k] = v
	}
	return out
}

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

type fleetExpected struct {
	Type    string         `json:"type"`
	Data    map[string]any `json:"data"`
	Subject string         `json:"subject"`
	Step    string         `json:"step"`
}

type fleetEntry struct {
	Input    json.RawMessage `json:"input"`
	Expected json.RawMessage `json:"expected"`
}

// fleetPinCheck runs every hooks entry and the fallback of pin file against v.
func fleetPinCheck(t *testing.T, v Vendor, file string) {
	spec := fleetSpecDir(t)
	if spec == "" {
		t.Skip("aep-spec checkout not found (../../shared/aep-spec)")
	}
	b, err := os.ReadFile(filepath.Join(spec, "conformance", "fixtures", "mappings", file))
	if err != nil {
		t.Fatalf("pin %s: %v", file, err)
	}
	var pin struct {
		Hooks    map[string]fleetEntry `json:"hooks"`
		Fallback fleetEntry            `json:"fallback"`
	}
	if err := json.Unmarshal(b, &pin); err != nil {
		t.Fatalf("pin %s: %v", file, err)
	}
	entries := pin.Hooks
	entries["fallback"] = pin.Fallback
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		e := entries[name]
		t.Run(name, func(t *testing.T) {
			var want []fleetExpected
			switch s := strings.TrimSpace(string(e.Expected)); {
			case s == "null" || s == "":
			case strings.HasPrefix(s, "["):
				if err := json.Unmarshal(e.Expected, &want); err != nil {
					t.Fatal(err)
				}
			default:
				var one fleetExpected
				if err := json.Unmarshal(e.Expected, &one); err != nil {
					t.Fatal(err)
				}
				want = []fleetExpected{one}
			}
			st := &State{}
			ds, err := v.Map(Moment{Raw: e.Input, Nonce: "01NONCE"}, st)
			if err != nil {
				t.Fatalf("Map: %v", err)
			}
			if why, ok := fleetPinDisagrees[v.Name+"/hooks/"+name]; ok {
				if len(ds) == len(want) && len(ds) > 0 && ds[0].Type == want[0].Type {
					t.Errorf("listed as disagreeing with the real agent but maps as pinned: %s", why)
				}
				return
			}
			if len(ds) != len(want) {
				t.Fatalf("got %d drafts %+v, want %d", len(ds), ds, len(want))
			}
			for i, d := range ds {
				ceiling := redact.Metadata
				if strings.HasPrefix(d.Type, "attention.") {
					ceiling = redact.Redacted
				}
				got := fleetProject(fleetLoadSchema(t, spec, d.Type), d.Data, d.Levels, ceiling, strings.HasPrefix(d.Type, "x."))
				w := want[i]
				if d.Type != w.Type || d.Subject != w.Subject || d.Step != w.Step {
					t.Errorf("draft %d: type/subject/step %q/%q/%q, want %q/%q/%q", i, d.Type, d.Subject, d.Step, w.Type, w.Subject, w.Step)
				}
				if w.Data == nil {
					w.Data = map[string]any{}
				}
				if g, x := fleetNormalize(t, got), fleetNormalize(t, w.Data); !reflect.DeepEqual(g, x) {
					t.Errorf("draft %d data at the default posture:\n got %v\nwant %v", i, g, x)
				}
			}
		})
	}
}

func TestFleetPins(t *testing.T) {
	for _, tc := range []struct {
		v    Vendor
		file string
	}{
		{Gemini(), "gemini-cli.json"},
		{Qwen(), "qwen-code.json"},
		{VSCode(), "vscode.json"},
		{KimiCode(), "kimi-code.json"},
	} {
		t.Run(tc.v.Name, func(t *testing.T) { fleetPinCheck(t, tc.v, tc.file) })
	}
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
				d.CauseRef != w.CauseRef || d.SubjectRef != w.SubjectRef || (w.Severity != "" && d.Severity != w.Severity) {
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
		if v.Name == "kimi-code" {
			want = "" // any stdout reaches Kimi's model (TestKimiCodeReplyIsEmpty)
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

// fleetPinDisagrees mirrors internal/pins/disagree.go for the entries this
// test checks (package mapping cannot import pins, which imports it).
var fleetPinDisagrees = map[string]string{
	"gemini-cli/hooks/PreCompress": "Gemini CLI 0.61.0 fires PreCompress{trigger:auto} before every model call",
}
