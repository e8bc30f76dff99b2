package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/consumer/track"
	"github.com/aep-hook/aep-hook/doctor"
	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// DoctorCmd is `aep-hook doctor`: is every agent wired, trusted and
// recording; the settings in force; this home's failures; apart from them,
// what the agents left open (interrupted turns, runs that never ended:
// facts about the agents, never a problem); the delivery backlog. The
// problems come first, one line each with the command that fixes it; the
// detail follows. Exit status 0 when healthy, 1 when a problem was found,
// 2 for a usage error.
type DoctorCmd struct {
	CaptureFlags
	Last    int  `help:"How many recent failures (and interrupted turns, open runs) to show." default:"20"`
	NoProbe bool `name:"no-probe" help:"Run nothing: no synthetic moment through each registration, no agent CLI's --version."`
	Files   int  `help:"How many of the newest logs to scan for runs that never ended." default:"200"`
	Ack     bool `help:"Acknowledge the failures recorded so far: they stay listed but no longer count as a problem."`
}

// recentFailures is how far back a recorded failure still counts as a
// problem (older ones are shown, not counted).
const recentFailures = 24 * time.Hour

// problem is one finding: what it is about, what is wrong, and the command
// (or step) that fixes it.
type problem struct{ subject, what, fix string }

// doctorRun gathers one report: the detail (printed after the summary)
// and the problems found on the way.
type doctorRun struct {
	c        *DoctorCmd
	detail   bytes.Buffer
	problems []problem
}

func (d *doctorRun) problem(subject, what, fix string) {
	d.problems = append(d.problems, problem{subject, what, fix})
}

// Run prints the report and returns exit status 1 when anything is wrong.
func (c *DoctorCmd) Run(s *Streams) error {
	c.Last = max(c.Last, 0)
	cfg := c.config(os.Getenv)
	home := cfg.HomeDir()
	d := &doctorRun{c: c}
	w := &d.detail
	if c.Ack {
		if err := doctor.Ack(home, time.Now()); err != nil {
			return exitError{code: 1, msg: err.Error()}
		}
		fmt.Fprintf(s.Out, "acknowledged the failures recorded so far (%s); they no longer count as a problem\n\n", doctor.AckPath(home))
	}
	e, err := installEnv(s.Self)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(w, "aep-hook %s at %s\n", version, e.Binary)
	fmt.Fprintf(w, "home:      %s\n", home)
	if err := doctor.Writable(home); err != nil {
		fmt.Fprintf(w, "  PROBLEM the home cannot be written (%v): hooks record nothing there\n", err)
		d.problem("home", fmt.Sprintf("%s cannot be written (%v): hooks record nothing there", home, err),
			fmt.Sprintf("chmod u+w %s, or set AEP_HOME to a folder you own", installer.Quote(home)))
	}
	fmt.Fprintf(w, "logs:      %s\n", cfg.LogRoot())
	c.settingsSection(w, cfg)

	reports := doctor.Agents(doctor.Options{Env: e, Probe: !c.NoProbe, Starts: !c.NoProbe, ProbeEnv: os.Environ()})
	d.agents(reports, e, doctor.Recorded(cfg.LogRoot()), home)
	fs := doctor.ReadFailures(home)
	d.failures(fs, home)
	c.agentsOwnSection(w, fs, cfg.LogRoot())
	c.deliverySection(w, cfg)

	// The summary first, then the detail, then the verdict again: a
	// script reads the exit status, a person the first and last lines.
	if len(d.problems) == 0 {
		fmt.Fprintln(s.Out, "aep-hook doctor: no problems found")
	} else {
		fmt.Fprintf(s.Out, "aep-hook doctor: %s found\n", count(len(d.problems), "problem"))
		for _, p := range d.problems {
			fmt.Fprintf(s.Out, "  PROBLEM %s: %s; fix: %s\n", p.subject, printable.String(p.what), printable.String(p.fix))
		}
	}
	fmt.Fprintln(s.Out)
	s.Out.Write(d.detail.Bytes())
	if len(d.problems) > 0 {
		fmt.Fprintf(s.Out, "\n%s found: fix them as the lines at the top say, then run aep-hook doctor again.\n", count(len(d.problems), "problem"))
		return exitError{code: 1}
	}
	wired := 0
	for _, r := range reports {
		if len(r.Scopes) > 0 {
			wired++
		}
	}
	how := "wired and recording"
	if c.NoProbe {
		how = "wired (not probed: --no-probe)"
	}
	fmt.Fprintf(s.Out, "\nhealthy: %s %s.\n", count(wired, "agent"), how)
	return nil
}

func (c *DoctorCmd) settingsSection(w io.Writer, cfg shim.Config) {
	if p, err := cfg.Policy(); err != nil {
		fmt.Fprintf(w, "capture:   INVALID (%v); hooks fall back to metadata\n", err)
	} else {
		fmt.Fprintf(w, "capture:   %s", p.Default)
		for _, o := range p.Overrides {
			fmt.Fprintf(w, ", %s=%s", o.Pattern, o.Level)
		}
		fmt.Fprintln(w)
	}
	for _, k := range []string{"AEP_HOST", "AEP_HOOK_DEADLINE", "AEP_SECRET_ENV", "AEP_OUT", "AEP_DELIVER_DEADLINE"} {
		if v := os.Getenv(k); v != "" {
			fmt.Fprintf(w, "%-10s %s\n", strings.ToLower(strings.TrimPrefix(k, "AEP_"))+":", shownSetting(k, v))
		}
	}
	if os.Getenv("AEP_TOKEN") != "" {
		fmt.Fprintln(w, "token:     set (not shown)")
	}
}

// shownSetting is a setting as doctor prints it: a destination list with
// the credentials of every item removed whatever its shape, any other
// value with whatever secret it holds removed, both printable.
func shownSetting(name, v string) string {
	switch name {
	case "AEP_OUT":
		return printable.String(redact.Destination(v))
	case "AEP_HOOK_DEADLINE":
		if _, note := hookmode.Deadline(v); note != "" {
			return printable.String(redact.Diagnostic(v)) + " (" + note + ")"
		}
	}
	return printable.String(redact.Diagnostic(v))
}

// agents prints the agents' section and notes its problems: one wired
// agent at least, unless the logs show that something records without a
// registration (a tee, a stream bridge, the OTLP sidecar), and per
// registration whatever keeps it from recording.
func (d *doctorRun) agents(reports []doctor.AgentReport, e installer.Env, recorded []string, home string) {
	w := &d.detail
	wired, unwired, absent := 0, 0, 0
	var found []string
	for _, r := range reports {
		switch {
		case len(r.Scopes) > 0:
			wired++
		case r.Installed:
			unwired++
			found = append(found, r.Agent.Name)
		default:
			absent++
		}
	}
	fmt.Fprintf(w, "\nagents: %d wired, %d installed but not wired, %d not installed\n", wired, unwired, absent)
	switch {
	case wired == 0 && len(recorded) > 0:
		fmt.Fprintf(w, "  note: no agent is wired by install; the logs hold the record of %s (tees, stream bridges, the OTLP sidecar need no registration)\n",
			strings.Join(recorded, ", "))
	case wired == 0:
		fix := "install an agent, then aep-hook install --all (or wire one anyway: aep-hook install claude-code)"
		if len(found) > 0 {
			fix = "aep-hook install --all (it finds " + strings.Join(found, ", ") + ")"
		}
		d.problem("agents", "none is wired and nothing is recorded: aep-hook records nothing", fix)
	}
	for _, r := range reports {
		d.agent(r, e)
		if len(r.Scopes) > 0 {
			d.control(r, home)
		}
	}
}

// control prints a wired agent's control posture: off, or on with the
// relay (reachable or not), the token the held hooks present, what the
// table holds and the budget against the vendor's hook timeout.
func (d *doctorRun) control(r doctor.AgentReport, home string) {
	w := &d.detail
	a := r.Agent
	var found []installer.Found
	for _, sr := range r.Scopes {
		found = append(found, sr.Status.Found...)
	}
	var dial func(string) error
	if !d.c.NoProbe {
		dial = doctor.DialTCP
	}
	p := doctor.Control(a, found, home, dial)
	switch {
	case len(p.Holdable) == 0:
		fmt.Fprintln(w, "    control: none (its table holds no moment: observe-only)")
		return
	case p.Err != nil:
		what := "control setting refused, so the hooks stay observe-only: " + p.Err.Error()
		fmt.Fprintf(w, "    PROBLEM %s\n", printable.String(what))
		d.problem(a.Name, what, "aep-hook install --control "+a.Name)
		return
	case len(p.On) == 0:
		hold := strings.Join(p.Holdable, ", ")
		if p.Gate {
			hold += " as an opt-in gate (--gate-tools)"
		}
		fmt.Fprintf(w, "    control: off (observe-only; aep-hook install --control %s holds %s)\n", a.Name, hold)
		return
	}
	fmt.Fprintf(w, "    control: on for %s, relay %s\n", printable.String(p.Surfaces()), printable.String(redact.Destination(p.Relay)))
	reach := p.Reach
	if reach == "" {
		reach = "not checked (--no-probe)"
	}
	fmt.Fprintf(w, "      relay: %s\n", reach)
	fmt.Fprintf(w, "      token: %s\n", printable.String(p.Token))
	fmt.Fprintf(w, "      %s\n", p.TimeoutText())
	if !p.Fits() {
		what := fmt.Sprintf("the hook timeout (%d s) ends a held hook before its budget (%s): %s's own dialog takes over early", p.Timeout, p.Budget, a.Title)
		fmt.Fprintf(w, "    PROBLEM %s\n", what)
		d.problem(a.Name, what, "aep-hook install --control "+a.Name+" (it widens the timeout), or a smaller --budget")
	}
	if p.Gate && len(p.Tools) == 0 {
		fmt.Fprintln(w, "      note: the gate lists no tool, so it holds nothing (aep-hook install --control --gate-tools TOOL,...)")
	}
}

// installedLine says how an agent was found.
func installedLine(r doctor.AgentReport) string {
	p := r.Presence
	switch {
	case p.Binary != "":
		return "installed (" + p.Binary + ")"
	case p.Folder != "":
		return fmt.Sprintf("installed (its folder %s; %s not on PATH)", p.Folder, strings.Join(r.Agent.Binaries, "/"))
	}
	return "not installed"
}

// agent prints one agent's lines and notes its problems.
func (d *doctorRun) agent(r doctor.AgentReport, e installer.Env) {
	w := &d.detail
	a := r.Agent
	if len(r.Scopes) == 0 {
		hint := ""
		if r.Installed {
			hint = fmt.Sprintf("; not wired (aep-hook install %s)", a.Name)
		}
		fmt.Fprintf(w, "  %-12s %s%s\n", a.Name, installedLine(r), hint)
		return
	}
	fmt.Fprintf(w, "  %-12s %s\n", a.Name, installedLine(r))
	bad := func(what, fix string) {
		fmt.Fprintf(w, "    PROBLEM %s\n", printable.String(what))
		d.problem(a.Name, what, fix)
	}
	if st := r.Start; st != nil {
		if st.OK {
			fmt.Fprintf(w, "    starts: %s --version says %s\n", st.Binary, printable.Clip(st.Version, 60))
		} else {
			bad(fmt.Sprintf("%s does not start on this machine (%s), so its hooks never run", st.Binary, st.Detail),
				fmt.Sprintf("run %s --version to see why (a Node CLI may need a newer Node.js), repair or reinstall %s", installer.Quote(st.Binary), a.Title))
		}
	}
	for _, sr := range r.Scopes {
		st := sr.Status
		fmt.Fprintf(w, "    %s: %d/%d events registered in %s\n", sr.Scope, len(a.Hooks)-len(st.Missing), len(a.Hooks), st.Path)
		reinstall := fmt.Sprintf("aep-hook install %s --scope %s", a.Name, sr.Scope)
		if st.Err != nil {
			bad(fmt.Sprintf("%s cannot be read: %s", st.Path, st.Err), "repair the file (or move it away), then "+reinstall)
		}
		if len(st.Missing) > 0 {
			bad("missing events: "+strings.Join(st.Missing, ", "), reinstall)
		}
		for _, o := range sr.Others {
			if o.Gone {
				bad(fmt.Sprintf("%s registered with %s, which does not exist (moved or deleted): those hooks fail", count(o.Events, "event"), o.Path),
					reinstall+" (registers this binary, "+e.Binary+")")
			} else {
				fmt.Fprintf(w, "    note: %s registered with another aep-hook, %s (this one is %s; %s switches)\n",
					count(o.Events, "event"), printable.String(o.Path), e.Binary, reinstall)
			}
		}
		trusted := true
		if sr.Trust != nil {
			if sr.Trust.OK {
				fmt.Fprintf(w, "    trusted: %s\n", printable.String(sr.Trust.Detail))
			} else {
				trusted = false
				bad("not trusted: "+sr.Trust.Detail, sr.Trust.Fix)
			}
		}
		if p := sr.Probe; p != nil {
			switch {
			case p.OK && trusted:
				fmt.Fprintf(w, "    probe: %s\n", printable.String(p.Detail))
			case p.OK:
				fmt.Fprintf(w, "    probe: %s; but %s itself skips the hooks until they are trusted\n", printable.String(p.Detail), a.Title)
			default:
				bad("the probe records nothing: "+p.Detail+" (ran: "+p.Command+")", "see why by running it by hand: "+p.Fix)
			}
		}
	}
}

// failures shows this home's failures (and only a count of the shared
// fallback's entries for other homes) and notes a problem when any not
// acknowledged is recent. Interrupted turns are not among them
// (agentsOwnSection).
func (d *doctorRun) failures(fs doctor.Failures, home string) {
	w := &d.detail
	c := d.c
	fmt.Fprintln(w)
	show := func(where string, list []shim.Failure) {
		fmt.Fprintf(w, "failures:  %d recorded in %s; the last %d:\n", len(list), where, min(c.Last, len(list)))
		for _, f := range list[max(0, len(list)-c.Last):] {
			printFailure(w, f)
		}
	}
	if len(fs.Own) > 0 {
		show(fs.Path, fs.Own)
	}
	owner := ""
	if fs.Owner != "" {
		owner = ", owned by " + fs.Owner
	}
	if len(fs.Spilled) > 0 {
		show(fmt.Sprintf("the $TMPDIR fallback %s (written when %s could not be; shared by every home of this user%s)", fs.Fallback, home, owner), fs.Spilled)
	}
	if len(fs.Own) == 0 && len(fs.Spilled) == 0 {
		fmt.Fprintln(w, "failures:  none recorded for this home")
	}
	if fs.Others > 0 {
		fmt.Fprintf(w, "           (the $TMPDIR fallback %s%s also holds %d failure(s) of other homes, not shown)\n", fs.Fallback, owner, fs.Others)
	}
	since := time.Now().Add(-recentFailures)
	if acked := doctor.Acked(home); !acked.IsZero() {
		fmt.Fprintf(w, "           (acknowledged up to %s with aep-hook doctor --ack: those no longer count)\n", acked.UTC().Format(time.RFC3339))
		if acked.After(since) {
			since = acked
		}
	}
	if n := fs.Recent(since); n > 0 {
		fmt.Fprintf(w, "  PROBLEM %d failure(s) in the last 24 hours not acknowledged (see above)\n", n)
		d.problem("failures", fmt.Sprintf("%d in the last 24 hours, the newest: %s", n, newestFailure(fs)),
			"read them under failures below; once dealt with, aep-hook doctor --ack stops counting them")
	}
}

// newestFailure is the newest failure in a few words.
func newestFailure(fs doctor.Failures) string {
	var newest shim.Failure
	for _, f := range append(append([]shim.Failure(nil), fs.Own...), fs.Spilled...) {
		if f.Time > newest.Time {
			newest = f
		}
	}
	return strings.Join(nonEmpty(newest.Adapter, newest.Stage+":"), " ") + " " + printable.Clip(newest.Error, 100)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// printFailure prints one error-log entry on a line: its time, the
// adapter, hook and stage it names, what failed; and what it cost, in the
// words its stage calls for (events skipped under backpressure stay in
// the local log: they are not lost).
func printFailure(w io.Writer, f shim.Failure) {
	head := nonEmpty(printable.String(f.Time), printable.String(f.Adapter), printable.String(f.Hook), "["+printable.String(f.Stage)+"]")
	fmt.Fprintf(w, "  %s %s", strings.Join(head, " "), printable.String(redact.Diagnostic(f.Error)))
	if f.Bytes > 0 {
		fmt.Fprintf(w, " (%d bytes)", f.Bytes)
	}
	switch {
	case f.Lost > 0 && f.Stage == "backpressure":
		fmt.Fprintf(w, " (%d events not delivered; the local log keeps them)", f.Lost)
	case f.Lost > 0:
		fmt.Fprintf(w, " (%d events lost)", f.Lost)
	}
	fmt.Fprintln(w)
}

// agentsOwnSection shows what the agents left open: turns an adapter
// closed for them (the agent died, a stream was cut), runs that never
// ended and attention still pending. They are facts about the agents, not
// failures of aep-hook, so they never count as a problem; the newest
// c.Last of each are listed.
func (c *DoctorCmd) agentsOwnSection(w io.Writer, fs doctor.Failures, root string) {
	fmt.Fprintln(w, "\nthe agents' own record (what they left open; not aep-hook failures, never a problem):")
	n := len(fs.Interrupted)
	fmt.Fprintf(w, "interrupted: %d turn(s) the agent left open, closed by aep-hook", n)
	if n > 0 {
		fmt.Fprintf(w, "; the last %d:", min(c.Last, n))
	}
	fmt.Fprintln(w)
	for _, f := range fs.Interrupted[max(0, n-c.Last):] {
		printFailure(w, f)
	}
	runs, attn, files := doctor.OpenWork(root, c.Files)
	fmt.Fprintf(w, "open:      %d run(s) never ended, %d attention request(s) pending (newest %d logs)\n", len(runs), len(attn), files)
	for _, o := range newest(runs, c.Last) {
		fmt.Fprintf(w, "  run       %s %s/%s run %s\n", o.Time, printable.String(o.Agent), printable.String(o.Session), printable.String(o.Run))
	}
	for _, o := range newest(attn, c.Last) {
		fmt.Fprintf(w, "  attention %s %s/%s %s %s\n", o.Time, printable.String(o.Agent), printable.String(o.Session), printable.String(o.Subject), o.ID)
	}
	if len(runs) > c.Last || len(attn) > c.Last {
		fmt.Fprintf(w, "  (the newest %d of each shown; --last shows more)\n", c.Last)
	}
}

// newest returns the last n of list (oldest first).
func newest(list []track.Open, n int) []track.Open {
	return list[max(0, len(list)-n):]
}

// deliverySection prints the delivery counters of the destinations in
// AEP_OUT: their lag, the events dropped by backpressure and put aside.
// Destinations shipped to before but configured no more are listed on a
// line each, not judged.
func (c *DoctorCmd) deliverySection(w io.Writer, cfg shim.Config) {
	fmt.Fprintln(w)
	out := OutFlags{Out: []string{os.Getenv("AEP_OUT")}}
	if out.Out[0] == "" {
		out.Out = nil
	}
	sh, _ := out.shipper(cfg)
	configured := map[string]bool{}
	for _, d := range sh.Dests {
		configured[d.Raw] = true
	}
	sh.Dests = deliver.KnownDestinations(sh.Home, sh.Dests)
	lags, err := sh.Report()
	if err != nil {
		fmt.Fprintf(w, "delivery:  cannot measure: %v\n", err)
		return
	}
	deliver.SortLags(lags)
	var now, before []deliver.Lag
	for _, l := range lags {
		if configured[l.Destination] {
			now = append(now, l)
		} else {
			before = append(before, l)
		}
	}
	if len(now) == 0 {
		fmt.Fprintln(w, "delivery:  local log only (no AEP_OUT)")
	} else {
		fmt.Fprintf(w, "delivery:  %s\n", count(len(now), "destination"))
		for _, l := range now {
			printLag(w, l)
		}
	}
	for _, l := range before {
		fmt.Fprintf(w, "former destination %s (not in AEP_OUT; not judged): %s; aep-hook ship --forget %s drops it\n",
			l.Destination, lagLine(l), l.Destination)
	}
}
