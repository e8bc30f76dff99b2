package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/aep-hook/aep-hook/internal/secretfile"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// OutFlags select the destinations beyond the local log, each with its
// environment twin. Every emitting command embeds them; the local JSONL log
// is always written first and stays the record.
type OutFlags struct {
	Out            []string `help:"Also deliver to DEST (repeatable, or a comma list): http(s)://HOST[:PORT][/BASE] for an AEP collector, otlp+http(s)://HOST[:PORT][/BASE] for an OTLP/HTTP endpoint." env:"AEP_OUT" sep:"," placeholder:"DEST"`
	Token          string   `help:"Bearer token sent to the destinations (never logged); without it a destination on this machine gets your own token ($AEP_HOME/token), which the relay and the sidecar accept by default." env:"AEP_TOKEN" placeholder:"TOKEN"`
	Insecure       bool     `help:"Allow sending the token over plain http to a host other than this machine." env:"AEP_INSECURE"`
	OtlpMaxCapture string   `name:"otlp-max-capture" help:"Highest capture level exported to OTLP; events above it export without data (AEP-0005 §3.3)." env:"AEP_OTLP_MAX_CAPTURE" placeholder:"LEVEL"`
}

// destinations parses --out and applies the token rule; it returns the
// usable destinations and an error for each refused one.
func (o OutFlags) destinations() ([]deliver.Destination, []error) {
	var ok []deliver.Destination
	var errs []error
	for _, v := range o.Out {
		ds, err := deliver.ParseDestinations([]string{v})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range ds {
			if err := deliver.CheckToken(d, o.Token, o.Insecure); err != nil {
				errs = append(errs, err)
				continue
			}
			ok = append(ok, d)
		}
	}
	return ok, errs
}

// shipper builds the shipper for cfg's home; errs are the refused
// destinations and a bad --otlp-max-capture (which falls back to metadata).
func (o OutFlags) shipper(cfg shim.Config) (*deliver.Shipper, []error) {
	dests, errs := o.destinations()
	home := cfg.HomeDir()
	sh := &deliver.Shipper{
		Home:       home,
		LogRoot:    cfg.LogRoot(),
		Dests:      dests,
		Token:      o.Token,
		Errors:     shim.NewErrorLog(home),
		MaxCapture: redact.Metadata,
	}
	if o.Token == "" && slices.ContainsFunc(dests, func(d deliver.Destination) bool { return deliver.Loopback(d.Host) }) {
		// A listener of this user's on this machine (the relay, the
		// sidecar) asks for their own token by default.
		tok, err := secretfile.ReadUser(home)
		if err != nil {
			errs = append(errs, fmt.Errorf("the user token file: %w", err))
		}
		sh.LocalToken = tok
	}
	if o.OtlpMaxCapture != "" {
		if l, err := redact.ParseLevel(o.OtlpMaxCapture); err != nil {
			errs = append(errs, fmt.Errorf("--otlp-max-capture: %w", err))
		} else {
			sh.MaxCapture = l
		}
	}
	return sh, errs
}

// deliverAfterHook is the hook path's delivery: the logs the hook just
// wrote go to every destination within the delivery deadline
// (AEP_DELIVER_DEADLINE, default 300 ms); failures are recorded, never
// shown.
func (o OutFlags) deliverAfterHook(cfg shim.Config, adapter string, rels []string, getenv func(string) string) {
	sh, errs := o.shipper(cfg)
	for _, err := range errs {
		sh.Errors.Record(shim.Failure{Adapter: adapter, Stage: "config", Error: err.Error()})
	}
	if len(sh.Dests) == 0 || len(rels) == 0 {
		return
	}
	d := deliver.DefaultHookDeadline
	if v, err := time.ParseDuration(getenv("AEP_DELIVER_DEADLINE")); err == nil && v > 0 && v <= 5*time.Second {
		d = v
	}
	sh.Client = deliver.NewClient(0) // the context bounds every request
	sh.LockWait = d / 6
	sh.RetryFor = -1 // one attempt: an unreachable collector costs nothing more
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sh.Hook(ctx, adapter, rels)
}

// ShipCmd is `aep-hook ship`: deliver the local logs' backlog to the --out
// destinations, keep delivering with --follow, or report with --status.
// Exit status: 0 everything delivered; 1 a destination failed (what it did
// not take waits in the logs for the next run); 2 a usage error; 3
// delivered, but a destination refused some events, which are put aside
// (sending them again would not help).
type ShipCmd struct {
	OutFlags
	Follow   bool          `help:"Keep running and deliver as the logs grow."`
	Status   bool          `help:"Print, per destination, how far behind it is and its last error; deliver nothing."`
	Forget   string        `help:"Forget a destination shipped to before (its cursors and status; what it refused stays put aside); deliver nothing." placeholder:"DEST"`
	RetryFor time.Duration `name:"retry-for" help:"Without --follow: give up on a destination once it has been failing this long (for the whole run, not per log)." default:"30s"`
	Rescan   time.Duration `help:"With --follow: rescan the log folders this often as a safety net." default:"10s"`
	Queue    int           `help:"With --follow: backlog per log, in MiB, beyond which debug/info events are skipped and counted (AEP-0003 §8.4)." default:"16"`
	Batch    int           `help:"Events per request." default:"500"`
}

// Run delivers, follows or reports.
func (c *ShipCmd) Run(s *Streams) error {
	cfg := shim.Config{Home: os.Getenv("AEP_HOME")}
	sh, errs := c.shipper(cfg)
	if c.Status {
		return c.report(s.Out, sh)
	}
	if c.Forget != "" {
		return c.forget(s.Out, sh)
	}
	if len(errs) > 0 {
		return exitError{code: 2, msg: errors.Join(errs...).Error()}
	}
	if len(sh.Dests) == 0 {
		return exitError{code: 2, msg: "no destination: give --out DEST or set AEP_OUT"}
	}
	sh.BatchEvents = c.Batch
	ctx, stop := untilInterrupted()
	defer stop()
	if c.Follow {
		sh.Pressure = true
		sh.QueueBytes = int64(max(c.Queue, 1)) << 20
		fmt.Fprintf(s.Err, "aep-hook ship: following %s\n", cfg.LogRoot())
		if err := sh.Follow(ctx, c.Rescan); err != nil {
			return exitError{code: 1, msg: err.Error()}
		}
		return nil
	}
	sh.RetryFor = c.RetryFor
	sh.LockWait = c.RetryFor
	rejected := map[string]int64{}
	for _, d := range sh.Dests {
		rejected[d.Raw] = deliver.ReadStatus(sh.Home, d).Rejected
	}
	err := sh.ShipAll(ctx)
	lags, _ := sh.Report()
	var aside int64
	for _, l := range lags {
		n := l.Rejected - rejected[l.Destination]
		aside += max(n, 0)
		fmt.Fprintf(s.Out, "%s: %s\n", l.Destination, shipLine(l, n, sh.Home))
	}
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	if aside > 0 {
		return exitError{code: 3, msg: fmt.Sprintf("%d event(s) refused and put aside (the reasons are beside them; the local logs keep them)", aside)}
	}
	return nil
}

// shipLine is one destination's outcome of a ship run that put aside n
// refused events.
func shipLine(l deliver.Lag, n int64, home string) string {
	if n <= 0 {
		return lagLine(l)
	}
	d, _ := deliver.ParseDestination(l.Destination)
	s := fmt.Sprintf("%d event(s) refused and put aside in %s", n, deliver.RejectedPath(home, d))
	if l.Events == 0 {
		return s + "; everything else delivered"
	}
	return s + "; " + lagLine(l)
}

// forget drops a destination the home remembers, unless it is configured
// now (forgetting it would deliver everything to it again).
func (c *ShipCmd) forget(w io.Writer, sh *deliver.Shipper) error {
	d, err := deliver.ParseDestination(c.Forget)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	for _, x := range sh.Dests {
		if x.Raw == d.Raw {
			return exitError{code: 2, msg: fmt.Sprintf("%s is configured now (--out or AEP_OUT); remove it there first", d.Raw)}
		}
	}
	if err := deliver.Forget(sh.Home, d); err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(w, "forgot %s (what it refused stays in %s)\n", d.Raw, deliver.RejectedPath(sh.Home, d))
	return nil
}

func (c *ShipCmd) report(w io.Writer, sh *deliver.Shipper) error {
	configured := map[string]bool{}
	for _, d := range sh.Dests {
		configured[d.Raw] = true
	}
	sh.Dests = deliver.KnownDestinations(sh.Home, sh.Dests)
	if len(sh.Dests) == 0 {
		fmt.Fprintln(w, "no destination configured or shipped to yet")
		return nil
	}
	lags, err := sh.Report()
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	deliver.SortLags(lags)
	for _, l := range lags {
		printLag(w, l)
		if !configured[l.Destination] {
			fmt.Fprintf(w, "  not configured now (shipped to before); aep-hook ship --forget %s drops it\n", l.Destination)
		}
	}
	return nil
}

func lagLine(l deliver.Lag) string {
	if l.Events == 0 {
		return "up to date"
	}
	s := fmt.Sprintf("behind by %s (%d bytes) in %s", count(int(l.Events), "event"), l.Bytes, count(l.Logs, "log"))
	if l.Oldest != "" {
		s += ", oldest undelivered " + l.Oldest
	}
	return s
}

// printLag prints one destination's status block (ship --status, doctor).
func printLag(w io.Writer, l deliver.Lag) {
	fmt.Fprintf(w, "%s (%s): %s\n", l.Destination, l.Kind, lagLine(l))
	if l.LastSuccess != "" {
		fmt.Fprintf(w, "  last delivery:  %s\n", l.LastSuccess)
	}
	if l.LastError != "" {
		state := "resolved since"
		if l.Failing() {
			state = "FAILING"
		}
		fmt.Fprintf(w, "  last error:     %s (%s, %s)\n", l.LastError, l.LastErrorTime, state)
	}
	fmt.Fprintf(w, "  dropped by backpressure: %d; rejected (put aside): %d\n", l.Dropped, l.Rejected)
}
