package mapping

import (
	"encoding/json"
	"strconv"
	"testing"
)

// extDraftView is the comparable face of a Draft in the Cline, Hermes and
// Antigravity table tests.
type extDraftView struct {
	Type       string         `json:"type"`
	Subject    string         `json:"subject,omitempty"`
	Run        string         `json:"run,omitempty"`
	Step       string         `json:"step,omitempty"`
	Severity   string         `json:"severity,omitempty"`
	Mark       string         `json:"mark,omitempty"`
	SubjectRef string         `json:"subject_ref,omitempty"`
	CauseRef   string         `json:"cause_ref,omitempty"`
	Data       map[string]any `json:"data"`
}

// extMoment is one step of a table test: the argv hook (Antigravity), the
// payload, and the drafts it must produce as JSON (extDraftView list).
type extMoment struct {
	hook string
	raw  string
	want string
}

// extRunSteps maps the moments in order against one state, with nonces
// n1, n2, ..., and compares each step's drafts.
func extRunSteps(t *testing.T, v Vendor, st *State, steps []extMoment) {
	t.Helper()
	for i, s := range steps {
		m := Moment{Hook: s.hook, Raw: []byte(s.raw), Nonce: "n" + strconv.Itoa(i+1)}
		ds, err := v.Map(m, st)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		views := make([]extDraftView, 0, len(ds))
		for _, d := range ds {
			views = append(views, extDraftView{d.Type, d.Subject, d.Run, d.Step, d.Severity, d.Mark, d.SubjectRef, d.CauseRef, d.Data})
		}
		got, _ := json.Marshal(views)
		var wantV []extDraftView
		if err := json.Unmarshal([]byte(s.want), &wantV); err != nil {
			t.Fatalf("step %d: bad want: %v", i+1, err)
		}
		want, _ := json.Marshal(wantV)
		if string(got) != string(want) {
			t.Errorf("step %d (%s):\n got  %s\n want %s", i+1, s.hook, got, want)
		}
	}
}

func TestExtHelpers(t *testing.T) {
	raw := []byte(`{"i":812,"f":1.5,"big":12345678901234,"s":"7","b":false,"n":null,"neg":-3}`)
	for _, c := range []struct {
		name string
		got  any
		want any
	}{
		{"int", extInt(raw, "i"), int64(812)},
		{"float", extInt(raw, "f"), 1.5},
		{"big", extInt(raw, "big"), int64(12345678901234)},
		{"int of string", extInt(raw, "s"), nil},
		{"int absent", extInt(raw, "x"), nil},
		{"bool", extBool(raw, "b"), false},
		{"bool absent", extBool(raw, "n"), nil},
		{"step int", extStep(raw, "i"), "812"},
		{"step neg", extStep(raw, "neg"), "-3"},
		{"step float", extStep(raw, "f"), "1.5"},
		{"step string", extStep(raw, "s"), "7"},
		{"step null", extStep(raw, "n"), ""},
		{"digest null", extDigest(raw, "n"), ""},
		{"digest absent", extDigest(raw, "x"), ""},
		{"value null", Value(raw, "n"), nil},
		{"dotted", extDottedType("cline", "some_future_hook"), "x.cline.some.future.hook"},
		{"dotted one word", extDottedType("hermes", "verify"), "x.hermes.hook.verify"},
		{"dotted camel", extDottedType("hermes", "PreVerify"), "x.hermes.pre.verify"},
		{"dotted empty", extDottedType("cline", ""), "x.cline.hook.unknown"},
		{"dotted hostile", extDottedType("cline", "../a b/*"), "x.cline.a.b"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
}
