// Package tail prints the live timeline across every agent's logs: the
// recent events of all sessions merged by time, then (following) each new
// line as a log grows, filtered with the AEP-0003 §6 attr-match dialect.
// Open runs and pending attention are shown at a glance: a summary first,
// and a marker on the lines that open or close them; an attention
// follow-up says what it settles. Debug-level events are hidden from the
// human view unless asked for.
package tail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/track"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
)

// Options says what to show and how.
type Options struct {
	Root   string           // the log root ($AEP_HOME/logs)
	Filter attrmatch.Filter // which events to print (the open-work summary sees all)
	Last   int              // how many recent events to print first (0: none, -1: all)
	Follow bool             // keep printing new lines until ctx ends
	JSON   bool             // print the event lines as stored
	Color  bool             // ANSI colours
	// Debug shows debug-level events in the human view (they are hidden
	// otherwise, and counted); JSON output always holds them.
	Debug bool
	Out   io.Writer
	// Ready, when set, is closed once the logs are being watched (tests
	// wait on it instead of sleeping).
	Ready chan<- struct{}
}

// maxLine bounds one event line.
const maxLine = 32 << 20

// Tailer is one tail run's state: read offsets per log, partial lines, and
// the tracker of open runs and attention.
type Tailer struct {
	o       Options
	offsets map[string]int64
	partial map[string][]byte
	tr      track.Tracker
	reqs    requests
	width   int // the type column
	hidden  int // debug-level events not shown
}

// Run prints the recent timeline and, with Follow, every new line until ctx
// is done.
func Run(ctx context.Context, o Options) error {
	t := &Tailer{o: o, offsets: map[string]int64{}, partial: map[string][]byte{}}
	var w *fsnotify.Watcher
	if o.Follow {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			return fmt.Errorf("watch %s: %w", o.Root, err)
		}
		defer w.Close()
		if err := os.MkdirAll(o.Root, 0o700); err != nil {
			return err
		}
		// Watch before reading, so a line written in between is not lost.
		if err := t.watchTree(w, o.Root); err != nil {
			return err
		}
	}
	t.backlog()
	if !o.Follow {
		return nil
	}
	if o.Ready != nil {
		close(o.Ready)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors:
			return fmt.Errorf("watch %s: %w", o.Root, err)
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					_ = t.watchTree(w, ev.Name)
					t.readTree(ev.Name)
					continue
				}
			}
			if ev.Has(fsnotify.Write) || ev.Has(fsnotify.Create) {
				if strings.HasSuffix(ev.Name, ".jsonl") {
					t.read(ev.Name)
				}
			}
		}
	}
}

// watchTree adds dir and every folder below it to w.
func (t *Tailer) watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if err := w.Add(p); err != nil {
				return fmt.Errorf("watch %s: %w", p, err)
			}
		}
		return nil
	})
}

// logs lists the .jsonl files under dir.
func logs(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// line is one event read from a log.
type line struct {
	raw []byte
	ev  shim.Event
}

// backlog reads every log to its end, feeds the tracker, and prints the
// last Last matching events merged by time, after the open-work summary;
// the type column is as wide as their longest type (within bounds).
func (t *Tailer) backlog() {
	var all []line
	for _, p := range logs(t.o.Root) {
		all = append(all, t.drain(p)...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ev.Time < all[j].ev.Time })
	var shown []line
	for _, l := range all {
		t.tr.Add(&l.ev)
		t.reqs.add(&l.ev)
		if t.o.Filter.MatchJSON(l.raw) && t.visible(&l.ev) {
			shown = append(shown, l)
		}
	}
	if t.o.Last >= 0 && len(shown) > t.o.Last {
		shown = shown[len(shown)-t.o.Last:]
	}
	longest := 0
	for _, l := range shown {
		longest = max(longest, utf8.RuneCountInString(printable.String(l.ev.Type)))
	}
	t.width = typeWidth(longest)
	if !t.o.JSON {
		t.summary()
	}
	for _, l := range shown {
		t.print(l)
	}
	if t.hidden > 0 {
		fmt.Fprintf(t.o.Out, "%s\n", t.paint(dim, fmt.Sprintf("(%d debug-level event(s) not shown; --debug shows them)", t.hidden)))
	}
}

// visible reports whether the human view shows e (debug-level events only
// with Debug), counting those it hides.
func (t *Tailer) visible(e *shim.Event) bool {
	if t.o.JSON || t.o.Debug || !debug(e) {
		return true
	}
	t.hidden++
	return false
}

// readTree reads every log below dir (a folder created while following).
func (t *Tailer) readTree(dir string) {
	for _, p := range logs(dir) {
		t.read(p)
	}
}

// read prints the new lines of one log.
func (t *Tailer) read(path string) {
	for _, l := range t.drain(path) {
		t.tr.Add(&l.ev)
		t.reqs.add(&l.ev)
		if t.o.Filter.MatchJSON(l.raw) && t.visible(&l.ev) {
			t.print(l)
		}
	}
}

// drain returns the complete lines added to path since the last read.
func (t *Tailer) drain(path string) []line {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := t.offsets[path]
	if st.Size() < off { // truncated or replaced: start again
		off, t.partial[path] = 0, nil
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, st.Size()-off))
	if err != nil {
		return nil
	}
	t.offsets[path] = off + int64(len(b))
	b = append(t.partial[path], b...)
	var out []line
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		raw := bytes.TrimSpace(b[:i])
		b = b[i+1:]
		var ev shim.Event
		if len(raw) == 0 || json.Unmarshal(raw, &ev) != nil || ev.Type == "" || ev.AEP == "" {
			continue
		}
		out = append(out, line{raw: append([]byte(nil), raw...), ev: ev})
	}
	if len(b) > maxLine {
		b = nil // a runaway line is dropped, not buffered without bound
	}
	t.partial[path] = append([]byte(nil), b...)
	return out
}

// summary prints what is open right now.
func (t *Tailer) summary() {
	runs, attn := t.tr.Runs(), t.tr.Attention()
	fmt.Fprintf(t.o.Out, "%s\n", t.paint(dim, fmt.Sprintf("open: %d run(s), %d attention request(s) pending", len(runs), len(attn))))
	for _, o := range attn {
		fmt.Fprintf(t.o.Out, "  %s %s %s/%s %s\n", t.paint(yellow, "WAITING"), clock(o.Time),
			printable.String(o.Agent), shortID(o.Session, "", 24), printable.String(o.Subject))
	}
	for _, o := range runs {
		fmt.Fprintf(t.o.Out, "  %s %s %s/%s run %s\n", t.paint(cyan, "RUNNING"), clock(o.Time),
			printable.String(o.Agent), shortID(o.Session, "", 24), shortID(o.Run, o.Session, 24))
	}
}

// print writes one event.
func (t *Tailer) print(l line) {
	if t.o.JSON {
		t.o.Out.Write(append(l.raw, '\n'))
		return
	}
	e := &l.ev
	mark := "  "
	switch {
	case e.Type == "attention.requested":
		mark = t.paint(yellow, "? ")
	case e.Type == "run.started":
		mark = t.paint(cyan, "> ")
	case strings.HasPrefix(e.Type, "run.") && e.Type != "run.step.started" && e.Type != "run.step.finished":
		mark = t.paint(cyan, "< ")
	}
	who := printable.String(e.Agent) + "/" + shortID(e.Session, "", 16)
	if e.Run != "" {
		who += " " + shortID(e.Run, e.Session, 12)
	}
	width := t.width
	if width == 0 {
		width = minTypeWidth
	}
	fmt.Fprintf(t.o.Out, "%s %s%s %s %s%s%s\n", clock(e.Time), mark, t.paint(colorOf(e), typeCell(e.Type, width)),
		t.paint(dim, who), printable.Clip(e.Subject, 40), Facts(e), t.reqs.settles(e))
}

// clock is the time of day of an RFC 3339 timestamp.
func clock(ts string) string {
	if i := strings.IndexByte(ts, 'T'); i >= 0 {
		ts = strings.TrimSuffix(ts[i+1:], "Z")
	}
	return printable.Clip(ts, 12)
}

// ANSI colours.
const (
	red     = "31"
	green   = "32"
	yellow  = "33"
	magenta = "35"
	cyan    = "36"
	dim     = "2"
)

func colorOf(e *shim.Event) string {
	switch {
	case strings.HasPrefix(e.Type, "attention."):
		return yellow
	case strings.HasSuffix(e.Type, ".failed"), strings.HasPrefix(e.Type, "error."), e.Severity == "error", e.Severity == "critical":
		return red
	case strings.HasSuffix(e.Type, ".denied"), strings.HasSuffix(e.Type, ".cancelled"):
		return magenta
	case strings.HasSuffix(e.Type, ".finished"), strings.HasSuffix(e.Type, ".completed"):
		return green
	}
	return ""
}

func (t *Tailer) paint(code, s string) string {
	if !t.o.Color || code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Facts picks the payload members worth a glance, all structural, made
// printable.
func Facts(e *shim.Event) string {
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
		case map[string]any:
			if t, ok := v["type"].(string); ok && k == "error" {
				parts = append(parts, "error="+printable.Clip(t, 40))
			}
		case []any:
			// A list of names (digests_missing): the names, not content.
			var names []string
			for _, x := range v {
				if n, ok := x.(string); ok {
					names = append(names, printable.Clip(n, 40))
				}
			}
			if len(names) > 0 && len(names) == len(v) && len(names) <= 8 {
				parts = append(parts, printable.String(k)+"="+strings.Join(names, ","))
			}
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
