package main

import (
	"fmt"
	"os"

	"github.com/aep-hook/aep-hook/consumer/validate"
	"github.com/aep-hook/aep-hook/internal/printable"
)

// ValidateCmd is `aep-hook validate FILE...`: AEP-0001 envelope and stream
// rules and the AEP-0002 payload schemas with their capture levels.
type ValidateCmd struct {
	Files    []string `arg:"" optional:"" help:"AEP JSONL files (default: stdin). Per-session rules span all of them." type:"path"`
	Complete bool     `help:"The input holds whole sessions: a cause or subject naming no event seen is a violation, not a warning, and a run that never closed is warned about."`
	Quiet    bool     `help:"Print violations only, not warnings."`
}

// Run checks every line and exits 1 on any violation.
func (c *ValidateCmd) Run(s *Streams) error {
	v, err := validate.New()
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	v.Complete = c.Complete
	if len(c.Files) == 0 {
		if err := v.Reader("stdin", s.In); err != nil {
			return exitError{code: 2, msg: err.Error()}
		}
	}
	for _, f := range c.Files {
		r, err := os.Open(f)
		if err != nil {
			return exitError{code: 2, msg: err.Error()}
		}
		err = v.Reader(f, r)
		r.Close()
		if err != nil {
			return exitError{code: 2, msg: err.Error()}
		}
	}
	v.Finish()
	warnings := 0
	for _, p := range v.Problems() {
		if p.Warning {
			warnings++
			if c.Quiet {
				continue
			}
		}
		fmt.Fprintln(s.Out, printable.String(p.String()))
	}
	fmt.Fprintf(s.Out, "%d events checked against the %s: %d violation(s), %d warning(s)\n",
		v.Events(), v.Revision(), v.Violations(), warnings)
	if v.Violations() > 0 {
		return exitError{code: 1}
	}
	return nil
}
