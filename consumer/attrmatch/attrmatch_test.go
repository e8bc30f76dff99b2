package attrmatch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func event(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The events the spec-text examples are tried against.
const (
	askCC    = `{"type":"attention.requested","agent":"claude-code","session":"s_8f2c","severity":"notice","epoch":0}`
	errCodex = `{"type":"error.raised","agent":"codex","session":"s_1","severity":"error"}`
	deniedCC = `{"type":"tool.denied","agent":"claude-code","session":"s_8f2c","severity":"warning"}`
	deniedOC = `{"type":"tool.denied","agent":"opencode","session":"s_2"}`
	toolInfo = `{"type":"tool.completed","agent":"codex","session":"s_8f2c"}`
	vendorX  = `{"type":"x.acme.session.note","agent":"acme","session":"s_3","acmeteam":"blue","acmeshard":3,"acmebeta":true}`
	bareAttn = `{"type":"attention","agent":"a","session":"s"}`
	epoch2   = `{"type":"run.started","agent":"a","session":"s","epoch":2,"capture":"full"}`
)

// TestSpecExamples: the §6.3 examples and each §6.2 matching rule, written
// from the spec text.
func TestSpecExamples(t *testing.T) {
	cases := []struct {
		filter string
		match  map[string]bool
	}{
		// §6.3 example 1: inclusion of type patterns, and a severity comparison.
		{`{ "type": ["attention.*", "error.*"], "severity": { "gte": "notice" } }`,
			map[string]bool{askCC: true, errCodex: true, deniedCC: false, toolInfo: false}},
		// §6.3 example 2: equality.
		{`{ "session": "s_8f2c" }`, map[string]bool{askCC: true, deniedCC: true, toolInfo: true, errCodex: false}},
		// §6.3 example 3: inclusion on agent, conjunction with an exact type.
		{`{ "agent": ["claude-code", "codex"], "type": "tool.denied" }`,
			map[string]bool{deniedCC: true, deniedOC: false, toolInfo: false}},
		// §6.1: the empty filter matches every event.
		{`{}`, map[string]bool{askCC: true, vendorX: true, bareAttn: true}},
		// §6.2 rule 3: p.* is strictly p followed by a dot.
		{`{"type": "attention.*"}`, map[string]bool{askCC: true, bareAttn: false}},
		// §6.2 rule 3: patterns apply to vendor types.
		{`{"type": "x.acme.*"}`, map[string]bool{vendorX: true, askCC: false}},
		// §6.2 rule 3: patterns compose with exact types in one inclusion.
		{`{"type": ["tool.denied", "x.*"]}`, map[string]bool{deniedOC: true, vendorX: true, askCC: false}},
		// §6.2 rule 4: inclusive bounds, both ends.
		{`{"severity": {"gte": "notice", "lte": "warning"}}`, map[string]bool{askCC: true, deniedCC: true, errCodex: false, toolInfo: false}},
		{`{"severity": {"lte": "info"}}`, map[string]bool{toolInfo: true, askCC: false}},
		// §6.2 rule 5: absent severity is info, capture metadata, epoch 0.
		{`{"severity": "info"}`, map[string]bool{toolInfo: true, deniedOC: true, askCC: false}},
		{`{"capture": "metadata"}`, map[string]bool{toolInfo: true, epoch2: false}},
		{`{"epoch": 0}`, map[string]bool{toolInfo: true, askCC: true, epoch2: false}},
		{`{"epoch": [1, 2]}`, map[string]bool{epoch2: true, toolInfo: false}},
		// §6.2 rule 5: any other absent attribute does not match.
		{`{"subject": "Bash"}`, map[string]bool{toolInfo: false}},
		{`{"run": ["r1", "r2"]}`, map[string]bool{toolInfo: false}},
		// §6.2 rule 2: exact JSON values, no coercion.
		{`{"epoch": "0"}`, map[string]bool{toolInfo: false, askCC: false}},
		{`{"acmeshard": 3}`, map[string]bool{vendorX: true}},
		{`{"acmeshard": "3"}`, map[string]bool{vendorX: false}},
		{`{"acmebeta": true}`, map[string]bool{vendorX: true}},
		{`{"acmebeta": "true"}`, map[string]bool{vendorX: false}},
		// §6.2 rule 1: a legal extension key is accepted; events without it do not match.
		{`{"acmeteam": "blue"}`, map[string]bool{vendorX: true, askCC: false}},
		// A pattern-looking string on another attribute is a plain value.
		{`{"agent": "claude.*"}`, map[string]bool{askCC: false}},
	}
	for _, tc := range cases {
		f, err := Parse([]byte(tc.filter))
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		for ev, want := range tc.match {
			if got := f.Match(event(t, ev)); got != want {
				t.Errorf("%s on %s: got %v, want %v", tc.filter, ev, got, want)
			}
		}
	}
}

// TestInvalidFilters: §6.2 rule 1 and the grammar; fail closed.
func TestInvalidFilters(t *testing.T) {
	for _, f := range []string{
		`{"time": "2026-01-01T00:00:00Z"}`, `{"seq": 1}`, `{"aep": "0.1"}`, `{"traceparent": "x"}`,
		`{"data": {}}`, `{"Data": 1}`, `{"gen_ai.model": "x"}`, `{"thisnameiswaytoolongforanextension": 1}`,
		`{"type": "*"}`, `{"type": []}`, `{"agent": null}`, `{"agent": 1.5}`, `{"agent": {"gte": "info"}}`,
		`{"severity": {"gt": "info"}}`, `{"severity": {"gte": "loud"}}`, `{"severity": {}}`, `{"agent": [["a"]]}`,
		`[]`, `"type"`, `{"type": "a"} {}`,
	} {
		_, err := Parse([]byte(f))
		var inv ErrInvalid
		if !errors.As(err, &inv) {
			t.Errorf("%s: accepted (err %v)", f, err)
		}
	}
}

// TestArgs: the command line's shorthand says the same as the JSON form.
func TestArgs(t *testing.T) {
	cases := []struct {
		args  []string
		match map[string]bool
	}{
		{[]string{"type=attention.*"}, map[string]bool{askCC: true, toolInfo: false}},
		{[]string{"type=attention.*,error.*", "severity>=notice"}, map[string]bool{askCC: true, errCodex: true, deniedCC: false}},
		{[]string{"agent=claude-code,codex", "type=tool.denied"}, map[string]bool{deniedCC: true, deniedOC: false}},
		{[]string{"severity<=info"}, map[string]bool{toolInfo: true, askCC: false}},
		{[]string{"epoch=2"}, map[string]bool{epoch2: true, toolInfo: false}},
		{[]string{"acmeshard=3", "acmebeta=true"}, map[string]bool{vendorX: true}},
		{[]string{`{"session": "s_8f2c"}`, "agent=codex"}, map[string]bool{toolInfo: true, askCC: false}},
	}
	for _, tc := range cases {
		f, err := ParseArgs(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for ev, want := range tc.match {
			if got := f.Match(event(t, ev)); got != want {
				t.Errorf("%v on %s: got %v, want %v", tc.args, ev, got, want)
			}
		}
	}
	for _, bad := range []string{"seq=1", "novalue", "type=*", "severity>=loud"} {
		if _, err := ParseArgs([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"type":["attention.*"],"severity":{"gte":"notice"}}`, `{}`, `{"epoch":0}`} {
		f.Add([]byte(s))
	}
	ev := map[string]any{"type": "attention.requested", "agent": "a", "session": "s"}
	f.Fuzz(func(t *testing.T, b []byte) {
		if flt, err := Parse(b); err == nil {
			flt.Match(ev)
		}
	})
}

func TestValues(t *testing.T) {
	cases := []struct {
		filter, key string
		want        []string
		all         bool
	}{
		{`{}`, "type", nil, true},
		{`{"agent":"codex"}`, "type", nil, true},
		{`{"type":"tool.completed"}`, "type", []string{"tool.completed"}, false},
		{`{"type":["attention.*","tool.denied"]}`, "type", []string{"tool.denied", "attention.*"}, false},
		{`{"source":["aep://h/agent/a",3]}`, "source", []string{"aep://h/agent/a"}, false},
		{`{"severity":{"gte":"notice"}}`, "severity", nil, true},
	}
	for _, c := range cases {
		f, err := Parse([]byte(c.filter))
		if err != nil {
			t.Fatal(err)
		}
		got, all := f.Values(c.key)
		if all != c.all || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s Values(%s) = %v %v, want %v %v", c.filter, c.key, got, all, c.want, c.all)
		}
	}
}

type attrs map[string]any

func (a attrs) Attr(k string) (any, bool) { v, ok := a[k]; return v, ok }

// TestMatchAttrs: an event kept in a caller's own form matches as its map
// does.
func TestMatchAttrs(t *testing.T) {
	f, err := Parse([]byte(`{"type":"attention.*","epoch":0,"acmeteam":"blue"}`))
	if err != nil {
		t.Fatal(err)
	}
	ev := attrs{"type": "attention.requested", "acmeteam": "blue"}
	if !f.MatchAttrs(ev) || !f.Match(map[string]any(ev)) {
		t.Error("no match")
	}
	ev["acmeteam"] = "red"
	if f.MatchAttrs(ev) || f.Match(map[string]any(ev)) {
		t.Error("matched a different extension value")
	}
}
