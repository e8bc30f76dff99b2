package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/installer"
)

// PluginFile is the plugin channel's record inside a scenario folder:
// every line aep-hook's forwarder plugin wrote to `aep-hook forward`
// while the scenario ran (realagents.StreamLine, Conn numbering the
// forwarder processes: one per server process), machine paths rewritten
// like the tape's.
const PluginFile = "plugin.jsonl"

// placePlugin places aep-hook's plugin into the server's configuration
// through `aep-hook install`'s own plan at the user's scope (the config
// folder's plugin/), the harness binary standing in for aep-hook: the
// plugin starts `<harness> forward <vendor>`, which records each line and
// pipes it on into the real `aep-hook forward <vendor>`.
func placePlugin(h *realagents.Harness, srv Server, home, proj string, env []string) error {
	a, ok := installer.Lookup(srv.Vendor)
	if !ok {
		return fmt.Errorf("aep-hook install knows no agent %q", srv.Vendor)
	}
	getenv := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	return realagents.Install(a, installer.Env{Home: home, Dir: proj, Binary: h.Self, Getenv: getenv, Now: time.Now}, false)
}

// collectPlugin reads what the recorders the plugin started saved under
// dir (stream/*.jsonl, one per forwarder process, in start order), once
// each has read its pipe to the end, with rewrite applied.
func collectPlugin(dir string, rewrite func([]byte) []byte) ([]realagents.StreamLine, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "stream", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range paths {
		for {
			if _, err := os.Stat(p + realagents.DoneSuffix); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: the forwarder never finished reading its pipe", filepath.Base(p))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var out []realagents.StreamLine
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			l = rewrite(l)
			if !json.Valid(l) {
				return nil, fmt.Errorf("%s: a forwarded line is not JSON: %.80q", filepath.Base(p), l)
			}
			out = append(out, realagents.StreamLine{Conn: i + 1, Dir: "in", Data: json.RawMessage(l)})
		}
	}
	return out, nil
}

// loadPlugin reads a tape's plugin.jsonl.
func loadPlugin(t *Tape) ([]realagents.StreamLine, error) {
	lines, err := realagents.ReadStreamLines(filepath.Join(t.Dir(), PluginFile))
	if err == nil && len(lines) == 0 {
		err = fmt.Errorf("%s: no plugin lines", filepath.Join(t.Dir(), PluginFile))
	}
	return lines, err
}

// ReplayPlugin replays a tape's plugin record through the aep-hook binary
// bin as the plugin runs it (each recorded forwarder's lines into one
// `aep-hook forward <vendor>` process, in order) into a fresh AEP home
// under tmp, and holds the record to the tape's plugin facts.
func ReplayPlugin(bin string, t *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
	if t.Plugin == nil {
		return realagents.TapeReplayed{Problems: []string{"the tape holds no plugin facts"}}
	}
	prof, ok := opencode.Profiles[t.Vendor]
	if !ok {
		return realagents.TapeReplayed{Problems: []string{fmt.Sprintf("tape names no known vendor %q", t.Vendor)}}
	}
	lines, err := loadPlugin(t)
	if err == nil && len(lines) == 0 {
		err = errors.New(PluginFile + " is empty")
	}
	if err != nil {
		return realagents.TapeReplayed{Problems: []string{err.Error()}}
	}
	fx := realagents.Fixture{Dir: t.Dir(), Stream: lines,
		Scenario: realagents.ScenarioFile{Agent: prof.Plugin, Version: t.Version, Name: t.Scenario, Facts: *t.Plugin}}
	r := realagents.Replay(bin, fx, tmp, schemas)
	return realagents.TapeReplayed{Logs: r.Logs, Problems: r.Problems}
}
