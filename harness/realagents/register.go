package realagents

import (
	"fmt"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/installer"
)

// Register wires the run's agent exactly as `aep-hook install <agent>`
// does (the installer's own plan at the user's scope, merged into what
// Setup wrote), with the harness recorder registered in place of aep-hook;
// with hooks false it removes the registration as `aep-hook uninstall`
// does. So every recording also checks the installer's registration
// against the real agent.
func (r *Run) Register(hooks bool) error {
	name := firstNonEmpty(r.Agent.Hooks, r.Agent.Name)
	a, ok := installer.Lookup(name)
	if !ok {
		return fmt.Errorf("aep-hook install knows no agent %q", name)
	}
	e := installer.Env{Home: r.Home, Dir: r.Work, Binary: r.H.Self, Program: r.Recorder(),
		Getenv: r.Getenv, Now: time.Now}
	if err := Install(a, e, !hooks); err != nil {
		return err
	}
	r.Unregistered = !hooks
	return nil
}

// Install applies the installer's own plan for agent a in e at the user's
// scope (its uninstall plan when remove is set), as `aep-hook install`
// does.
func Install(a installer.Agent, e installer.Env, remove bool) error {
	plan := installer.PlanInstall
	if remove {
		plan = installer.PlanUninstall
	}
	cs, err := plan(a, e, installer.User)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if _, err := installer.Apply(c, e.Now()); err != nil {
			return err
		}
	}
	return nil
}

// Recorder is the program registered in place of aep-hook: `<harness>
// hook`, which saves each firing and pipes it into aep-hook. It carries
// the recorder's settings itself (through env), because some agents run
// hooks without their own environment (Cline's hub daemon). Plugin
// forwarders (pi) start the harness binary as `<harness> forward pi`.
func (r *Run) Recorder() string {
	words := []string{"env", EnvRecordDir + "=" + r.Dir, EnvAEPHook + "=" + r.H.AEPHook, r.H.Self, "hook"}
	for i, w := range words {
		words[i] = installer.Quote(w)
	}
	return strings.Join(words, " ")
}

// Getenv reads the agent's environment.
func (r *Run) Getenv(k string) string {
	for _, kv := range r.Env {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

// registered is a toolsScenario config: the registration installed, or
// removed.
func registered(r *Run, hooks bool) error { return r.Register(hooks) }
