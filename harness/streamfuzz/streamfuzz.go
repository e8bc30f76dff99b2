// Package streamfuzz is test equipment for the fuzz targets of the stream
// tables' parsers: it feeds arbitrary input lines through a table in both
// channel modes, with and without deltas, and fails on anything a table
// must never produce.
package streamfuzz

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// typeRE is AEP-0001 §6's type grammar: a core type, or x.{vendor}.{two
// or more segments}.
var typeRE = regexp.MustCompile(`^([a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+|x\.[a-z0-9][a-z0-9-]*(\.[a-z0-9_]+){2,})$`)

// Check feeds the lines of in to vendor's table in every posture and fails
// t on an emitter error, an event that is not JSON, or an illegal type.
func Check(t *testing.T, vendor string, in []byte) {
	t.Helper()
	lines := bytes.Split(in, []byte("\n"))
	for _, mode := range []mapping.Mode{"", mapping.Primary} {
		for _, deltas := range []bool{false, true} {
			out, err := pins.Feed(vendor, lines, mode, deltas)
			if err != nil {
				t.Fatalf("%s (mode %q, deltas %v): %v", vendor, mode, deltas, err)
			}
			for _, l := range out {
				var ev struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal(l, &ev); err != nil {
					t.Fatalf("%s: event is not JSON: %q", vendor, l)
				}
				if !typeRE.MatchString(ev.Type) {
					t.Fatalf("%s: illegal event type %q", vendor, ev.Type)
				}
			}
		}
	}
}
