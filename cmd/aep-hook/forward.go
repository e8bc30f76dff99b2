package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// ForwardCmd is `aep-hook forward opencode|kilo`: the process the
// forwarder plugin starts once per agent process; it records the moments
// the plugin writes to its stdin (one JSON line each).
type ForwardCmd struct {
	CaptureFlags
	Vendor string `arg:"" enum:"opencode,kilo" help:"The agent: opencode or kilo."`
	Mode   string `help:"primary (the whole record: the default) or companion (only x.<agent>.* events, when aep-hook follow is the primary)." enum:"primary,companion" default:"primary" env:"AEP_PLUGIN_MODE"`
	Deltas bool   `help:"Record token deltas (the plugin sends them with AEP_DELTAS=1)."`
}

// Run records stdin until it ends. It always exits 0: the plugin's
// recorder never reports failure to the agent (failures go to the error
// log).
func (c *ForwardCmd) Run(s *Streams) error {
	prof := opencode.Profiles[c.Vendor]
	v, _ := mapping.Lookup(prof.Plugin)
	cfg := c.config(os.Getenv)
	errs := shim.NewErrorLog(cfg.HomeDir())
	p, err := cfg.Policy()
	if err != nil {
		errs.Record(shim.Failure{Adapter: v.Name, Stage: "config", Error: err.Error()})
		p = redact.Policy{Default: redact.Metadata}
	}
	em := cfg.NewFileEmitter(p)
	ids := shim.NewIDs()
	f := &opencode.Forwarder{
		Handle: em.Handler(v), Errors: errs, Name: v.Name,
		Mode: mapping.Mode(c.Mode), Deltas: c.Deltas,
		Nonce: func() string { return ids.New(time.Now()) },
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := f.Run(ctx, s.In); err != nil {
		errs.Record(shim.Failure{Adapter: v.Name, Stage: "read", Error: fmt.Sprintf("plugin pipe: %v", err)})
	}
	return nil
}
