// Package realagents is the real-agent harness: it installs the coding
// agents' CLIs at pinned versions from the npm registry into a cache outside
// the repository, drives scripted scenarios against fake model servers
// (package fakemodel) with temporary homes and the README's hook
// registrations, records every hook firing through a recorder registered as
// the hook command, and writes the firings as fixtures under
// fixtures/<agent>/recorded/<scenario>/. Replay feeds those fixtures through
// the real aep-hook binary, one process per firing, and package truth
// asserts the whole record.
//
// `make real` re-records and replays (network: the npm registry only);
// `make test` replays the committed fixtures without network.
package realagents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// Firing is one recorded hook invocation: what the agent passed the hook
// command, and what the command answered.
type Firing struct {
	// N numbers the firings of a scenario from 1, in the order they started.
	N int `json:"n"`
	// Args are the hook command's arguments after the adapter name (the
	// moment name for vendors that pass it on the command line).
	Args []string `json:"args,omitempty"`
	// Env holds the environment variables that matter to the moment
	// (vendor variables naming the project or session), rewritten.
	Env map[string]string `json:"env,omitempty"`
	// Signal is a signal the agent sent the hook while it ran, and
	// SignalAfterMS when (after the hook started); replay delivers it
	// again once the hook has read its input.
	Signal        string `json:"signal,omitempty"`
	SignalAfterMS int64  `json:"signal_after_ms,omitempty"`
	// ElapsedMS, kept in a control recording, is how long the hook took
	// to answer the agent (with the relay down a held firing must take no
	// longer than the observe-only ones).
	ElapsedMS int64 `json:"elapsed_ms,omitempty"`
	// After, for a firing beside a stream (pi's held tool_call beside the
	// extension's forwarded lines), is how many stream lines had been
	// recorded when it started: replay runs it there.
	After int `json:"after,omitempty"`
	// Exit and Stdout are what the hook command answered.
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout,omitempty"`
	// Input is the raw stdin when it is JSON (rewritten, compacted);
	// InputText holds it otherwise.
	Input     json.RawMessage `json:"input,omitempty"`
	InputText string          `json:"input_text,omitempty"`
}

// Stdin returns the bytes the hook is fed on replay.
func (f Firing) Stdin() []byte {
	if len(f.Input) > 0 {
		return f.Input
	}
	return []byte(f.InputText)
}

// Hook returns the firing's moment name: the payload's hook_event_name
// (or hookName), else the first argument.
func (f Firing) Hook() string {
	var m struct {
		A string `json:"hook_event_name"`
		B string `json:"hookName"`
	}
	json.Unmarshal(f.Input, &m)
	switch {
	case m.A != "":
		return m.A
	case m.B != "":
		return m.B
	case len(f.Args) > 0:
		return f.Args[0]
	}
	return ""
}

// ScenarioFile is the recorded scenario's description and the facts the
// truth checker holds its record to.
type ScenarioFile struct {
	Agent       string `json:"agent"`
	Version     string `json:"version"`
	Name        string `json:"scenario"`
	Description string `json:"description"`
	// Mode says how the agent was driven: headless or tmux.
	Mode string `json:"mode"`
	// Facts are what really happened in the session.
	Facts truth.Facts `json:"facts"`
	// Pending, when set, says why the record of this session is known not
	// to be true yet: replay reports it and does not count it as passed.
	Pending string `json:"pending,omitempty"`
	// OTel, for a recorded OTLP channel, says how it was recorded and the
	// configurations it replays through, each with its own facts (Facts
	// then go unused).
	OTel *OTelChannel `json:"otel,omitempty"`
	// Control, for a session recorded with the control loop, is its relay
	// posture and the answers the held requests got, in order.
	Control *Control `json:"control,omitempty"`
}

// Fixture is one recorded scenario: its description and its firings, or
// for a stream transport (a plugin's pipe, a bridge's connections) its
// stream.
type Fixture struct {
	Dir      string
	Scenario ScenarioFile
	Firings  []Firing
	Stream   []StreamLine
	// Exports are a recorded OTLP channel's export requests (otlp.jsonl),
	// beside the firings of the hooks registered with it, if any.
	Exports []Export
	// Tools are the tool names the agent offered its model in the
	// session (tools.json; nil when the recording kept none).
	Tools []string
}

// Fixture file names inside fixtures/<agent>/recorded/<scenario>/.
const (
	scenarioJSON = "scenario.json"
	firingsFile  = "firings.jsonl"
	toolsFile    = "tools.json"
)

// LoadFixtures reads every recorded scenario under root
// (root/<agent>/recorded/<scenario>/), sorted by agent then scenario.
func LoadFixtures(root string) ([]Fixture, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "*", "recorded", "*", scenarioJSON))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var out []Fixture
	for _, p := range dirs {
		fx, err := LoadFixture(filepath.Dir(p))
		if err != nil {
			return nil, err
		}
		out = append(out, fx)
	}
	return out, nil
}

// LoadFixture reads one recorded scenario folder.
func LoadFixture(dir string) (Fixture, error) {
	fx := Fixture{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, scenarioJSON))
	if err != nil {
		return fx, fmt.Errorf("fixture %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &fx.Scenario); err != nil {
		return fx, fmt.Errorf("fixture %s: %s: %w", dir, scenarioJSON, err)
	}
	if fx.Stream, err = ReadStreamLines(filepath.Join(dir, streamFile)); err != nil {
		return fx, fmt.Errorf("fixture %s: %w", dir, err)
	}
	if fx.Exports, err = ReadExports(filepath.Join(dir, exportsFile)); err != nil {
		return fx, fmt.Errorf("fixture %s: %w", dir, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, toolsFile)); err == nil {
		if err := json.Unmarshal(b, &fx.Tools); err != nil {
			return fx, fmt.Errorf("fixture %s: %s: %w", dir, toolsFile, err)
		}
	}
	f, err := os.Open(filepath.Join(dir, firingsFile))
	if os.IsNotExist(err) && (len(fx.Stream) > 0 || len(fx.Exports) > 0) {
		return fx, nil
	}
	if err != nil {
		return fx, fmt.Errorf("fixture %s: %w", dir, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var fi Firing
		if err := json.Unmarshal(sc.Bytes(), &fi); err != nil {
			return fx, fmt.Errorf("fixture %s: %s line %d: %w", dir, firingsFile, line, err)
		}
		fx.Firings = append(fx.Firings, fi)
	}
	if err := sc.Err(); err != nil {
		return fx, fmt.Errorf("fixture %s: %w", dir, err)
	}
	return fx, nil
}

// Save writes the fixture into its folder, replacing what was there.
func (fx Fixture) Save() error {
	if err := os.MkdirAll(fx.Dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(fx.Scenario, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(fx.Dir, scenarioJSON), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if fx.Tools != nil {
		t, err := json.Marshal(fx.Tools)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(fx.Dir, toolsFile), append(t, '\n'), 0o644); err != nil {
			return err
		}
	}
	if len(fx.Stream) > 0 {
		if err := WriteStreamLines(filepath.Join(fx.Dir, streamFile), fx.Stream); err != nil {
			return err
		}
		if len(fx.Firings) == 0 {
			return nil
		}
	}
	if len(fx.Exports) > 0 {
		if err := WriteExports(filepath.Join(fx.Dir, exportsFile), fx.Exports); err != nil {
			return err
		}
		if len(fx.Firings) == 0 {
			return nil
		}
	}
	var buf bytes.Buffer
	for _, fi := range fx.Firings {
		l, err := json.Marshal(fi)
		if err != nil {
			return err
		}
		buf.Write(l)
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(fx.Dir, firingsFile), buf.Bytes(), 0o644)
}

// Rewriter replaces machine-specific strings (temporary folders, the home,
// the user and host names) with stable placeholders, longest first.
type Rewriter struct {
	pairs [][2]string
}

// Add maps from to the placeholder to; empty or very short strings are
// ignored (they would rewrite unrelated text).
func (r *Rewriter) Add(from, to string) {
	if len(from) < 4 {
		return
	}
	r.pairs = append(r.pairs, [2]string{from, to})
	sort.SliceStable(r.pairs, func(i, j int) bool { return len(r.pairs[i][0]) > len(r.pairs[j][0]) })
}

// String rewrites s.
func (r *Rewriter) String(s string) string {
	for _, p := range r.pairs {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}

// JSON rewrites the strings inside a JSON document and returns it compacted
// (JSON escaping of the placeholders is preserved: they are plain ASCII).
func (r *Rewriter) JSON(raw []byte) json.RawMessage {
	s := string(raw)
	for _, p := range r.pairs {
		from, _ := json.Marshal(p[0])
		to, _ := json.Marshal(p[1])
		s = strings.ReplaceAll(s, string(from[1:len(from)-1]), string(to[1:len(to)-1]))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil
	}
	return buf.Bytes()
}

// Touches reports whether s holds a string the rewriter replaces.
func (r *Rewriter) Touches(s string) bool {
	for _, p := range r.pairs {
		if strings.Contains(s, p[0]) {
			return true
		}
	}
	return false
}
