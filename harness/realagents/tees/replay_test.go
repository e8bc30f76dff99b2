package tees

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// harness replays through an aep-hook binary built once; this test binary
// is the scripted peer (`<test binary> peer ...`).
var harness *Harness

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "peer" {
		os.Exit(RunPeer(os.Args[2:]))
	}
	dir, err := os.MkdirTemp("", "aep-tee-replay-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin := filepath.Join(dir, "aep-hook")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/aep-hook").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build aep-hook: %v\n%s", err, out)
		os.Exit(1)
	}
	harness = &Harness{Fixtures: "../../../fixtures", AEPHook: bin, Self: []string{os.Args[0], "peer"}, Log: os.Stderr}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestReplayTees replays every recorded real-peer session through the live
// tee at every capture ceiling: both directions byte for byte, the tee's
// exit as the recorded one, and the whole record true.
func TestReplayTees(t *testing.T) {
	recs, err := LoadRecordings(harness.Fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no recordings under fixtures/{acp,agui}/recorded")
	}
	sch := truth.For(t)
	for _, rec := range recs {
		for _, c := range Ceilings {
			t.Run(rec.Name()+"@"+c, func(t *testing.T) {
				t.Parallel()
				r := harness.Replay(rec, c, t.TempDir(), sch)
				for _, p := range r.Problems {
					t.Error(p)
				}
				if !r.OK() {
					t.Logf("record: %s", truth.Summary(r.Logs))
				}
			})
		}
	}
}

// TestReplayCatches: a replay reports a byte the tee would have changed in
// either direction, an exit it would have changed, and a record that
// contradicts the facts (each tampering below must be caught).
func TestReplayCatches(t *testing.T) {
	load := func(t *testing.T, name string) Recording {
		t.Helper()
		rec, err := LoadRecording(filepath.Join(harness.Fixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	// firstLine returns the index of the first entry of dir.
	firstLine := func(rec Recording, dir string) int {
		for i, e := range rec.Entries {
			if e.Dir == dir {
				return i
			}
		}
		t.Fatalf("no %s line", dir)
		return -1
	}
	for _, c := range []struct {
		name, recording, want string
		tamper                func(*Recording)
	}{
		{"agent to editor", "acp/recorded/acp-example-agent-allow", "the editor read", func(r *Recording) {
			r.Entries[firstLine(*r, "a2c")].Line += " "
		}},
		{"editor to agent", "acp/recorded/acp-example-agent-allow", "the agent read", func(r *Recording) {
			r.Entries[firstLine(*r, "c2a")].Line += " "
		}},
		{"exit status", "acp/recorded/acp-example-agent-crash", "the tee ended", func(r *Recording) {
			e := &r.Entries[len(r.Entries)-1]
			e.Signal = "SIGTERM"
		}},
		{"denied call", "acp/recorded/acp-example-agent-reject", "tool.denied", func(r *Recording) { r.Meta.Denied = 0 }},
		{"upstream to UI", "agui/recorded/tools", "the UI read", func(r *Recording) { r.Exchanges[0].Received += "x" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := load(t, c.recording)
			c.tamper(&rec)
			res := harness.Replay(rec, "metadata", t.TempDir(), nil)
			for _, p := range res.Problems {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Errorf("not caught (want %q): %v", c.want, res.Problems)
		})
	}
}
