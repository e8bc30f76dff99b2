package tail

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aep-hook/aep-hook/consumer/track"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
)

const (
	// maxTypeWidth bounds the type column; longer types overflow it.
	maxTypeWidth = 48
	// runIndent is the width of a run event's "  run N   " indentation.
	runIndent = 10
)

// Timeline prints one AEP JSONL log as a human-readable timeline: one line
// per event (time, position, run number, type, subject, the structural
// facts), the type column as wide as the log's longest type so x.* lines
// align; what an attention follow-up settles; and at the end the runs and
// attention requests that never closed. Every value from the log passes
// printable.String.
func Timeline(r io.Reader, w io.Writer) error {
	type entry struct {
		ev  *shim.Event
		bad int // the line number of a line that is not an event
	}
	var entries []entry
	width := 28
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		var e shim.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type == "" {
			entries = append(entries, entry{bad: n})
			continue
		}
		width = max(width, min(maxTypeWidth, len(printable.String(e.Type))))
		entries = append(entries, entry{ev: &e})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var tr track.Tracker
	runs := map[string]int{}
	requests := map[string]*shim.Event{}
	runNo := func(run string) int {
		if _, ok := runs[run]; !ok {
			runs[run] = len(runs) + 1
		}
		return runs[run]
	}
	for _, en := range entries {
		if en.ev == nil {
			fmt.Fprintf(w, "  line %d: not an AEP event\n", en.bad)
			continue
		}
		e := en.ev
		tr.Add(e)
		pos := "      "
		if e.Seq != nil {
			var epoch int64
			if e.Epoch != nil {
				epoch = *e.Epoch
			}
			pos = fmt.Sprintf("%2d:%-3d", epoch, *e.Seq)
		}
		// Run events are indented under their run; the subject column
		// lines up across both.
		indent, pad := "", width+runIndent
		if e.Run != "" {
			indent, pad = fmt.Sprintf("  run %-4d", runNo(e.Run)), width
		}
		settles := ""
		switch e.Type {
		case "attention.requested":
			requests[e.ID] = e
		case "attention.answered", "attention.resolved", "attention.timeout":
			if req, ok := requests[e.Subject]; ok {
				kind, _ := req.Data["kind"].(string)
				settles = "  <- " + strings.TrimSpace(printable.String(kind)+" "+printable.Clip(req.Subject, 40))
			}
		}
		fmt.Fprintf(w, "  %s %s %s%-*s %s%s%s\n", clock(e.Time), pos, indent, pad,
			printable.String(e.Type), printable.String(e.Subject), Facts(e), settles)
	}
	for _, o := range tr.Runs() {
		fmt.Fprintf(w, "  never closed: run %d (%s), started %s\n", runNo(o.Run), printable.Clip(o.Run, 40), clock(o.Time))
	}
	for _, o := range tr.Attention() {
		fmt.Fprintf(w, "  never closed: attention request %s %s, raised %s\n", o.ID, printable.Clip(o.Subject, 40), clock(o.Time))
	}
	return nil
}
