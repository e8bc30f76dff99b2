package realagents

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// bin is the aep-hook binary the replays run, built once.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aep-real-replay-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "aep-hook")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/aep-hook").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build aep-hook: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// schemas loads the AEP schemas, skipping (failing under CI=true) without
// them.
func schemas(t *testing.T) *truth.Schemas {
	t.Helper()
	dir, ok := truth.SchemaDir()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("AEP schemas not found (AEP_SCHEMA_DIR); mandatory under CI=true")
		}
		t.Log("AEP schemas not found (AEP_SCHEMA_DIR): events not schema-checked")
		return nil
	}
	s, err := truth.LoadSchemas(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReplayRecorded replays every recorded real-agent session in
// fixtures/<agent>/recorded/ through the real binary, one process per
// firing, and holds the whole record to what really happened.
func TestReplayRecorded(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fxs) == 0 {
		t.Fatal("no recorded fixtures under fixtures/*/recorded")
	}
	sch := schemas(t)
	for _, fx := range fxs {
		t.Run(fx.Scenario.Agent+"/"+fx.Scenario.Name, func(t *testing.T) {
			t.Parallel()
			r := Replay(bin, fx, t.TempDir(), sch)
			if fx.Scenario.Pending != "" {
				if r.OK() {
					t.Errorf("marked pending (%s) but its record is true now: drop the mark", fx.Scenario.Pending)
				}
				t.Skipf("pending: %s (%d problems)", fx.Scenario.Pending, len(r.Problems))
			}
			for _, p := range r.Problems {
				t.Error(p)
			}
			if !r.OK() {
				t.Logf("record: %s", truth.Summary(r.Logs))
			}
		})
	}
}

// TestReplaySignalled replays a StopFailure the agent signals with SIGTERM
// once the hook has read it (Claude Code -p does so about 50 ms in): the
// hook must still record run.failed, so the turn never ends up drained as
// cancelled.
func TestReplaySignalled(t *testing.T) {
	in := func(s string) json.RawMessage { return json.RawMessage(s) }
	fx := Fixture{
		Scenario: ScenarioFile{Agent: "claude-code", Name: "sigterm-stop-failure",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Failures: 1, Ended: 1}},
		Firings: []Firing{
			{N: 1, Input: in(`{"session_id":"s-sig","hook_event_name":"SessionStart","source":"startup"}`)},
			{N: 2, Input: in(`{"session_id":"s-sig","prompt_id":"p1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`)},
			{N: 3, Signal: "SIGTERM", SignalAfterMS: 50, Input: in(`{"session_id":"s-sig","prompt_id":"p1","hook_event_name":"StopFailure","error":"unknown","last_assistant_message":"API Error: 400"}`)},
			{N: 4, Input: in(`{"session_id":"s-sig","prompt_id":"p1","hook_event_name":"SessionEnd","reason":"other"}`)},
		},
	}
	r := Replay(bin, fx, t.TempDir(), schemas(t))
	for _, p := range r.Problems {
		t.Error(p)
	}
}

// TestRecordedUnsignalled: for an agent whose outcome hooks are not
// reliable (Agent.Unsignalled), each recorded scenario states the facts the
// harness would write for its firings: the scenario's own, with OpenTools
// counted from what the firings left without an outcome.
func TestRecordedUnsignalled(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]*Agent{}
	for _, a := range Agents() {
		if a.Unsignalled != nil {
			agents[a.Name] = a
		}
	}
	checked := 0
	for _, fx := range fxs {
		a := agents[fx.Scenario.Agent]
		if a == nil {
			continue
		}
		for i := range a.Scenarios {
			s := &a.Scenarios[i]
			if s.Name != fx.Scenario.Name {
				continue
			}
			checked++
			if want := scenarioFile(a, s, fx.Firings).Facts; !reflect.DeepEqual(fx.Scenario.Facts, want) {
				t.Errorf("%s/%s: recorded facts %+v, want %+v", a.Name, s.Name, fx.Scenario.Facts, want)
			}
		}
	}
	if checked == 0 {
		t.Error("no recorded scenario of an agent with Unsignalled")
	}
}

func TestKimiUnsignalled(t *testing.T) {
	f := func(hook, call string, more ...string) Firing {
		in := fmt.Sprintf(`{"hook_event_name":%q,"tool_call_id":%q`, hook, call)
		for _, m := range more {
			in += "," + m
		}
		return Firing{Input: json.RawMessage(in + "}")}
	}
	tests := []struct {
		name string
		fs   []Firing
		want int
	}{
		{"every call answered", []Firing{f("PreToolUse", "a"), f("PostToolUse", "a"), f("PreToolUse", "b"), f("PostToolUseFailure", "b")}, 0},
		{"the last call's outcome lost", []Firing{f("PreToolUse", "a"), f("PostToolUse", "a"), f("PreToolUse", "b"), f("Stop", "")}, 1},
		{"a rejection is an outcome", []Firing{f("PreToolUse", "a"), f("PermissionResult", "a", `"decision":"rejected"`)}, 0},
		{"an approval is not", []Firing{f("PreToolUse", "a"), f("PermissionResult", "a", `"decision":"approved"`)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kimiUnsignalled(tt.fs); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}
