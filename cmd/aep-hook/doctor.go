package main

import (
	"fmt"
	"os"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// DoctorCmd is `aep-hook doctor`: where things are and what went wrong.
type DoctorCmd struct {
	CaptureFlags
	Last int `help:"How many recent failures to show." default:"20"`
}

// Run prints the report.
func (c *DoctorCmd) Run(s *Streams) error {
	cfg := c.config(os.Getenv)
	home := cfg.HomeDir()
	fmt.Fprintf(s.Out, "aep-hook %s\n", version)
	fmt.Fprintf(s.Out, "home:      %s\n", home)
	fmt.Fprintf(s.Out, "logs:      %s\n", cfg.LogRoot())
	if p, err := cfg.Policy(); err != nil {
		fmt.Fprintf(s.Out, "capture:   INVALID (%v); hooks fall back to metadata\n", err)
	} else {
		fmt.Fprintf(s.Out, "capture:   %s", p.Default)
		for _, o := range p.Overrides {
			fmt.Fprintf(s.Out, ", %s=%s", o.Pattern, o.Level)
		}
		fmt.Fprintln(s.Out)
	}
	fmt.Fprintf(s.Out, "adapters:  %d (%v)\n", len(mapping.Names()), mapping.Names())
	el := shim.NewErrorLog(home)
	shown := false
	for _, p := range []string{el.Path, el.Fallback} {
		fs, err := shim.ReadFailures(p)
		if err != nil || len(fs) == 0 {
			continue
		}
		shown = true
		fmt.Fprintf(s.Out, "failures:  %d recorded in %s; the last %d:\n", len(fs), p, min(c.Last, len(fs)))
		for _, f := range fs[max(0, len(fs)-c.Last):] {
			fmt.Fprintf(s.Out, "  %s %s %s [%s] %s", f.Time, f.Adapter, f.Hook, f.Stage, f.Error)
			if f.Bytes > 0 {
				fmt.Fprintf(s.Out, " (%d bytes)", f.Bytes)
			}
			if f.Lost > 0 {
				fmt.Fprintf(s.Out, " (%d events lost)", f.Lost)
			}
			fmt.Fprintln(s.Out)
		}
	}
	if !shown {
		fmt.Fprintln(s.Out, "failures:  none recorded")
	}
	c.deliverySection(s, cfg)
	return nil
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
