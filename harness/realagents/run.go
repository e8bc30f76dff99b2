package realagents

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// RecordAll installs and records every scenario of every agent (or only
// the named ones), writing the fixtures. A scenario that fails to record
// keeps its earlier fixture; the failures are returned together.
func (h *Harness) RecordAll(agent, scenario string) error {
	var errs []string
	for _, a := range Agents() {
		if agent != "" && a.Name != agent {
			continue
		}
		if err := h.Install(a); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for i := range a.Scenarios {
			s := &a.Scenarios[i]
			if scenario != "" && s.Name != scenario {
				continue
			}
			fmt.Fprintf(h.Log, "record %s/%s (%s)\n", a.Name, s.Name, s.Mode)
			fx, err := h.Record(a, s)
			if err != nil {
				fmt.Fprintf(h.Log, "  FAILED to record: %v\n", err)
				errs = append(errs, err.Error())
				continue
			}
			if err := fx.Save(); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d scenario(s) not recorded:\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}

// ReplayAll replays the committed fixtures and prints, per agent,
// "scenarios passed/total"; it reports whether all passed.
func (h *Harness) ReplayAll(agent, scenario string) bool {
	fxs, err := LoadFixtures(h.Fixtures)
	if err != nil {
		fmt.Fprintln(h.Log, err)
		return false
	}
	var schemas *truth.Schemas
	if dir, ok := truth.SchemaDir(); ok {
		if schemas, err = truth.LoadSchemas(dir); err != nil {
			fmt.Fprintln(h.Log, err)
			return false
		}
	} else {
		fmt.Fprintln(h.Log, "AEP schemas not found (AEP_SCHEMA_DIR): events not schema-checked")
	}
	passed, total := map[string]int{}, map[string]int{}
	ok := true
	for _, fx := range fxs {
		a := fx.Scenario.Agent
		if agent != "" && a != agent || scenario != "" && fx.Scenario.Name != scenario {
			continue
		}
		tmp, err := os.MkdirTemp("", "aep-replay-")
		if err != nil {
			fmt.Fprintln(h.Log, err)
			return false
		}
		r := Replay(h.AEPHook, fx, tmp, schemas)
		os.RemoveAll(tmp)
		total[a]++
		if fx.Scenario.Pending != "" {
			fmt.Fprintf(h.Log, "PENDING %s/%s: %s (%d problems)\n", a, fx.Scenario.Name, fx.Scenario.Pending, len(r.Problems))
			continue
		}
		if r.OK() {
			passed[a]++
			continue
		}
		ok = false
		fmt.Fprintf(h.Log, "FAIL %s/%s\n", a, fx.Scenario.Name)
		for _, p := range r.Problems {
			fmt.Fprintf(h.Log, "  %s\n", p)
		}
		fmt.Fprintf(h.Log, "  record: %s\n", truth.Summary(r.Logs))
	}
	names := make([]string, 0, len(total))
	for a := range total {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		fmt.Fprintf(h.Log, "real: %s scenarios %d/%d\n", a, passed[a], total[a])
	}
	return ok
}

// fixturesDir is the repository's fixtures folder seen from this package.
var fixturesDir = filepath.Join("..", "..", "fixtures")
