package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/pins"
)

// TestMapVerbProjectPins runs every entry of the project's own Annex A pins
// (fixtures/<vendor>/pins/<table>.json) through the real `aep-hook map`
// command, one invocation per entry with the pinned input as one line on
// stdin, and compares the output with the pin exactly: the pins start
// from a fresh state, as map does.
func TestMapVerbProjectPins(t *testing.T) {
	dir, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "pins", "*.json"))
	for _, f := range files {
		table := strings.TrimSuffix(filepath.Base(f), ".json")
		cases, _, err := pins.LoadPins(filepath.Dir(f), table)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(table+"/"+c.Name, func(t *testing.T) {
				args := []string{"aep-hook", "map", table, "--capture", c.Policy.Default.String()}
				for _, o := range c.Policy.Overrides {
					args = append(args, "--capture-override", o.Pattern+"="+o.Level.String())
				}
				if c.Mode != "" {
					args = append(args, "--mode", string(c.Mode))
				}
				if c.Deltas {
					args = append(args, "--deltas")
				}
				var in bytes.Buffer
				for _, s := range c.Steps {
					if err := json.Compact(&in, s.Input); err != nil {
						t.Fatal(err)
					}
					in.WriteByte('\n')
				}
				var out, errb bytes.Buffer
				if code := run(args, Streams{In: &in, Out: &out, Err: &errb}, func(string) string { return "" }); code != 0 {
					t.Fatalf("map exit %d: %s", code, errb.String())
				}
				var lines [][]byte
				for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
					if len(l) > 0 {
						lines = append(lines, append(l, '\n'))
					}
				}
				if diffs := pins.Compare(1, c.Steps[len(c.Steps)-1].Expected, lines, nil); len(diffs) > 0 {
					t.Errorf("%s\n(map %s)", strings.Join(diffs, "\n"), strings.Join(args[2:], " "))
				}
			})
		}
	}
}
