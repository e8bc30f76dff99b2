package realagents

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/installer"
)

// TestRegisterIsInstall: every hook agent the harness drives is wired by
// the installer's own registration, pointed at the recorder: each event
// install registers is there running `<recorder> <agent>`, and the
// uninstall the model-request comparison uses leaves none.
func TestRegisterIsInstall(t *testing.T) {
	var wired []string
	for _, a := range Agents() {
		ia, ok := installer.Lookup(a.Name)
		if !ok {
			continue // stream agents (Kimi web) register nothing
		}
		wired = append(wired, a.Name)
		t.Run(a.Name, func(t *testing.T) {
			sb, err := NewSandbox("aep-register-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(sb.Dir) })
			r := &Run{H: &Harness{Self: "/opt/harness/realagents", AEPHook: "/opt/aep/aep-hook"}, Agent: a,
				Dir: sb.Dir, Home: sb.Home, Work: sb.Work, Env: sb.Env}
			// The vendor homes Setup points elsewhere, as the agents see them.
			r.Setenv("CODEX_HOME", sb.Home+"/.codex")
			r.Setenv("KIMI_CODE_HOME", sb.Home+"/.kimi-code")
			e := installer.Env{Home: r.Home, Dir: r.Work, Binary: r.H.Self, Program: r.Recorder(), Getenv: r.Getenv}
			if err := r.Register(true); err != nil {
				t.Fatal(err)
			}
			st := installer.Inspect(ia, e, installer.User)
			if st.Err != nil || len(st.Missing) > 0 || len(st.Foreign) > 0 {
				t.Fatalf("after Register: err %v, missing %v, foreign %v", st.Err, st.Missing, st.Foreign)
			}
			if len(st.Found) != len(ia.Hooks) {
				t.Fatalf("found %d registrations, install registers %d", len(st.Found), len(ia.Hooks))
			}
			for _, f := range st.Found {
				want := r.Recorder() + " " + a.Name
				if a.Name == "pi" {
					want = "/opt/harness/realagents forward pi"
				}
				if f.Command != want {
					t.Errorf("%s runs %q, want %q", f.Event, f.Command, want)
				}
			}
			if err := r.Register(false); err != nil {
				t.Fatal(err)
			}
			if st := installer.Inspect(ia, e, installer.User); len(st.Found) > 0 {
				t.Errorf("after the uninstall: %v", st.Found)
			}
		})
	}
	for _, want := range []string{"claude-code", "codex", "gemini-cli", "qwen-code", "kimi-code", "cline", "pi"} {
		if !slices.Contains(wired, want) {
			t.Errorf("the harness drives no %s through the installer (wired: %s)", want, strings.Join(wired, ", "))
		}
	}
}
