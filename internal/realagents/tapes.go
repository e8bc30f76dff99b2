package realagents

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/internal/truth"
)

// Tapes is the record-and-replay loop the tape harnesses share (the A2A
// tee and follower, the OpenClaw gateway): each records a scenario live,
// checks the live record, replays what it recorded, and keeps the tape
// only when both are true.
type Tapes[T any] struct {
	// Agent names the harness in its report lines ("a2a").
	Agent string
	// Log receives one line per scenario and the report.
	Log io.Writer
	// Name is a tape's scenario name.
	Name func(T) string
	// Replay replays a tape into a fresh AEP home under tmp.
	Replay func(t T, tmp string, schemas *truth.Schemas) TapeReplayed
	// Fixtures is the fixtures folder; tapes live in
	// <Fixtures>/<Agent>/recorded/<scenario>/.
	Fixtures string
	// Load reads the committed tapes under a fixtures folder; Save writes
	// one into its scenario folder.
	Load func(root string) ([]T, error)
	Save func(t T, dir string) error
}

// TapeReplayed is the outcome of one tape's replay: the record and every
// problem found (the channel's failures, bytes relayed differently, truth
// violations).
type TapeReplayed struct {
	Logs     []truth.Log
	Problems []string
}

// replay runs Replay in a temporary folder.
func (h Tapes[T]) replay(t T, schemas *truth.Schemas) ([]string, []truth.Log) {
	tmp, err := os.MkdirTemp("", h.Agent+"-replay-")
	if err != nil {
		return []string{err.Error()}, nil
	}
	defer os.RemoveAll(tmp)
	r := h.Replay(t, tmp, schemas)
	return r.Problems, r.Logs
}

// Keep checks one live recording and its replay, and saves the tape when
// both are true; it reports whether it did.
func (h Tapes[T]) Keep(t T, live []truth.Log, facts truth.Facts, schemas *truth.Schemas, save func() error) bool {
	name := h.Name(t)
	problems := truth.Check(live, facts, schemas)
	rep, _ := h.replay(t, schemas)
	problems = append(problems, rep...)
	if len(problems) > 0 {
		fmt.Fprintf(h.Log, "  %s/%s: NOT TRUE:\n    %s\n    record: %s\n", h.Agent, name, strings.Join(problems, "\n    "), truth.Summary(live))
		return false
	}
	if err := save(); err != nil {
		fmt.Fprintf(h.Log, "  %s/%s: save: %v\n", h.Agent, name, err)
		return false
	}
	fmt.Fprintf(h.Log, "  %s/%s: true live and replayed (%s)\n", h.Agent, name, truth.Summary(live))
	return true
}

// Report prints "real: <agent> passed/total" and returns an error when
// not all passed.
func (h Tapes[T]) Report(passed, total int) error {
	fmt.Fprintf(h.Log, "real: %s %d/%d\n", h.Agent, passed, total)
	if passed != total {
		return fmt.Errorf("%s: %d of %d scenarios not recorded true", h.Agent, total-passed, total)
	}
	return nil
}

// ReplayAll replays every committed tape and reports passed/total.
func (h Tapes[T]) ReplayAll() bool {
	tapes, err := h.Load(h.Fixtures)
	if err != nil {
		fmt.Fprintf(h.Log, "%s: %v\n", h.Agent, err)
		return false
	}
	schemas, _ := truth.Found(h.Log)
	passed := 0
	for _, t := range tapes {
		if problems, _ := h.replay(t, schemas); len(problems) > 0 {
			fmt.Fprintf(h.Log, "  %s/%s: %s\n", h.Agent, h.Name(t), strings.Join(problems, "\n    "))
			continue
		}
		passed++
	}
	fmt.Fprintf(h.Log, "real: %s replayed %d/%d\n", h.Agent, passed, len(tapes))
	return passed == len(tapes)
}

// Test replays every tape as a subtest (`make test`): no tapes, or a tape
// whose record is not true, fails.
func (h Tapes[T]) Test(t *testing.T, root string) {
	t.Helper()
	tapes, err := h.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(tapes) == 0 {
		t.Fatalf("no recorded %s tapes under fixtures/%s/recorded", h.Agent, h.Agent)
	}
	schemas := truth.For(t)
	for _, tp := range tapes {
		t.Run(h.Name(tp), func(t *testing.T) {
			r := h.Replay(tp, t.TempDir(), schemas)
			if len(r.Problems) > 0 {
				t.Errorf("%s\nrecord: %s", strings.Join(r.Problems, "\n"), truth.Summary(r.Logs))
			}
		})
	}
}

// LoadTapes reads every tape file named file under
// root/<agent>/recorded/*/, sorted by scenario; dir is told each tape's
// folder.
func LoadTapes[T any](root, agent, file string, dir func(*T, string)) ([]*T, error) {
	paths, err := filepath.Glob(filepath.Join(root, agent, "recorded", "*", file))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*T
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		t := new(T)
		if err := json.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("tape %s: %w", p, err)
		}
		if dir != nil {
			dir(t, filepath.Dir(p))
		}
		out = append(out, t)
	}
	return out, nil
}

// SaveTape writes a tape as indented JSON into dir/file.
func SaveTape(dir, file string, t any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644)
}

// TapeScenario is what RecordAll needs of a tape harness's scenario.
type TapeScenario interface {
	ScenarioName() string
	ScenarioFacts() truth.Facts
}

// RecordAll records every scenario (only the one named only, when set)
// with record, keeps the true ones (Save into the scenario's folder), and
// reports passed/total.
func RecordAll[S TapeScenario, T any](h Tapes[T], scenarios []S, only string, record func(S) (T, []truth.Log, error)) error {
	schemas, _ := truth.Found(h.Log)
	passed, total := 0, 0
	for _, s := range scenarios {
		if only != "" && s.ScenarioName() != only {
			continue
		}
		total++
		t, live, err := record(s)
		if err != nil {
			fmt.Fprintf(h.Log, "  %s/%s: %v\n", h.Agent, s.ScenarioName(), err)
			continue
		}
		dir := filepath.Join(h.Fixtures, h.Agent, "recorded", s.ScenarioName())
		if h.Keep(t, live, s.ScenarioFacts(), schemas, func() error { return h.Save(t, dir) }) {
			passed++
		}
	}
	return h.Report(passed, total)
}
