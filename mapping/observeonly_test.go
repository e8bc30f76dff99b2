package mapping_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// TestObserveOnlyClaimsNoControl holds AEP-0008's respond_via to what is
// there: with no control loop holding the moment, no event of any table
// declares control, whatever the input. Every upstream pin entry of every
// vendor (the hook vendors' pins presume the reference stack's live loop,
// so they run here observe-only, as aep-hook's hooks do by default) and
// every project scenario file runs with the loop off.
func TestObserveOnlyClaimsNoControl(t *testing.T) {
	var cases []pins.Case
	if dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", pinRel); ok {
		for _, v := range mapping.Vendors() {
			if _, err := os.Stat(filepath.Join(dir, pins.PinFile(v.Name))); err != nil {
				continue
			}
			cs, _, err := pins.LoadPins(dir, v.Name)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, cs...)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("conformance pins not found (AEP_CONFORMANCE_DIR or %s); mandatory under CI=true", pinRel)
	}
	dir, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	for _, f := range files {
		c, err := pins.LoadFixture(f)
		if err != nil {
			continue // TestFixtures reports it
		}
		cases = append(cases, c)
	}
	requests := 0
	for _, c := range cases {
		c.Control = false
		lines, _ := pins.Emitted(c)
		for _, l := range lines {
			ev := gjson.ParseBytes(l)
			if ev.Get("type").String() == "attention.requested" {
				requests++
			}
			for _, ch := range ev.Get("data.respond_via").Array() {
				if ch.String() == "control" {
					t.Errorf("%s/%s: %s declares respond_via control with no loop holding it: %s",
						c.Vendor, c.Name, ev.Get("type"), l)
				}
			}
		}
	}
	// The check must have met requests to mean anything.
	if requests == 0 {
		t.Fatal("no attention.requested emitted by any case")
	}
	t.Logf("%d cases, %d attention.requested, none claiming control", len(cases), requests)
}
