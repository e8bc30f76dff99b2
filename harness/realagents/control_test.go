package realagents

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// TestControlScenariosRecorded: every control scenario the harness defines
// has its recording, so one never stands in the code unproven.
func TestControlScenariosRecorded(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, fx := range fxs {
		if fx.Scenario.Control != nil {
			have[fx.Scenario.Agent+"/"+fx.Scenario.Name] = true
		}
	}
	for _, a := range Agents() {
		for _, s := range a.Scenarios {
			if s.Control == nil {
				continue
			}
			if name := a.Name + "/" + s.Name; !have[name] {
				t.Errorf("%s: a control scenario with no recording under fixtures/%s/recorded", name, a.Name)
			}
		}
	}
}

// TestRecordedDownNoDelay: in each recording made with the relay down, the
// hook answered every held firing no slower than the slowest firing it
// only observed in the same session on the same machine: finding no relay
// added no wait the agent could notice (it did not sit out its budget).
func TestRecordedDownNoDelay(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, fx := range fxs {
		c := fx.Scenario.Control
		if c == nil || !c.Down {
			continue
		}
		name := fx.Scenario.Agent + "/" + fx.Scenario.Name
		v, ok := mapping.Lookup(fx.Scenario.Agent)
		if !ok {
			t.Errorf("%s: no table", name)
			continue
		}
		held := heldFirings(v, fx.Firings, c.Tools)
		if len(held) == 0 {
			t.Errorf("%s: no held firing: the recording proves nothing about a down relay", name)
			continue
		}
		var slowest int64
		for i, f := range fx.Firings {
			if _, ok := held[i]; !ok && f.ElapsedMS > slowest {
				slowest = f.ElapsedMS
			}
		}
		for i := range held {
			f := fx.Firings[i]
			switch {
			case f.ElapsedMS == 0 || slowest == 0:
				t.Errorf("%s: firing %d (%s): no elapsed time recorded (re-record it)", name, f.N, f.Hook())
			case f.ElapsedMS > slowest:
				t.Errorf("%s: firing %d (%s) took %d ms with no relay, the slowest observed firing %d ms", name, f.N, f.Hook(), f.ElapsedMS, slowest)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Error("no recording with the relay down")
	}
}

// TestRecordedGuidanceReachesVendor: a held request answered with free
// text is replied to as a refusal carrying that text, in the vendor's own
// field for the model's message, in every recording.
func TestRecordedGuidanceReachesVendor(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, fx := range fxs {
		c := fx.Scenario.Control
		if c == nil || c.Down {
			continue
		}
		v, ok := mapping.Lookup(fx.Scenario.Agent)
		if !ok {
			continue
		}
		for i, n := range heldFirings(v, fx.Firings, c.Tools) {
			if n >= len(c.Answers) || c.Answers[n].Answer == nil {
				continue
			}
			a := c.Answers[n].Answer
			if a.Text == "" || a.Option != "" || a.Values != nil {
				continue
			}
			f := fx.Firings[i]
			if !strings.Contains(f.Stdout, `"behavior":"deny"`) || !strings.Contains(f.Stdout, a.Text) {
				t.Errorf("%s: firing %d answered %q replied %s, want a deny carrying the text", filepath.Base(fx.Dir), f.N, a.Text, f.Stdout)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("no recording answered with guidance text")
	}
}
