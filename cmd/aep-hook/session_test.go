package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aep-hook/aep-hook/redact"

	"github.com/aep-hook/aep-hook/harness/pins"
)

// update rewrites the demo goldens: go test ./cmd/aep-hook -run TestDemoSessions -update
var update = flag.Bool("update", false, "rewrite fixtures/demo/*.golden from the current output")

// demoDir holds the bundled vendor sessions `make demo` plays.
const demoDir = "../../fixtures/demo"

// loadDemo reads one demo session file, one moment per non-empty line.
func loadDemo(t *testing.T, path string) []pins.DemoMoment {
	t.Helper()
	ms, err := pins.LoadDemo(path)
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	return ms
}

// sessionLogs returns every log file under home/logs, relative to it, sorted.
func sessionLogs(t *testing.T, home string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(home, "logs", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		paths[i], _ = filepath.Rel(filepath.Join(home, "logs"), p)
		paths[i] = filepath.ToSlash(paths[i])
	}
	sort.Strings(paths)
	return paths
}

// TestDemoSessions plays every fixtures/demo/<vendor>.jsonl through the
// binary, one hook process per line, and checks the whole resulting record:
// its shape against fixtures/demo/<vendor>.golden, and the invariants every
// log must keep whatever the golden says.
func TestDemoSessions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(demoDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no demo sessions in %s: %v", demoDir, err)
	}
	for _, file := range files {
		vendor := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			home, tmp := t.TempDir(), t.TempDir()
			env := hookEnv(home, tmp)
			for i, m := range loadDemo(t, file) {
				args := []string{vendor}
				if m.Hook != "" {
					args = append(args, m.Hook)
				}
				if r := runHook(t, env, m.Input, args...); r.code != 0 || r.stderr != "" {
					t.Fatalf("line %d: exit %d stderr %q", i+1, r.code, r.stderr)
				}
			}
			if b, err := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl")); err == nil {
				t.Errorf("internal failures recorded: %s", b)
			}
			logs := sessionLogs(t, home)
			if len(logs) == 0 {
				t.Fatal("no log written")
			}
			validateLogs(t, home, logs)
			var got strings.Builder
			for _, rel := range logs {
				evs := readLog(t, filepath.Join(home, "logs", filepath.FromSlash(rel)))
				checkInvariants(t, rel, evs)
				fmt.Fprintf(&got, "# %s\n", rel)
				for _, l := range shapeLines(evs) {
					got.WriteString(l + "\n")
				}
			}
			golden := filepath.Join(demoDir, vendor+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatalf("write golden: %v", err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (regenerate with -update): %v", err)
			}
			if got.String() != string(want) {
				t.Errorf("log shape differs from %s (regenerate with -update after review)\n%s",
					golden, lineDiff(string(want), got.String()))
			}
		})
	}
}

// shapeLines renders one log as "type subject run#N cause=@K" per event:
// run#N numbers runs by first appearance, @K is the 1-based index of the
// event an id points to (a subject that is an event id, as in the attention
// lifecycle, renders the same way), "-" marks an absent attribute.
func shapeLines(evs []map[string]any) []string {
	index := map[string]int{}
	for i, e := range evs {
		if id, ok := e["id"].(string); ok {
			index[id] = i + 1
		}
	}
	ref := func(v any) string {
		s, _ := v.(string)
		if s == "" {
			return "-"
		}
		if k, ok := index[s]; ok {
			return fmt.Sprintf("@%d", k)
		}
		return s
	}
	runs := map[string]int{}
	lines := make([]string, 0, len(evs))
	for _, e := range evs {
		run := "run#-"
		if r, _ := e["run"].(string); r != "" {
			if _, ok := runs[r]; !ok {
				runs[r] = len(runs) + 1
			}
			run = fmt.Sprintf("run#%d", runs[r])
		}
		cause := "-"
		if c, _ := e["cause"].(string); c != "" {
			cause = "?"
			if k, ok := index[c]; ok {
				cause = fmt.Sprintf("@%d", k)
			}
		}
		lines = append(lines, fmt.Sprintf("%s %s %s cause=%s", e["type"], ref(e["subject"]), run, cause))
	}
	return lines
}

// isRunTerminal reports whether typ closes a run.
func isRunTerminal(typ string) bool {
	return typ == "run.finished" || typ == "run.failed" || typ == "run.cancelled"
}

// checkInvariants asserts what every log must keep, golden or not: order,
// run pairing and terminal exclusivity, the attention lifecycle settled
// before the session's end, and no field above the declared capture.
func checkInvariants(t *testing.T, name string, evs []map[string]any) {
	t.Helper()
	prevE, prevS := -1.0, -1.0
	ids := map[string]bool{}
	started := map[string]string{}  // run → id of its run.started
	terminal := map[string]string{} // run → type of its terminal
	settled := map[string]bool{}    // attention request id → terminal seen
	var requests []string
	ended := -1
	for i, e := range evs {
		at := fmt.Sprintf("%s event %d (%v)", name, i+1, e["type"])
		id, _ := e["id"].(string)
		if ids[id] {
			t.Errorf("%s: duplicate id %s", at, id)
		}
		ids[id] = true
		typ, _ := e["type"].(string)
		if ep, ok := e["epoch"].(float64); ok {
			sq, _ := e["seq"].(float64)
			if ep < prevE || ep == prevE && sq <= prevS {
				t.Errorf("%s: (epoch, seq) = (%v, %v) after (%v, %v)", at, ep, sq, prevE, prevS)
			}
			prevE, prevS = ep, sq
		} else if !strings.HasPrefix(typ, "agent.") {
			t.Errorf("%s: session-scoped event without epoch/seq", at)
		}
		run, _ := e["run"].(string)
		switch {
		case typ == "run.started" && run != "":
			if _, dup := started[run]; dup {
				t.Errorf("%s: second run.started for one run", at)
			}
			started[run] = id
		case isRunTerminal(typ) && run != "":
			if prev, dup := terminal[run]; dup {
				t.Errorf("%s: second terminal for a run already closed by %s", at, prev)
			}
			terminal[run] = typ
			if s, ok := started[run]; ok && e["cause"] != s {
				t.Errorf("%s: cause %v, want the run's run.started %s", at, e["cause"], s)
			}
		case typ == "session.ended":
			if ended >= 0 {
				t.Errorf("%s: second session.ended", at)
			}
			ended = i
		case typ == "attention.requested":
			requests = append(requests, id)
		case typ == "attention.resolved" || typ == "attention.timeout":
			subj, _ := e["subject"].(string)
			if settled[subj] {
				t.Errorf("%s: second terminal for attention request %s", at, subj)
			}
			settled[subj] = true
		}
		if ended >= 0 && i > ended {
			t.Errorf("%s: event after session.ended", at)
		}
		checkCapture(t, at, e)
	}
	if ended >= 0 {
		for _, r := range requests {
			if !settled[r] {
				t.Errorf("%s: attention request %s not settled before session.ended", name, r)
			}
		}
	}
}

// checkCapture asserts the event carries nothing above its declared
// capture. Downlevel to the declared level must leave it unchanged (it also
// validates the envelope shape). For a registered type at metadata, the
// stronger check claims one level more and downlevels back: whatever the
// gate then drops was a field above metadata.
func checkCapture(t *testing.T, at string, e map[string]any) {
	t.Helper()
	c, _ := e["capture"].(string)
	level, err := redact.ParseLevel(c)
	if err != nil {
		t.Errorf("%s: capture %q: %v", at, c, err)
		return
	}
	out, err := redact.Downlevel(e, level)
	if err != nil {
		t.Errorf("%s: downlevel: %v", at, err)
		return
	}
	if !reflect.DeepEqual(out, e) {
		t.Errorf("%s: downlevel to its own capture changed it:\n got %v\nwant %v", at, out, e)
	}
	typ, _ := e["type"].(string)
	if level != redact.Metadata || strings.HasPrefix(typ, "x.") {
		return // x.* field levels live in the draft, not on the wire
	}
	claimed := make(map[string]any, len(e))
	for k, v := range e {
		claimed[k] = v
	}
	claimed["capture"] = redact.Redacted.String()
	out, err = redact.Downlevel(claimed, redact.Metadata)
	if err != nil {
		t.Errorf("%s: downlevel: %v", at, err)
		return
	}
	if !reflect.DeepEqual(out["data"], e["data"]) {
		t.Errorf("%s: data carries fields above metadata:\n got %v\nkept %v", at, e["data"], out["data"])
	}
}

// lineDiff is a minimal line-by-line diff for golden mismatches.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// TestConcurrentFleetHooks runs the tool moments of one session as
// concurrent hook processes (8 goroutines, the way the vendors fire matching
// hooks in parallel) for two fleet vendors: every line intact, ids unique,
// (epoch, seq) strictly increasing in file order, nothing lost.
func TestConcurrentFleetHooks(t *testing.T) {
	const workers, perWorker = 8, 10
	cases := []struct {
		vendor, log string
		moments     func(w, i int) [][]byte // the hook payloads one call fires
		events      int                     // events per call
	}{
		{
			vendor: "gemini-cli", log: "gemini-cli/gm-conc.jsonl", events: 2,
			moments: func(w, i int) [][]byte {
				in := fmt.Sprintf(`{"file_path":"/w/f%d_%d.go"}`, w, i)
				return [][]byte{
					fmt.Appendf(nil, `{"hook_event_name":"BeforeTool","session_id":"gm-conc","tool_name":"read_file","tool_input":%s}`, in),
					fmt.Appendf(nil, `{"hook_event_name":"AfterTool","session_id":"gm-conc","tool_name":"read_file","tool_input":%s,"tool_response":{"llmContent":"ok"}}`, in),
				}
			},
		},
		{
			vendor: "cline", log: "cline/task-conc.jsonl", events: 2,
			moments: func(w, i int) [][]byte {
				id := fmt.Sprintf("call_%d_%d", w, i)
				return [][]byte{
					fmt.Appendf(nil, `{"hookName":"tool_call","taskId":"task-conc","agent_id":"a","iteration":%d,"tool_call":{"id":%q,"name":"read_file","input":{"path":"f"}}}`, i, id),
					fmt.Appendf(nil, `{"hookName":"tool_result","taskId":"task-conc","agent_id":"a","iteration":%d,"tool_result":{"id":%q,"name":"read_file","output":"x","durationMs":1}}`, i, id),
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.vendor, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			env := hookEnv(home, t.TempDir())
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perWorker {
						for _, p := range c.moments(w, i) {
							if r := runHook(t, env, p, c.vendor); r.code != 0 || r.stderr != "" {
								t.Errorf("hook exit %d stderr %q", r.code, r.stderr)
							}
						}
					}
				}()
			}
			wg.Wait()
			evs := readLog(t, filepath.Join(home, "logs", filepath.FromSlash(c.log)))
			lost := accounted(t, home, len(evs), workers*perWorker*c.events)
			checkInvariants(t, c.log, evs)
			// Every outcome is cause-linked to its own request, even with
			// the requests of eight processes interleaved (unless the
			// request was one a deadline overrun lost).
			for i, e := range shapeLines(evs) {
				if lost == 0 && strings.HasPrefix(e, "tool.completed") && strings.HasSuffix(e, "cause=-") {
					t.Errorf("event %d unpaired: %s", i+1, e)
				}
			}
		})
	}
}
