package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/internal/printable"
)

// InstallCmd is `aep-hook install`: registers aep-hook in each agent's own
// settings, merging with what is there.
type InstallCmd struct {
	Agents []string `arg:"" optional:"" help:"Agents to wire (default with --all: every agent found on this machine)."`
	All    bool     `help:"Every agent found (binary on PATH or its settings folder)."`
	Scope  string   `help:"user (every project) or project (the working directory)." default:"user" enum:"user,project"`
	DryRun bool     `name:"dry-run" help:"Print the changes as a diff; write nothing."`
	Binary string   `help:"The aep-hook binary to register (default: this one, by absolute path)." type:"path"`
}

// Run plans every change, then (unless --dry-run) applies them, backups first.
func (c *InstallCmd) Run(s *Streams) error {
	return runInstall(s, c.Agents, c.All, c.Scope, c.DryRun, c.Binary, false)
}

// UninstallCmd is `aep-hook uninstall`: removes exactly the registrations
// install added.
type UninstallCmd struct {
	Agents []string `arg:"" optional:"" help:"Agents to unwire (default: every agent)."`
	Scope  string   `help:"user or project." default:"user" enum:"user,project"`
	DryRun bool     `name:"dry-run" help:"Print the changes as a diff; write nothing."`
}

// Run removes aep-hook's registrations.
func (c *UninstallCmd) Run(s *Streams) error {
	return runInstall(s, c.Agents, true, c.Scope, c.DryRun, "", true)
}

// installEnv is the installer's view of this machine.
func installEnv(binary string) (installer.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return installer.Env{}, fmt.Errorf("no home directory: %w", err)
	}
	dir, err := os.Getwd()
	if err != nil {
		return installer.Env{}, err
	}
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return installer.Env{}, fmt.Errorf("cannot find this binary's path: %w; pass --binary", err)
		}
	}
	if abs, err := filepath.Abs(binary); err == nil {
		binary = abs
	}
	if real, err := filepath.EvalSymlinks(binary); err == nil {
		binary = real
	}
	return installer.Env{Home: home, Dir: dir, Binary: binary, Getenv: os.Getenv,
		LookPath: exec.LookPath, Now: time.Now}, nil
}

func runInstall(s *Streams, names []string, all bool, scope string, dry bool, binary string, remove bool) error {
	sc, err := installer.ParseScope(scope)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if len(names) == 0 && !all {
		return exitError{code: 2, msg: "name the agents to wire (" + strings.Join(installer.Names(), ", ") + ") or pass --all"}
	}
	for _, n := range names {
		if _, ok := installer.Lookup(n); !ok {
			return exitError{code: 2, msg: fmt.Sprintf("unknown agent %q (known: %s)", n, strings.Join(installer.Names(), ", "))}
		}
	}
	e, err := installEnv(binary)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	if !remove && strings.HasPrefix(e.Binary, os.TempDir()) {
		fmt.Fprintf(s.Err, "warning: %s is under the temporary directory (go run?); build it (make build) or pass --binary\n", e.Binary)
	}
	agents, skipped := pickAgents(names, e, sc, remove)
	for _, m := range skipped {
		fmt.Fprintln(s.Out, m)
	}
	if len(agents) == 0 {
		if !remove {
			fmt.Fprintln(s.Out, "no agent found to wire; name one explicitly (aep-hook install codex)")
		}
		return nil
	}
	failed := false
	for _, a := range agents {
		var cs []installer.Change
		if remove {
			cs, err = installer.PlanUninstall(a, e, sc)
		} else {
			cs, err = installer.PlanInstall(a, e, sc)
		}
		if err != nil {
			failed = true
			fmt.Fprintf(s.Out, "%-12s %v\n", a.Name, err)
			continue
		}
		if err := applyChanges(s, a, e, sc, cs, dry, remove); err != nil {
			failed = true
			fmt.Fprintf(s.Out, "%-12s %v\n", a.Name, err)
		}
	}
	if !remove && !dry {
		fmt.Fprintln(s.Out, "\nCheck with: aep-hook doctor")
	}
	if failed {
		return exitError{code: 1}
	}
	return nil
}

// pickAgents resolves the agent list: named ones, or with --all every
// agent present (install) or every agent (uninstall); agents without the
// scope are skipped with a message unless named.
func pickAgents(names []string, e installer.Env, sc installer.Scope, remove bool) ([]installer.Agent, []string) {
	var out []installer.Agent
	var skipped []string
	if len(names) > 0 {
		for _, n := range names {
			if a, ok := installer.Lookup(n); ok {
				out = append(out, a)
			}
		}
		return out, nil
	}
	for _, a := range installer.Agents() {
		switch {
		case !a.Supports(sc):
			if !remove {
				skipped = append(skipped, fmt.Sprintf("%-12s skipped: registers at %s scope only", a.Name, otherScope(sc)))
			}
		case remove || a.Present(e):
			out = append(out, a)
		default:
			skipped = append(skipped, fmt.Sprintf("%-12s not found (no %s on PATH, no settings folder)", a.Name, strings.Join(a.Binaries, "/")))
		}
	}
	return out, skipped
}

func otherScope(s installer.Scope) installer.Scope {
	if s == installer.User {
		return installer.Project
	}
	return installer.User
}

// printDiff prints a diff of settings text, each line made printable (a
// project's settings file is outside input).
func printDiff(w io.Writer, d string) {
	for _, l := range strings.SplitAfter(d, "\n") {
		if l != "" {
			fmt.Fprintln(w, printable.String(strings.TrimSuffix(l, "\n")))
		}
	}
}

// applyChanges prints (and unless dry applies) one agent's changes.
func applyChanges(s *Streams, a installer.Agent, e installer.Env, sc installer.Scope, cs []installer.Change, dry, remove bool) error {
	changed := 0
	var notes []string
	for _, c := range cs {
		notes = append(notes, c.Notes...)
		if !c.Changed() {
			continue
		}
		changed++
		if dry {
			printDiff(s.Out, installer.Diff(c.Path, c.Old, c.New))
			continue
		}
		backup, err := installer.Apply(c, e.Now())
		if err != nil {
			return err
		}
		if backup != "" {
			fmt.Fprintf(s.Out, "%-12s backup %s\n", a.Name, backup)
		}
	}
	where := a.Path(e, sc)
	switch {
	case changed == 0 && remove:
		fmt.Fprintf(s.Out, "%-12s nothing of aep-hook's in %s\n", a.Name, where)
	case changed == 0:
		fmt.Fprintf(s.Out, "%-12s already registered in %s; nothing changed\n", a.Name, where)
	case dry:
		fmt.Fprintf(s.Out, "%-12s would change %d file(s) (dry run: nothing written)\n", a.Name, changed)
	case remove:
		fmt.Fprintf(s.Out, "%-12s removed aep-hook's hooks from %s\n", a.Name, where)
	default:
		fmt.Fprintf(s.Out, "%-12s registered %d events in %s\n", a.Name, len(a.Hooks), where)
	}
	for _, n := range notes {
		fmt.Fprintf(s.Out, "%-12s note: %s\n", "", n)
	}
	return nil
}
