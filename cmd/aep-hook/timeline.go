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
	Files []string `arg:"" optional:"" help:"AEP JSONL log files (default: stdin)." type:"path"`
}

// Run prints one line per event: time, position, type, subject and the key
// payload facts, indented under its run; what each attention follow-up
// settles; and the runs and requests that never closed (tail.Timeline).
// Every value from the log passes printable.String, so no field can drive
// the terminal.
func (c *TimelineCmd) Run(s *Streams) error {
	if len(c.Files) == 0 {
		return timeline(s.In, s.Out)
	}
	for _, f := range c.Files {
		r, err := os.Open(f)
		if err != nil {
			return exitError{code: 1, msg: printable.String(err.Error())}
		}
		fmt.Fprintf(s.Out, "%s\n", printable.String(f))
		err = timeline(r, s.Out)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func timeline(r io.Reader, w io.Writer) error { return tail.Timeline(r, w) }
