package main

import (
	"fmt"
	"io"
	"os"

	"github.com/aep-hook/aep-hook/consumer/tail"
	"github.com/aep-hook/aep-hook/internal/printable"
)

// TimelineCmd is `aep-hook timeline FILE...`: a human-readable view of AEP
// JSONL logs.
type TimelineCmd struct {
	Files []string `arg:"" optional:"" help:"AEP JSONL log files (default: stdin). Exit status 1 when a line is not an AEP event." type:"path"`
	Debug bool     `help:"Also show debug-level events (the agents' machinery; hidden and counted otherwise)."`
}

// Run prints one line per event: time, position, type, subject and the key
// payload facts, indented under its run; what each attention follow-up
// settles; and the runs and requests that never closed (tail.Timeline).
// Every value from the log passes printable.String. A line that is not an
// AEP event is named in place and makes the exit status 1, so a script
// learns that a file was not an AEP log.
func (c *TimelineCmd) Run(s *Streams) error {
	o := tail.TimelineOptions{Debug: c.Debug}
	bad := 0
	one := func(name string, r io.Reader) error {
		st, err := tail.Timeline(r, s.Out, o)
		if err != nil {
			return exitError{code: 1, msg: printable.String(name + ": " + err.Error())}
		}
		if st.NotAEP > 0 {
			bad++
			what := fmt.Sprintf("%d line(s) are not AEP events", st.NotAEP)
			if st.Events == 0 {
				what = "not an AEP log: no line is an AEP event (a JSON object with aep and type)"
			}
			fmt.Fprintf(s.Err, "aep-hook timeline: %s: %s\n", printable.String(name), what)
		}
		return nil
	}
	if len(c.Files) == 0 {
		if err := one("stdin", s.In); err != nil {
			return err
		}
	}
	for _, f := range c.Files {
		r, err := os.Open(f)
		if err != nil {
			return exitError{code: 1, msg: printable.String(err.Error())}
		}
		fmt.Fprintf(s.Out, "%s\n", printable.String(f))
		err = one(f, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	if bad > 0 {
		return exitError{code: 1}
	}
	return nil
}
