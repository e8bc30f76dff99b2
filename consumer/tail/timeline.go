package tail

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/aep-hook/aep-hook/consumer/track"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
)

// runIndent is the width of a run event's "  run N   " indentation.
const runIndent = 10

// TimelineOptions say what a timeline shows.
type TimelineOptions struct {
	// Debug shows debug-level events (hidden otherwise, and counted).
	Debug bool
}

// TimelineStats is what a timeline read.
type TimelineStats struct {
	Events int // AEP events read
	Hidden int // debug-level events not shown
	NotAEP int // lines that are not AEP events
}

// Timeline prints one AEP JSONL log as a human-readable timeline: one line
// per event (time, position, run number, type, subject, the structural
// facts), the type column as wide as the log's longest type within bounds
// (longer types shortened in the middle) so every line keeps its columns;
// what an attention follow-up settles; and at the end the runs and
// attention requests that never closed. A line is an AEP event when it is
// a JSON object with aep and type (aep is the format marker, AEP-0001
// §5.1); other lines are named, and counted in the stats. Every value from
// the log passes printable.String.
func Timeline(r io.Reader, w io.Writer, o TimelineOptions) (TimelineStats, error) {
	type entry struct {
		ev  *shim.Event
		bad int // the line number of a line that is not an event
	}
	var st TimelineStats
	var entries []entry
	longest := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		var e shim.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type == "" || e.AEP == "" {
			st.NotAEP++
			entries = append(entries, entry{bad: n})
			continue
		}
		st.Events++
		if !o.Debug && debug(&e) {
			st.Hidden++
		} else {
			longest = max(longest, utf8.RuneCountInString(printable.String(e.Type)))
		}
		entries = append(entries, entry{ev: &e})
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	width := typeWidth(longest)
	var tr track.Tracker
	var reqs requests
	var lost []*shim.Event // the moments aep-hook marked lost
	// Epochs are shown by rank in the log (0, 1, ...): their values are
	// clock readings in microseconds, for order, not for reading.
	epochs := map[int64]int{}
	runs := map[string]int{}
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
		reqs.add(e)
		if e.Run != "" {
			runNo(e.Run) // numbered in order of appearance, shown or not
		}
		if code, _ := e.Data["code"].(string); e.Type == "error.raised" && code == "moment_lost" {
			lost = append(lost, e)
		}
		if !o.Debug && debug(e) {
			continue
		}
		pos := "      "
		if e.Seq != nil {
			var epoch int64
			if e.Epoch != nil {
				epoch = *e.Epoch
			}
			rank, ok := epochs[epoch]
			if !ok {
				rank = len(epochs)
				epochs[epoch] = rank
			}
			pos = fmt.Sprintf("%2d:%-3d", rank, *e.Seq)
		}
		// Run events are indented under their run; the subject column
		// lines up across both.
		indent, cell := "", width+runIndent
		if e.Run != "" {
			indent, cell = fmt.Sprintf("  run %-4d", runNo(e.Run)), width
		}
		fmt.Fprintf(w, "  %s %s %s%s %s%s%s\n", clock(e.Time), pos, indent, typeCell(e.Type, cell),
			printable.String(e.Subject), Facts(e), reqs.settles(e))
	}
	for _, op := range tr.Runs() {
		fmt.Fprintf(w, "  never closed: run %d (%s), started %s\n", runNo(op.Run), printable.Clip(op.Run, 40), clock(op.Time))
	}
	for _, op := range tr.Attention() {
		fmt.Fprintf(w, "  never closed: attention request %s %s, raised %s\n", op.ID, printable.Clip(op.Subject, 40), clock(op.Time))
	}
	for _, e := range lost {
		hook, _ := e.Data["hook"].(string)
		fmt.Fprintf(w, "  lost: a %s moment at %s (its hook ran out of time; the record has a gap there)\n", printable.Clip(hook, 40), clock(e.Time))
	}
	if st.Hidden > 0 {
		fmt.Fprintf(w, "  (%d debug-level event(s) not shown; --debug shows them)\n", st.Hidden)
	}
	return st, nil
}
