package mapping_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

const pinRel = "../shared/aep-spec/conformance/fixtures/mappings"

// TestConformance runs every entry of every implemented vendor's Annex A pin
// file through the real emitter and compares type, data, subject and step
// exactly. Without the pin folder it skips, except under CI=true.
func TestConformance(t *testing.T) {
	dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", pinRel)
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance pins not found (AEP_CONFORMANCE_DIR or %s); mandatory under CI=true", pinRel)
		}
		t.Skipf("conformance pins not found (AEP_CONFORMANCE_DIR or %s)", pinRel)
	}
	var report []string
	for _, v := range mapping.Vendors() {
		if _, err := os.Stat(filepath.Join(dir, pins.PinFile(v.Name))); err != nil {
			continue // a vendor the pins do not cover
		}
		cases, skipped, err := pins.LoadPins(dir, v.Name)
		if err != nil {
			t.Fatal(err)
		}
		passed := 0
		var followed []string
		t.Run(v.Name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					diffs := pins.Run(c)
					if why, ok := pins.Disagrees(v.Name, c.Name); ok {
						if len(diffs) == 0 {
							t.Errorf("the pin now passes; drop it from harness/pins/disagree.go (%s)", why)
						}
						followed = append(followed, c.Name)
						return
					}
					if len(diffs) > 0 {
						t.Error(strings.Join(diffs, "\n"))
						return
					}
					passed++
				})
			}
		})
		line := fmt.Sprintf("conformance: %s %d/%d", v.Name, passed, len(cases))
		if len(followed) > 0 {
			line += fmt.Sprintf(" (the real agent or the spec disagrees: %s)", strings.Join(followed, ", "))
		}
		if len(skipped) > 0 {
			line += fmt.Sprintf(" (sections not run here: %s)", strings.Join(skipped, ", "))
		}
		report = append(report, line)
	}
	for _, l := range report {
		t.Log(l)
		fmt.Println(l)
	}
}

// TestFixtures runs the project's own scenario files in fixtures/.
func TestFixtures(t *testing.T) {
	dir, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	n := 0
	for _, f := range files {
		c, err := pins.LoadFixture(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if _, ok := mapping.Lookup(c.Vendor); !ok {
			t.Errorf("%s: vendor %q has no table", f, c.Vendor)
			continue
		}
		n++
		t.Run(filepath.Base(filepath.Dir(f))+"/"+c.Name, func(t *testing.T) {
			if diffs := pins.Run(c); len(diffs) > 0 {
				t.Error(strings.Join(diffs, "\n"))
			}
		})
	}
	t.Logf("fixtures: %d scenario files", n)
}
