package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
)

// InstallCmd is `aep-hook install`: registers aep-hook in each agent's own
// settings, merging with what is there.
type InstallCmd struct {
	Agents []string `arg:"" optional:"" help:"Agents to wire, found or not (or --all: every agent found on this machine)."`
	All    bool     `help:"Every agent found (binary on PATH or its settings folder)."`
	Scope  string   `help:"user (every project) or project (the working directory)." default:"user" enum:"user,project"`
	DryRun bool     `name:"dry-run" help:"Say what would change, with a diff of every existing settings file it would edit; write nothing."`
	Binary string   `help:"The aep-hook binary to register (default: this one, by absolute path)." type:"path"`
	OTel   bool     `name:"otel" help:"Also point the agent's OpenTelemetry log export at the sidecar (aep-hook otel) with its bearer token: Codex's config.toml [otel], VS Code's $AEP_HOME/otel.env."`
	// The control posture: held hooks wait for an answer over the relay.
	Control   bool          `help:"Register the hooks of the moments each agent's table can hold (permission prompts, questions, the opt-in gates) with AEP_CONTROL=1 and --relay, so they wait for an answer over the relay and fail open without one. Install again without it to go back to observe-only."`
	Relay     string        `help:"The relay's WebSocket the held hooks dial (with --control; default ws://127.0.0.1:8787/socket)." default:"ws://127.0.0.1:8787/socket" placeholder:"URL"`
	Budget    time.Duration `help:"How long a held hook waits for an answer (with --control; 0: each table's own, 55s)." default:"0s"`
	GateTools []string      `name:"gate-tools" help:"The tools the opt-in gates hold (with --control: Kimi Code's PreToolUse, pi's tool_call); * for every tool." placeholder:"TOOL"`
}

// Run plans every change, then (unless --dry-run) applies them, backups first.
func (c *InstallCmd) Run(s *Streams) error {
	var ctl *installer.Control
	if c.Control && runtime.GOOS == "windows" {
		// The settings ride the command line as POSIX shell assignments,
		// which cmd.exe (what the vendors start hooks with there) does
		// not read.
		return exitError{code: 2, msg: "--control writes shell assignments that cmd.exe does not read: on Windows set AEP_CONTROL=1 and AEP_RELAY in the agent's environment instead"}
	}
	if c.Control {
		ctl = &installer.Control{Relay: c.Relay, Budget: c.Budget, Tools: hookmode.CleanList(c.GateTools)}
		if err := ctl.Check(); err != nil {
			return exitError{code: 2, msg: "--control: " + err.Error()}
		}
	} else if len(c.GateTools) > 0 || c.Budget != 0 {
		return exitError{code: 2, msg: "--gate-tools and --budget go with --control"}
	}
	err := runInstall(s, c.Agents, c.All, c.Scope, c.DryRun, c.Binary, false, ctl)
	if c.OTel {
		if oerr := installOTel(s, c.Agents, c.All, c.DryRun); err == nil {
			err = oerr
		}
	}
	return err
}

// UninstallCmd is `aep-hook uninstall`: removes exactly the registrations
// install added, and what install made for them.
type UninstallCmd struct {
	Agents []string `arg:"" optional:"" help:"Agents to unwire (default, or --all: every agent)."`
	All    bool     `help:"Every agent (the default when none is named)."`
	Scope  string   `help:"user or project." default:"user" enum:"user,project"`
	DryRun bool     `name:"dry-run" help:"Say what would be removed, with a diff of every settings file it would edit; write nothing."`
}

// Run removes aep-hook's registrations.
func (c *UninstallCmd) Run(s *Streams) error {
	if c.All && len(c.Agents) > 0 {
		return exitError{code: 2, msg: "name agents or pass --all, not both"}
	}
	return runInstall(s, c.Agents, true, c.Scope, c.DryRun, "", true, nil)
}

// madeLedger is where install records the folders it creates, in the AEP
// home.
func madeLedger() string {
	return filepath.Join(shim.Config{Home: os.Getenv("AEP_HOME")}.HomeDir(), "install", "made-folders")
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
		LookPath: exec.LookPath, Now: time.Now, Made: madeLedger()}, nil
}

// goRunBinary reports a binary `go run` built: it lives in the build
// cache's temporary work folder and is deleted when go run exits.
func goRunBinary(path string) bool {
	return strings.Contains(filepath.ToSlash(path), "/go-build")
}

func runInstall(s *Streams, names []string, all bool, scope string, dry bool, binary string, remove bool, ctl *installer.Control) error {
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
	if binary == "" {
		binary = s.Self
	}
	e, err := installEnv(binary)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	e.Control = ctl
	if !remove && goRunBinary(e.Binary) {
		fmt.Fprintf(s.Err, "warning: %s is a `go run` build, deleted when go run exits; build it (make install) or pass --binary\n", e.Binary)
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
	r := &installRun{s: s, e: e, sc: sc, dry: dry, remove: remove}
	for _, a := range agents {
		var cs []installer.Change
		if remove {
			cs, err = installer.PlanUninstall(a, e, sc)
		} else {
			cs, err = installer.PlanInstall(a, e, sc)
		}
		if err != nil {
			r.failed++
			fmt.Fprintf(s.Out, "%-12s %v\n", a.Name, err)
			continue
		}
		if err := r.agent(a, cs); err != nil {
			r.failed++
			fmt.Fprintf(s.Out, "%-12s %v\n", a.Name, err)
		}
	}
	r.finish()
	if r.failed > 0 {
		return exitError{code: 1}
	}
	return nil
}

// pickAgents resolves the agent list: named ones, or with --all every
// agent present (install) or every agent (uninstall); agents without the
// scope are skipped with a message unless named.
func pickAgents(names []string, e installer.Env, sc installer.Scope, remove bool) ([]installer.Agent, []string) {
	var out []installer.Agent
	if len(names) > 0 {
		for _, n := range names {
			if a, ok := installer.Lookup(n); ok {
				out = append(out, a)
			}
		}
		return out, nil
	}
	var otherOnly, missing []string
	for _, a := range installer.Agents() {
		switch {
		case !a.Supports(sc):
			if !remove {
				otherOnly = append(otherOnly, a.Name)
			}
		case remove || a.Present(e):
			out = append(out, a)
		default:
			missing = append(missing, a.Name)
		}
	}
	var skipped []string
	if len(missing) > 0 {
		skipped = append(skipped, fmt.Sprintf("%-12s not found (no binary on PATH, no settings folder): %s; name one to wire it anyway", "", strings.Join(missing, ", ")))
	}
	if len(otherOnly) > 0 {
		skipped = append(skipped, fmt.Sprintf("%-12s skipped (they register at %s scope only): %s", "", otherScope(sc), strings.Join(otherOnly, ", ")))
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

// installRun is one install or uninstall: what it changed, per agent, for
// the summary at the end.
type installRun struct {
	s           *Streams
	e           installer.Env
	sc          installer.Scope
	dry, remove bool
	diffs       []string // dry run: the diffs of existing files, shown after the summary lines
	changed     int      // agents changed (or that a dry run would change)
	files       int      // files changed
	unchanged   []string // agents with nothing to do
	failed      int
}

// agent prints (and unless dry applies) one agent's changes: one summary
// line, its backups, and what the vendor needs beyond the file.
func (r *installRun) agent(a installer.Agent, cs []installer.Change) error {
	var notes []string
	var changed []installer.Change
	for _, c := range cs {
		notes = append(notes, c.Notes...)
		if c.Changed() {
			changed = append(changed, c)
		}
	}
	if len(changed) == 0 {
		r.unchanged = append(r.unchanged, a.Name)
		if !r.remove {
			for _, n := range notes {
				fmt.Fprintf(r.s.Out, "%-12s note: %s\n", a.Name, n)
			}
		}
		return nil
	}
	r.changed++
	r.files += len(changed)
	madeBefore := installer.MadeFolders(r.e.Made)
	var backups []string
	if r.dry {
		for _, c := range changed {
			if c.Old != nil && c.New != nil && !c.NoBackup {
				r.diffs = append(r.diffs, installer.Diff(c.Path, c.Old, c.New))
			}
		}
	} else {
		for _, c := range changed {
			backup, err := installer.Apply(c, r.e.Now())
			if err != nil {
				return err
			}
			if backup != "" {
				backups = append(backups, backup)
			}
		}
	}
	fmt.Fprintf(r.s.Out, "%-12s %s\n", a.Name, r.what(a, changed))
	for _, b := range backups {
		fmt.Fprintf(r.s.Out, "%-12s backup of your file first: %s\n", "", b)
	}
	if r.remove && !r.dry {
		var gone []string
		for _, d := range madeBefore {
			if !slices.Contains(installer.MadeFolders(r.e.Made), d) {
				gone = append(gone, d)
			}
		}
		if len(gone) > 0 {
			fmt.Fprintf(r.s.Out, "%-12s removed the folder(s) install made: %s\n", "", strings.Join(gone, ", "))
		}
	}
	if !r.remove {
		for _, n := range notes {
			fmt.Fprintf(r.s.Out, "%-12s note: %s\n", "", n)
		}
	}
	return nil
}

// what says in one line what the changes of one agent do (or would do).
func (r *installRun) what(a installer.Agent, cs []installer.Change) string {
	verb := func(done, would string) string {
		if r.dry {
			return would
		}
		return done
	}
	where := a.Path(r.e, r.sc)
	var aside, main []installer.Change
	for _, c := range cs {
		if strings.Contains(filepath.Base(c.Path), ".aep-hook-backup-") {
			aside = append(aside, c)
		} else {
			main = append(main, c)
		}
	}
	var parts []string
	_, fileSet := a.Format.(installer.FileSet)
	_, plugin := a.Format.(installer.PluginFile)
	switch {
	case len(main) == 0:
	case plugin && r.remove:
		parts = append(parts, verb("removed", "would remove")+" its plugin "+main[0].Path)
	case plugin:
		lines := strings.Count(string(main[0].New), "\n")
		parts = append(parts, fmt.Sprintf("%s its plugin %s (%d lines; `aep-hook plugin %s` prints it)",
			verb("wrote", "would write"), main[0].Path, lines, a.Name))
	case fileSet && r.remove:
		parts = append(parts, fmt.Sprintf("%s %s from %s", verb("removed", "would remove"), count(len(main), "hook script"), where))
	case fileSet:
		parts = append(parts, fmt.Sprintf("%s %s in %s", verb("wrote", "would write"), count(len(main), "hook script"), where))
	case r.remove && main[0].New == nil:
		parts = append(parts, fmt.Sprintf("%s %s (it held only aep-hook's hooks)", verb("removed", "would remove"), where))
	case r.remove:
		parts = append(parts, fmt.Sprintf("%s aep-hook's hooks from %s", verb("removed", "would remove"), where))
	case main[0].Old == nil:
		parts = append(parts, fmt.Sprintf("%s %s with %s", verb("created", "would create"), where, count(len(a.Hooks), "event")))
	default:
		parts = append(parts, fmt.Sprintf("%s %s in %s", verb("registered", "would register"), count(len(a.Hooks), "event"), where))
	}
	if len(aside) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s holding only aep-hook's hooks", verb("removed", "would remove"), count(len(aside), "backup")))
	}
	return strings.Join(parts, "; ")
}

// count is "1 event", "13 events".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// finish prints the summary: the agents that needed nothing, a dry run's
// diffs and totals, and the next step.
func (r *installRun) finish() {
	if len(r.unchanged) > 0 {
		what := "already registered, nothing changed"
		if r.remove {
			what = "nothing of aep-hook's to remove"
		}
		fmt.Fprintf(r.s.Out, "%-12s %s: %s\n", "", what, strings.Join(r.unchanged, ", "))
	}
	if r.dry {
		for _, d := range r.diffs {
			fmt.Fprintln(r.s.Out)
			printDiff(r.s.Out, d)
		}
		fmt.Fprintf(r.s.Out, "\ndry run: %s, %s would change; nothing written. Run it again without --dry-run to apply.\n",
			count(r.changed, "agent"), count(r.files, "file"))
		return
	}
	if !r.remove {
		fmt.Fprintln(r.s.Out, "\nCheck with: aep-hook doctor")
	}
}
