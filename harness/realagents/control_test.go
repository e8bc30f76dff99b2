package realagents

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/answer"
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
// only observed in the same session on the same machine (beside a stream,
// where every firing is held, within downDelay): finding no relay added
// no wait the agent could notice (it did not sit out its budget).
func TestRecordedDownNoDelay(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, fx := range fxs {
		c := fx.Scenario.Control
		// A follower's recording has no firings to time: it holds nothing
		// (the server waits for whoever answers), and its scenario proves
		// the down relay by the agent going on as ever.
		if c == nil || !c.Down || len(fx.Firings) == 0 && len(fx.Stream) > 0 {
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
		if slowest == 0 && len(fx.Stream) > 0 {
			// Beside a stream (the pi extension's) every firing is a held
			// run: none is only observed, so the yardstick is the bound
			// the recording was held to, far under any budget.
			slowest = downDelay.Milliseconds()
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
	checked := 0
	eachHeldAnswer(t, func(fx Fixture, i int, a *answer.Answer) {
		if a.Text == "" || a.Option != "" || a.Values != nil {
			return
		}
		f := fx.Firings[i]
		if !strings.Contains(f.Stdout, `"behavior":"deny"`) || !strings.Contains(f.Stdout, a.Text) {
			t.Errorf("%s: firing %d answered %q replied %s, want a deny carrying the text", filepath.Base(fx.Dir), f.N, a.Text, f.Stdout)
		}
		checked++
	})
	if checked == 0 {
		t.Error("no recording answered with guidance text")
	}
}

// TestHeldElapsed: a control recording keeps every firing's elapsed time
// and fails when, with the relay down, a held firing waited; any other
// recording keeps none.
func TestHeldElapsed(t *testing.T) {
	in := func(s string) json.RawMessage { return json.RawMessage(s) }
	firings := func(held int64) []Firing {
		return []Firing{
			{N: 1, ElapsedMS: 120, Input: in(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"touch x"}}`)},
			{N: 2, ElapsedMS: held, Input: in(`{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"touch x"}}`)},
		}
	}
	tests := []struct {
		name    string
		control *Control
		held    int64
		wantErr bool
		keep    bool
	}{
		{"down, answered at once", &Control{Down: true}, 130, false, true},
		{"down, the hook waited", &Control{Down: true}, 3000, true, true},
		{"relay up, a long wait is the answer's", &Control{Budget: "60s"}, 3000, false, true},
		{"no control: no timings kept", nil, 3000, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Run{Agent: &Agent{Name: "claude-code"}, Scenario: &Scenario{Control: tt.control}}
			fs := firings(tt.held)
			err := heldElapsed(r, fs)
			if (err != nil) != tt.wantErr {
				t.Errorf("error %v, want one: %v", err, tt.wantErr)
			}
			if got := fs[0].ElapsedMS != 0 && fs[1].ElapsedMS != 0; got != tt.keep {
				t.Errorf("timings kept %v, want %v", got, tt.keep)
			}
		})
	}
}

// eachHeldAnswer calls check for every held firing, in every recorded
// fixture whose relay was up, that the scenario answered over control: the
// fixture, the firing's index and the answer sent.
func eachHeldAnswer(t *testing.T, check func(fx Fixture, i int, a *answer.Answer)) {
	t.Helper()
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
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
			if n < len(c.Answers) && c.Answers[n].Answer != nil {
				check(fx, i, c.Answers[n].Answer)
			}
		}
	}
}
