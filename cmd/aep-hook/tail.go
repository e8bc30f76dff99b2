package main

import (
	"os"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/tail"
	"github.com/aep-hook/aep-hook/shim"
)

// TailCmd is `aep-hook tail`: the live timeline across every agent's logs.
type TailCmd struct {
	Follow bool     `short:"f" help:"Keep printing new events as the logs grow (Ctrl-C stops)."`
	Filter []string `help:"AEP-0003 §6 attr-match filter: a JSON object, or key=value, key=a,b (any of), type=attention.* (prefix), severity>=notice; repeat to AND." placeholder:"EXPR" sep:"none"`
	JSON   bool     `help:"Print the events as stored, one JSON line each."`
	Last   int      `short:"n" help:"How many recent events to print first (-1: all)." default:"20"`
	Color  string   `help:"Colours: auto (when stdout is a terminal and NO_COLOR is unset), always, never." default:"auto" enum:"auto,always,never"`
	Home   string   `help:"The AEP home (default $AEP_HOME or ~/.aep)." env:"AEP_HOME"`
}

// Run prints until interrupted (with --follow) or once.
func (c *TailCmd) Run(s *Streams) error {
	f, err := attrmatch.ParseArgs(c.Filter)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	cfg := shim.Config{Home: c.Home}
	ctx, stop := untilInterrupted()
	defer stop()
	err = tail.Run(ctx, tail.Options{Root: cfg.LogRoot(), Filter: f, Last: c.Last, Follow: c.Follow,
		JSON: c.JSON, Color: wantColor(c.Color, s), Out: s.Out})
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	return nil
}

// wantColor decides colours: always, never, or auto (a terminal, and
// NO_COLOR unset).
func wantColor(mode string, s *Streams) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := s.Out.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
