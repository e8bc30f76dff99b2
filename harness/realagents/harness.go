package realagents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// Agent is one vendor CLI the harness drives.
type Agent struct {
	// Name is the aep-hook adapter (and fixtures folder) name.
	Name string
	// Package and Version pin the npm package; Bin is its command.
	Package, Version, Bin string
	// Cache, when set, is the install folder in the cache when the agent
	// runs another agent's install (Kimi web is the Kimi Code CLI's kimi
	// web); default <Name>-<Version>.
	Cache string
	// Hooks, when set, is the agent whose hooks Register installs, for a
	// channel recorded beside them (codex-otel: codex); default Name.
	Hooks string
	// API is the wire format of its fake model server.
	API fakemodel.API
	// Setup writes the agent's configuration into the run's temporary
	// home and workspace, registers the recorder (Run.Register: the
	// installer's own registration), and adds the environment the agent
	// needs.
	Setup func(r *Run) error
	// Scenarios are the sessions recorded for it.
	Scenarios []Scenario
	// Unsignalled, when set, counts the tool calls a recording's firings
	// give no outcome for, and that count is the recorded scenario's
	// OpenTools: for an agent that runs its outcome hooks without waiting
	// for them and loses some (Kimi Code kills a PostToolUse whose call's
	// work is over), how many it lost varies from run to run.
	Unsignalled func(fs []Firing) int
}

// Scenario is one scripted session.
type Scenario struct {
	Name        string
	Description string
	// Mode is "headless" or "tmux".
	Mode string
	// Facts are what the session really does, for the truth checker.
	Facts truth.Facts
	// Model answers the agent's model requests.
	Model fakemodel.Script
	// Drive runs the agent through the session.
	Drive func(r *Run) error
	// OTel, when set, records the agent's OTLP log export through the
	// sidecar (see OTelChannel) and says how the recording is replayed.
	OTel *OTelChannel
	// Control, when set, runs the control loop: a relay and a sender
	// answering the requests the hooks hold (see Control).
	Control *Control
}

// Harness holds what every run shares.
type Harness struct {
	// Cache is the install cache (AEP_REAL_CACHE, default
	// ~/.cache/aep-hook/realagents).
	Cache string
	// Fixtures is the repository's fixtures folder.
	Fixtures string
	// AEPHook is the aep-hook binary hook firings are piped into.
	AEPHook string
	// Self is the harness binary, registered as `Self hook <agent>`.
	Self string
	// Log receives progress lines.
	Log io.Writer
}

// Run is one scenario being recorded.
type Run struct {
	H        *Harness
	Agent    *Agent
	Scenario *Scenario
	// Dir is the run's temporary root; Home the agent's HOME; Work the
	// workspace (the agent's cwd).
	Dir, Home, Work string
	// Model is the fake model server.
	Model *fakemodel.Server
	// Env is the agent's environment.
	Env []string
	// Notes collects what the driver observed, for the log.
	Notes []string
	// Unregistered is set while Register has removed the recorder (the
	// second drive of a model-request check): nothing is recorded then.
	Unregistered bool
	// closers run, last first, once the drive is over and before the
	// recording is collected (a sidecar Setup started).
	closers []func()
}

// OnDone has f run once the drive is over, before the recording is
// collected; the last registered runs first.
func (r *Run) OnDone(f func()) { r.closers = append(r.closers, f) }

// done runs the closers.
func (r *Run) done() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// AgentBin is the installed agent command.
func (r *Run) AgentBin() string {
	return filepath.Join(r.H.Cache, r.Agent.cacheDir(), "node_modules", ".bin", r.Agent.Bin)
}

// cacheDir is the agent's install folder in the cache.
func (a *Agent) cacheDir() string {
	if a.Cache != "" {
		return a.Cache
	}
	return a.Name + "-" + a.Version
}

// Setenv adds or replaces one environment variable of the agent.
func (r *Run) Setenv(k, v string) {
	for i, kv := range r.Env {
		if strings.HasPrefix(kv, k+"=") {
			r.Env[i] = k + "=" + v
			return
		}
	}
	r.Env = append(r.Env, k+"="+v)
}

// WriteJSON writes v as JSON to path (relative paths are under Home).
func (r *Run) WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return r.WriteFile(path, string(b))
}

// WriteFile writes text to path (relative paths are under Home).
func (r *Run) WriteFile(path, text string) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.Home, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// Exec runs the agent headless in Work with stdin, bounded by timeout,
// and returns its combined output.
func (r *Run) Exec(timeout time.Duration, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.AgentBin(), args...)
	cmd.Dir, cmd.Env = r.Work, r.Env
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	note := fmt.Sprintf("exec %s: %v", strings.Join(args, " "), err)
	if err != nil {
		// The agent's last words say why it failed.
		tail := out.String()
		if len(tail) > 600 {
			tail = tail[len(tail)-600:]
		}
		note += "\n      " + strings.ReplaceAll(strings.TrimSpace(tail), "\n", "\n      ")
	}
	r.Notes = append(r.Notes, note)
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("%s timed out after %s", r.Agent.Bin, timeout)
	}
	return out.String(), nil
}

// Firings returns the moments recorded so far, by name.
func (r *Run) Firings() []string {
	fs, _ := collectFirings(r.Dir, &Rewriter{})
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Hook()
	}
	return names
}

// WaitFiring waits until the moment hook has fired at least n times.
func (r *Run) WaitFiring(hook string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c := 0
		for _, h := range r.Firings() {
			if h == hook {
				c++
			}
		}
		if c >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s fired %d times, want %d, within %s (fired: %s)", hook, c, n, timeout, strings.Join(r.Firings(), " "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Record runs one scenario of agent a and writes its fixture.
func (h *Harness) Record(a *Agent, s *Scenario) (Fixture, error) {
	sb, err := NewSandbox("aep-real-")
	if err != nil {
		return Fixture{}, err
	}
	dir := sb.Dir
	defer os.RemoveAll(dir)
	r := &Run{H: h, Agent: a, Scenario: s, Dir: dir, Home: sb.Home, Work: sb.Work}
	logf, err := os.Create(filepath.Join(dir, "model.log"))
	if err != nil {
		return Fixture{}, err
	}
	defer logf.Close()
	r.Model, err = fakemodel.Start(a.API, s.Model, logf)
	if err != nil {
		return Fixture{}, err
	}
	defer r.Model.Close()
	r.Env = append(sb.Env, EnvRecordDir+"="+dir, EnvAEPHook+"="+h.AEPHook)
	defer r.done()
	if err := a.Setup(r); err != nil {
		return Fixture{}, fmt.Errorf("%s setup: %w", a.Name, err)
	}
	if err := r.StartControl(); err != nil {
		return Fixture{}, fmt.Errorf("%s control: %w", a.Name, err)
	}
	driveErr := s.Drive(r)
	r.done()
	rw := sb.Rewriter()
	// Claude Code names project folders by the cwd with "/" spelled "-".
	rw.Add(strings.ReplaceAll(r.Work, "/", "-"), "-home-user-proj")
	rw.Add(strings.TrimPrefix(r.Model.URL, "http://"), "127.0.0.1:PORT")
	// The harness binary runs as the scenarios' MCP server.
	rw.Add(h.Self, "/usr/local/bin/realagents")
	fs, err := collectFirings(dir, rw)
	if err != nil {
		return Fixture{}, err
	}
	downErr := heldElapsed(r, fs)
	ss, err := collectStream(dir, rw)
	if err != nil {
		return Fixture{}, err
	}
	es, err := collectExports(dir, rw)
	if err != nil {
		return Fixture{}, err
	}
	if len(es) > 0 {
		fmt.Fprintf(h.Log, "  %s/%s: %d OTLP exports\n", a.Name, s.Name, len(es))
	}
	if len(ss) > 0 {
		fmt.Fprintf(h.Log, "  %s/%s: %d stream lines\n", a.Name, s.Name, len(ss))
	} else {
		fmt.Fprintf(h.Log, "  %s/%s: %d firings: %s\n", a.Name, s.Name, len(fs), hookEvents(fs))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(h.Log, "    note: %s\n", n)
	}
	if os.Getenv("AEP_REAL_KEEP") != "" {
		keep := filepath.Join(h.Cache, "runs", a.Name+"-"+s.Name)
		os.RemoveAll(keep)
		os.MkdirAll(filepath.Dir(keep), 0o755)
		exec.Command("cp", "-a", dir, keep).Run()
	}
	if driveErr == nil {
		driveErr = downErr
	}
	if driveErr != nil {
		return Fixture{}, fmt.Errorf("%s/%s: %w", a.Name, s.Name, driveErr)
	}
	if len(fs) == 0 && len(ss) == 0 && len(es) == 0 {
		return Fixture{}, fmt.Errorf("%s/%s: no hook fired", a.Name, s.Name)
	}
	fx := Fixture{
		Dir:      filepath.Join(h.Fixtures, a.Name, "recorded", s.Name),
		Scenario: scenarioFile(a, s, fs),
		Firings:  fs,
		Stream:   ss,
		Exports:  es,
		Tools:    offered(r.Model.Requests()),
	}
	return fx, nil
}

// scenarioFile is the description a recorded scenario carries, its facts
// completed from the firings fs where the agent's own outcome hooks are
// not reliable (Agent.Unsignalled).
func scenarioFile(a *Agent, s *Scenario, fs []Firing) ScenarioFile {
	f := s.Facts
	if a.Unsignalled != nil {
		f.OpenTools = a.Unsignalled(fs)
	}
	return ScenarioFile{Agent: a.Name, Version: a.Version, Name: s.Name, Description: s.Description, Mode: s.Mode, Facts: f, OTel: s.OTel, Control: s.Control}
}

// offered is the sorted set of tool names the requests offered ([] when
// none did: the recording kept the list, and it is empty).
func offered(reqs []fakemodel.Request) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, q := range reqs {
		for _, t := range q.Tools {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	return out
}
