package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/tail"
	"github.com/aep-hook/aep-hook/shim"
)

// TailCmd is `aep-hook tail`: the live timeline across every agent's logs.
type TailCmd struct {
	Follow bool     `short:"f" help:"Keep printing new events as the logs grow (Ctrl-C stops)."`
	Filter []string `help:"AEP-0003 §6 attr-match filter: a JSON object, or key=value, key=a,b (any of), type=attention.* (the one pattern: a prefix, on type only), severity>=notice; repeat to AND." placeholder:"EXPR" sep:"none"`
	JSON   bool     `help:"Print the events as stored, one JSON line each (debug-level events included)."`
	Last   string   `short:"n" help:"How many recent events to print first (default 20; all, or -1: every one)." default:"20" placeholder:"N"`
	Debug  bool     `help:"Also show debug-level events (the agents' machinery; hidden and counted otherwise)."`
	Color  string   `help:"Colours: auto (when stdout is a terminal and NO_COLOR is unset), always, never." default:"auto" enum:"auto,always,never"`
	Home   string   `help:"The AEP home (default $AEP_HOME or ~/.aep)." env:"AEP_HOME"`
}

// Run prints until interrupted (with --follow) or once.
func (c *TailCmd) Run(s *Streams) error {
	last, err := parseLast(c.Last)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	f, err := attrmatch.ParseArgs(c.Filter)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if g := f.Globs(); len(g) > 0 {
		return exitError{code: 2, msg: fmt.Sprintf("invalid-filter: %s: a pattern (prefix.*) applies to type only (AEP-0003 §6.1); for other attributes list the values: agent=claude-code,codex", strings.Join(g, ", "))}
	}
	cfg := shim.Config{Home: c.Home}
	ctx, stop := untilInterrupted()
	defer stop()
	// An explicit severity filter says which levels to show.
	debug := c.Debug || hasKey(f.Keys(), "severity")
	err = tail.Run(ctx, tail.Options{Root: cfg.LogRoot(), Filter: f, Last: last, Follow: c.Follow,
		JSON: c.JSON, Debug: debug, Color: wantColor(c.Color, s), Out: s.Out})
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	return nil
}

func hasKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// parseLast reads --last: a count, all, or a negative number (every
// event).
func parseLast(v string) (int, error) {
	if v == "all" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--last %q: want a number of events, or all", v)
	}
	return max(n, -1), nil
}

// negativeCount reports a negative number given as a flag's value.
func negativeCount(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// joinNegativeLast rewrites tail's `-n -1` / `--last -1` as `--last=-1`,
// so the parser does not take the value for a flag.
func joinNegativeLast(args []string) []string {
	if len(args) == 0 || args[0] != "tail" {
		return args
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if (args[i] == "-n" || args[i] == "--last") && i+1 < len(args) && negativeCount(args[i+1]) {
			out = append(out, "--last="+args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
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
