// Package doctor checks that aep-hook is wired and recording: per agent,
// whether it is installed, registered (which events are missing), trusted
// by the vendor, and recording (a synthetic moment fired through the
// registered command line exactly as the vendor would, into a scratch
// home); whether the home can be written; this home's internal failures;
// apart from them, what the agents left open: turns an adapter closed for
// them (interrupted), runs and attention requests that never closed.
package doctor

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/track"
	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// ScopeReport is one agent's registration at one scope.
type ScopeReport struct {
	Scope  installer.Scope
	Status installer.Status
	Trust  *installer.Trust // nil when the vendor has no trust step
	Probe  *ProbeResult     // nil when not fired
	// Others are the aep-hook binaries other than this one that the
	// registrations run, one per binary.
	Others  []OtherBinary
	Healthy bool
}

// OtherBinary is a binary registrations run that is not the one doctor
// checks for (an older build, or one that was moved away).
type OtherBinary struct {
	Path   string // as registered
	Events int    // how many registrations run it
	Gone   bool   // it does not exist: those hooks fail
}

// AgentReport is everything doctor knows about one agent.
type AgentReport struct {
	Agent     installer.Agent
	Installed bool
	Presence  installer.Presence // how it was found
	Scopes    []ScopeReport      // scopes with at least one registration of ours
	// Start is whether the agent's CLI starts on this machine (nil when
	// not checked: not wired, no binary on PATH, or not asked).
	Start *StartResult
}

// Healthy reports whether every registration found works.
func (r AgentReport) Healthy() bool {
	for _, s := range r.Scopes {
		if !s.Healthy {
			return false
		}
	}
	return true
}

// Options says what to check.
type Options struct {
	Env     installer.Env
	Probe   bool          // fire a synthetic moment through each registration
	Timeout time.Duration // per probe; 0 means 10 s
	// ProbeEnv is the environment a probe runs in (the vendor's, which is
	// this process's); AEP_HOME and AEP_OUT are overridden.
	ProbeEnv []string
	// Starts runs each wired agent's CLI with --version, to tell whether
	// it can start on this machine at all (a Node CLI on a Node too old
	// cannot, and then its hooks never run).
	Starts bool
}

// Agents checks every agent install knows.
func Agents(o Options) []AgentReport {
	var out []AgentReport
	for _, a := range installer.Agents() {
		p := a.Presence(o.Env)
		r := AgentReport{Agent: a, Installed: p.Binary != "" || p.Folder != "", Presence: p}
		seen := map[string]bool{}
		for _, sc := range a.Scopes {
			if p := a.Path(o.Env, sc); seen[p] {
				continue // the project is the home: one file, one check
			} else {
				seen[p] = true
			}
			st := installer.Inspect(a, o.Env, sc)
			if len(st.Found) == 0 && st.Err == nil {
				continue
			}
			sr := ScopeReport{Scope: sc, Status: st, Others: others(st.Foreign)}
			sr.Healthy = st.Err == nil && len(st.Missing) == 0
			gone := false
			for _, ob := range sr.Others {
				gone = gone || ob.Gone
			}
			sr.Healthy = sr.Healthy && !gone
			if a.Trust != nil && len(st.Found) > 0 {
				t := a.Trust(o.Env, sc, st.Path, st.Found)
				sr.Trust = &t
				sr.Healthy = sr.Healthy && t.OK
			}
			// A probe through a binary that is gone says only that: the
			// missing binary is the finding.
			if o.Probe && len(st.Found) > 0 && !gone {
				p := Probe(a, st.Found, o)
				sr.Probe = &p
				sr.Healthy = sr.Healthy && p.OK
			}
			r.Scopes = append(r.Scopes, sr)
		}
		out = append(out, r)
	}
	if o.Starts {
		checkStarts(out, o)
	}
	return out
}

// others groups the registrations of another binary (Status.Foreign's
// "event: command" lines) by the binary they run.
func others(foreign []string) []OtherBinary {
	var out []OtherBinary
	at := map[string]int{}
	for _, f := range foreign {
		_, cmd, _ := strings.Cut(f, ": ")
		// Leading NAME=value words are the hook's settings (install
		// --control writes them), not its program.
		_, w := installer.CommandEnv(cmd)
		if len(w) == 0 {
			continue
		}
		i, ok := at[w[0]]
		if !ok {
			i = len(out)
			at[w[0]] = i
			out = append(out, OtherBinary{Path: w[0], Gone: !runnable(w[0])})
		}
		out[i].Events++
	}
	return out
}

// runnable reports whether prog names a file that exists: a path, or a
// bare name found on PATH.
func runnable(prog string) bool {
	if !strings.ContainsRune(prog, '/') && !strings.ContainsRune(prog, filepath.Separator) {
		_, err := exec.LookPath(prog)
		return err == nil
	}
	_, err := os.Stat(prog)
	return err == nil
}

// ProbeResult is the outcome of one synthetic moment.
type ProbeResult struct {
	OK      bool
	Command string // what was run
	Detail  string // what landed, or what went wrong
	// Fix is the command line that replays the probe by hand, into a
	// scratch home, to see why it failed ("" when it did not).
	Fix string
}

// Probe fires agent a's synthetic moment through the registered command
// line the way the vendor runs it (a shell for command strings, a plain
// exec for Hermes's shlex-split commands and Cline's scripts), in the
// project directory, with the moment on stdin and AEP_HOME pointed at a
// scratch home that is removed afterwards (AEP_OUT is cleared so nothing is
// delivered). It checks the exit status, that stdout is exactly the
// vendor's neutral reply, and that the event landed.
func Probe(a installer.Agent, found []installer.Found, o Options) ProbeResult {
	f := found[0]
	for _, x := range found {
		if x.Event == a.Probe.Event {
			f = x
		}
	}
	scratch, err := os.MkdirTemp("", "aep-doctor-")
	if err != nil {
		return ProbeResult{Detail: "no scratch home: " + err.Error()}
	}
	defer os.RemoveAll(scratch)
	session := "aep-doctor-" + randomHex()
	payload := strings.ReplaceAll(a.Probe.Payload, "SESSION", session)
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var cmd *exec.Cmd
	var settings []string
	shown := f.Command
	switch {
	case a.Format == nil:
		return ProbeResult{Detail: "no format"}
	case isHookScripts(a.Format):
		cmd = exec.CommandContext(ctx, f.Key)
		shown = f.Key
	case isFileSet(a.Format):
		// A plugin file (pi, OpenCode, Kilo): the probe runs the command the
		// plugin starts, with the plugin's line on stdin, and the settings
		// the file carries (pi's control posture) in its environment.
		env, w := installer.CommandEnv(f.Command)
		if len(w) == 0 {
			return ProbeResult{Detail: "no command registered"}
		}
		cmd = exec.CommandContext(ctx, w[0], w[1:]...)
		for k, v := range env {
			settings = append(settings, k+"="+v)
		}
	case a.Name == "hermes":
		w := installer.SplitCommand(f.Command)
		cmd = exec.CommandContext(ctx, w[0], w[1:]...)
	case runtime.GOOS == "windows":
		cmd = exec.CommandContext(ctx, "cmd", "/C", f.Command)
	default:
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", f.Command)
	}
	cmd.Dir = o.Env.Dir
	cmd.Env = append(append(filterEnv(o.ProbeEnv, "AEP_HOME", "AEP_OUT"), settings...), "AEP_HOME="+scratch, "AEP_OUT=")
	cmd.Stdin = strings.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res := runProbe(a, cmd, &stdout, &stderr, scratch, session)
	res.Command = shown
	if !res.OK {
		res.Fix = "printf '%s\\n' " + installer.Quote(strings.TrimSpace(strings.ReplaceAll(a.Probe.Payload, "SESSION", "aep-doctor-by-hand"))) +
			" | AEP_HOME=\"$(mktemp -d)\" " + shown
	}
	return res
}

// runProbe runs a probe's command and judges what it did.
func runProbe(a installer.Agent, cmd *exec.Cmd, stdout, stderr *bytes.Buffer, scratch, session string) ProbeResult {
	var res ProbeResult
	if err := cmd.Run(); err != nil {
		res.Detail = fmt.Sprintf("the hook command failed: %v", err)
		if s := strings.TrimSpace(stderr.String()); s != "" {
			res.Detail += ": " + firstLine(s)
		}
		return res
	}
	if v, ok := mapping.Lookup(a.Name); ok && v.Reply != nil {
		if want := v.Reply(a.Probe.Event); !bytes.Equal(stdout.Bytes(), want) {
			res.Detail = fmt.Sprintf("stdout %q is not the neutral reply %q", clip(stdout.String()), want)
			return res
		}
	}
	n, types := landed(filepath.Join(scratch, "logs"), session)
	if n == 0 {
		res.Detail = "exit 0 but no event landed"
		if fs, _ := shim.ReadFailures(filepath.Join(scratch, "internal", "errors.jsonl")); len(fs) > 0 {
			res.Detail += ": " + fs[len(fs)-1].Stage + ": " + fs[len(fs)-1].Error
		}
		return res
	}
	res.OK = true
	events := fmt.Sprintf("%d events", n)
	if n == 1 {
		events = "1 event"
	}
	if isFileSet(a.Format) && !isHookScripts(a.Format) {
		res.Detail = fmt.Sprintf("the command the plugin starts recorded a synthetic bus event (%s: %s)", events, strings.Join(types, ", "))
	} else {
		res.Detail = fmt.Sprintf("the registered command recorded a synthetic %s (%s: %s)", a.Probe.Event, events, strings.Join(types, ", "))
	}
	return res
}

func isHookScripts(f installer.Format) bool {
	_, ok := f.(installer.HookScripts)
	return ok
}

func isFileSet(f installer.Format) bool {
	_, ok := f.(installer.FileSet)
	return ok
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func filterEnv(env []string, drop ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return clip(s)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// landed counts the events of session under root and lists their types.
func landed(root, session string) (int, []string) {
	n := 0
	var types []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		eachEvent(p, func(e *shim.Event) {
			if e.Session == session {
				n++
				types = append(types, e.Type)
			}
		})
		return nil
	})
	return n, types
}

// eachEvent calls fn for every event line of a log.
func eachEvent(path string, fn func(*shim.Event)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	for sc.Scan() {
		var e shim.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type != "" {
			fn(&e)
		}
	}
}

// Recorded lists the agents with at least one log under root, sorted.
func Recorded(root string) []string {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if logs, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.jsonl")); len(logs) > 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// Writable checks that the home's log folder can be written, the way a
// hook writes it.
func Writable(home string) error {
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// StageInterrupted is the error-log stage of a turn the agent left open
// and an adapter closed (a tee whose agent died or whose stream was cut):
// a fact about the agent, kept in the error log so doctor can show it, not
// a failure of aep-hook.
const StageInterrupted = "interrupted"

// Failures are the internal failures that belong to one home.
type Failures struct {
	Path     string         // the home's own error log
	Own      []shim.Failure // recorded there
	Fallback string         // the per-user fallback in the temporary directory
	Owner    string         // who the fallback file belongs to
	Spilled  []shim.Failure // recorded in the fallback for this home
	Others   int            // fallback failures of other homes (or of no named home)
	// Interrupted are this home's StageInterrupted entries (from either
	// file), kept out of Own and Spilled.
	Interrupted []shim.Failure
}

// ReadFailures reads this home's failures: its own log, and from the
// shared fallback only those stamped with this home; interrupted turns
// are set apart.
func ReadFailures(home string) Failures {
	el := shim.NewErrorLog(home)
	out := Failures{Path: el.Path, Fallback: el.Fallback}
	own, _ := shim.ReadFailures(el.Path)
	fb, _ := shim.ReadFailures(el.Fallback)
	for _, f := range fb {
		if f.Home != home {
			out.Others++
			continue
		}
		if f.Stage == StageInterrupted {
			out.Interrupted = append(out.Interrupted, f)
		} else {
			out.Spilled = append(out.Spilled, f)
		}
	}
	for _, f := range own {
		if f.Stage == StageInterrupted {
			out.Interrupted = append(out.Interrupted, f)
		} else {
			out.Own = append(out.Own, f)
		}
	}
	sort.SliceStable(out.Interrupted, func(i, j int) bool { return out.Interrupted[i].Time < out.Interrupted[j].Time })
	out.Owner = fileOwner(el.Fallback)
	return out
}

// Recent counts the failures (not the interrupted turns) newer than since.
func (f Failures) Recent(since time.Time) int {
	n := 0
	for _, x := range append(append([]shim.Failure(nil), f.Own...), f.Spilled...) {
		if t, err := time.Parse(time.RFC3339Nano, x.Time); err == nil && t.After(since) {
			n++
		}
	}
	return n
}

// OpenWork scans the newest logs (at most limit files) for runs with no
// terminal event and attention requests with no close.
func OpenWork(logRoot string, limit int) (runs, attention []track.Open, scanned int) {
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	_ = filepath.WalkDir(logRoot, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			if info, err := d.Info(); err == nil {
				files = append(files, file{p, info.ModTime()})
			}
		}
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	if len(files) > limit {
		files = files[:limit]
	}
	var tr track.Tracker
	for _, f := range files {
		eachEvent(f.path, tr.Add)
	}
	return tr.Runs(), tr.Attention(), len(files)
}
