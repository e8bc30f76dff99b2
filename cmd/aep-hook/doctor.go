package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/track"
	"github.com/aep-hook/aep-hook/doctor"
	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// DoctorCmd is `aep-hook doctor`: is every agent wired, trusted and
// recording; the settings in force; this home's failures; apart from them,
// what the agents left open (interrupted turns, runs that never ended:
// facts about the agents, never a problem); the delivery backlog. Exit
// status 0 when healthy, 1 otherwise.
type DoctorCmd struct {
	CaptureFlags
	Last    int  `help:"How many recent failures (and interrupted turns, open runs) to show." default:"20"`
	NoProbe bool `name:"no-probe" help:"Do not fire a synthetic moment through each registration."`
	Files   int  `help:"How many of the newest logs to scan for runs that never ended." default:"200"`
}

// recentFailures is how far back a recorded failure still counts as a
// problem (older ones are shown, not counted).
const recentFailures = 24 * time.Hour

// Run prints the report and returns exit status 1 when anything is wrong.
func (c *DoctorCmd) Run(s *Streams) error {
	c.Last = max(c.Last, 0)
	cfg := c.config(os.Getenv)
	home := cfg.HomeDir()
	problems := 0
	problem := func(format string, a ...any) {
		problems++
		fmt.Fprintf(s.Out, "  PROBLEM "+format+"\n", a...)
	}
	fmt.Fprintf(s.Out, "aep-hook %s\n", version)
	fmt.Fprintf(s.Out, "home:      %s\n", home)
	if err := doctor.Writable(home); err != nil {
		problem("the home cannot be written (%v): hooks record nothing there.\n          fix: make %s writable (chmod u+w), or set AEP_HOME to a folder you own", err, home)
	}
	fmt.Fprintf(s.Out, "logs:      %s\n", cfg.LogRoot())
	c.settingsSection(s, cfg)

	e, err := installEnv("")
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(s.Out, "binary:    %s\n\nagents:\n", e.Binary)
	reports := doctor.Agents(doctor.Options{Env: e, Probe: !c.NoProbe, ProbeEnv: os.Environ()})
	for _, r := range reports {
		problems += printAgent(s.Out, r, e)
	}

	fs := doctor.ReadFailures(home)
	problems += c.failuresSection(s, fs, home)
	c.agentsOwnSection(s.Out, fs, cfg.LogRoot())
	c.deliverySection(s, cfg)
	if problems > 0 {
		fmt.Fprintf(s.Out, "\n%d problem(s) found.\n", problems)
		return exitError{code: 1}
	}
	fmt.Fprintln(s.Out, "\nhealthy.")
	return nil
}

func (c *DoctorCmd) settingsSection(s *Streams, cfg shim.Config) {
	if p, err := cfg.Policy(); err != nil {
		fmt.Fprintf(s.Out, "capture:   INVALID (%v); hooks fall back to metadata\n", err)
	} else {
		fmt.Fprintf(s.Out, "capture:   %s", p.Default)
		for _, o := range p.Overrides {
			fmt.Fprintf(s.Out, ", %s=%s", o.Pattern, o.Level)
		}
		fmt.Fprintln(s.Out)
	}
	for _, k := range []string{"AEP_HOST", "AEP_HOOK_DEADLINE", "AEP_SECRET_ENV", "AEP_OUT", "AEP_DELIVER_DEADLINE"} {
		if v := os.Getenv(k); v != "" {
			fmt.Fprintf(s.Out, "%-10s %s\n", strings.ToLower(strings.TrimPrefix(k, "AEP_"))+":", v)
		}
	}
	if os.Getenv("AEP_TOKEN") != "" {
		fmt.Fprintln(s.Out, "token:     set (not shown)")
	}
}

// printAgent prints one agent's lines and returns its problem count.
func printAgent(w io.Writer, r doctor.AgentReport, e installer.Env) int {
	a := r.Agent
	state := "not installed"
	if r.Installed {
		state = "installed"
	}
	if len(r.Scopes) == 0 {
		hint := ""
		if r.Installed {
			hint = fmt.Sprintf("; not registered (aep-hook install %s)", a.Name)
		}
		fmt.Fprintf(w, "  %-12s %s%s\n", a.Name, state, hint)
		return 0
	}
	fmt.Fprintf(w, "  %-12s %s\n", a.Name, state)
	problems := 0
	bad := func(format string, args ...any) {
		problems++
		fmt.Fprintf(w, "    PROBLEM "+format+"\n", args...)
	}
	for _, sr := range r.Scopes {
		st := sr.Status
		fmt.Fprintf(w, "    %s: %d/%d events registered in %s\n", sr.Scope, len(a.Hooks)-len(st.Missing), len(a.Hooks), st.Path)
		if st.Err != nil {
			bad("cannot read it: %s", printable.String(st.Err.Error()))
		}
		if len(st.Missing) > 0 {
			bad("missing events: %s\n      fix: aep-hook install %s --scope %s", strings.Join(st.Missing, ", "), a.Name, sr.Scope)
		}
		for _, f := range st.Foreign {
			fmt.Fprintf(w, "    note: registered with another binary: %s\n", printable.String(f))
		}
		if sr.Trust != nil {
			if sr.Trust.OK {
				fmt.Fprintf(w, "    trusted: %s\n", sr.Trust.Detail)
			} else {
				bad("not trusted: %s\n      fix: %s", sr.Trust.Detail, sr.Trust.Fix)
			}
		}
		if p := sr.Probe; p != nil {
			if p.OK {
				fmt.Fprintf(w, "    recording: %s\n", p.Detail)
			} else {
				bad("not recording: %s\n      ran: %s", printable.String(p.Detail), printable.String(p.Command))
			}
		}
	}
	return problems
}

// failuresSection shows this home's failures (and only a count of the
// shared fallback's entries for other homes) and returns 1 when any is
// recent. Interrupted turns are not among them (agentsOwnSection).
func (c *DoctorCmd) failuresSection(s *Streams, fs doctor.Failures, home string) int {
	fmt.Fprintln(s.Out)
	show := func(where string, list []shim.Failure) {
		fmt.Fprintf(s.Out, "failures:  %d recorded in %s; the last %d:\n", len(list), where, min(c.Last, len(list)))
		for _, f := range list[max(0, len(list)-c.Last):] {
			printFailure(s.Out, f)
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
		fmt.Fprintln(s.Out, "failures:  none recorded for this home")
	}
	if fs.Others > 0 {
		fmt.Fprintf(s.Out, "           (the $TMPDIR fallback %s%s also holds %d failure(s) of other homes, not shown)\n", fs.Fallback, owner, fs.Others)
	}
	if n := fs.Recent(time.Now().Add(-recentFailures)); n > 0 {
		fmt.Fprintf(s.Out, "  PROBLEM %d failure(s) in the last 24 hours (see above)\n", n)
		return 1
	}
	return 0
}

// printFailure prints one error-log entry on a line.
func printFailure(w io.Writer, f shim.Failure) {
	fmt.Fprintf(w, "  %s %s %s [%s] %s", printable.String(f.Time), printable.String(f.Adapter), printable.String(f.Hook), printable.String(f.Stage), printable.String(f.Error))
	if f.Bytes > 0 {
		fmt.Fprintf(w, " (%d bytes)", f.Bytes)
	}
	if f.Lost > 0 {
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

// deliverySection prints the delivery counters: per destination (from
// AEP_OUT and every destination shipped to before), its lag, the events
// dropped by backpressure and the events put aside.
func (c *DoctorCmd) deliverySection(s *Streams, cfg shim.Config) {
	out := OutFlags{Out: []string{os.Getenv("AEP_OUT")}}
	if out.Out[0] == "" {
		out.Out = nil
	}
	sh, _ := out.shipper(cfg)
	sh.Dests = deliver.KnownDestinations(sh.Home, sh.Dests)
	if len(sh.Dests) == 0 {
		fmt.Fprintln(s.Out, "delivery:  local log only (no AEP_OUT)")
		return
	}
	lags, err := sh.Report()
	if err != nil {
		fmt.Fprintf(s.Out, "delivery:  cannot measure: %v\n", err)
		return
	}
	deliver.SortLags(lags)
	fmt.Fprintf(s.Out, "delivery:  %d destinations\n", len(lags))
	for _, l := range lags {
		printLag(s.Out, l)
	}
}
