package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
)

// TimelineCmd is `aep-hook timeline FILE...`: a human-readable view of AEP
// JSONL logs.
type TimelineCmd struct {
	Files []string `arg:"" optional:"" help:"AEP JSONL log files (default: stdin)." type:"path"`
}

// Run prints one line per event: time, position, type, subject and the key
// payload facts, indented under its run. Every value from the log passes
// printable.String, so no field can drive the terminal.
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

func timeline(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	runs := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		var e shim.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type == "" {
			fmt.Fprintf(w, "  line %d: not an AEP event\n", n)
			continue
		}
		t := e.Time
		if i := strings.IndexByte(t, 'T'); i >= 0 {
			t = strings.TrimSuffix(t[i+1:], "Z")
		}
		pos := "      "
		if e.Seq != nil {
			pos = fmt.Sprintf("%2d:%-3d", deref(e.Epoch), *e.Seq)
		}
		indent := ""
		if e.Run != "" {
			if _, ok := runs[e.Run]; !ok {
				runs[e.Run] = len(runs) + 1
			}
			indent = fmt.Sprintf("  run %d  ", runs[e.Run])
		}
		fmt.Fprintf(w, "  %s %s %s%-28s %s%s\n", printable.String(t), pos, indent,
			printable.String(e.Type), printable.String(e.Subject), facts(e))
	}
	return sc.Err()
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// facts picks the payload members worth a glance, all structural.
func facts(e shim.Event) string {
	var parts []string
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := e.Data[k].(type) {
		case string:
			if k == "prompt" || strings.HasSuffix(k, "_digest") {
				continue
			}
			parts = append(parts, printable.String(k)+"="+printable.Clip(v, 40))
		case float64, bool:
			parts = append(parts, fmt.Sprintf("%s=%v", printable.String(k), v))
		}
	}
	if e.Severity != "" && e.Severity != "info" {
		parts = append(parts, "severity="+printable.String(e.Severity))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  (" + strings.Join(parts, " ") + ")"
}
