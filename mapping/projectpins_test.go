package mapping_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// TestProjectPins runs the project's own Annex A pins (fixtures/<vendor>/
// pins/<table>.json, in the upstream pins' format) for the tables the
// upstream pins do not cover yet (A.16 OpenClaw Gateway, A.17 A2A), exactly
// as TestConformance runs the upstream ones.
func TestProjectPins(t *testing.T) {
	dir, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "pins", "*.json"))
	if len(files) == 0 {
		t.Fatal("no project pins found")
	}
	for _, f := range files {
		table := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, ok := mapping.Lookup(table); !ok {
			t.Errorf("%s: no table %q", f, table)
			continue
		}
		cases, _, err := pins.LoadPins(filepath.Dir(f), table)
		if err != nil {
			t.Fatal(err)
		}
		passed := 0
		t.Run(table, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					if diffs := pins.Run(c); len(diffs) > 0 {
						t.Error(strings.Join(diffs, "\n"))
						return
					}
					passed++
				})
			}
		})
		line := fmt.Sprintf("project pins: %s %d/%d", table, passed, len(cases))
		t.Log(line)
	}
}
