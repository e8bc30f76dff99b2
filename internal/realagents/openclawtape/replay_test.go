package openclawtape

import (
	"os"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/internal/pins"
	"github.com/aep-hook/aep-hook/internal/truth"
)

// TestReplayTapes replays every recorded OpenClaw Gateway session through
// the real bridge and holds the record to what really happened: one run
// per turn with one terminal, an abort as the only cancelled run, one AEP
// session per gateway session.
func TestReplayTapes(t *testing.T) {
	root, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	tapes, err := LoadTapes(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(tapes) == 0 {
		t.Fatal("no recorded OpenClaw tapes under fixtures/openclaw/recorded")
	}
	var schemas *truth.Schemas
	if dir, ok := truth.SchemaDir(); ok {
		if schemas, err = truth.LoadSchemas(dir); err != nil {
			t.Fatal(err)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("AEP schemas not found (AEP_SCHEMA_DIR); mandatory under CI=true")
	}
	for _, tp := range tapes {
		t.Run(tp.Scenario, func(t *testing.T) {
			res := Replay(tp, t.TempDir(), schemas)
			if len(res.Problems) > 0 {
				t.Errorf("%s\nrecord: %s", strings.Join(res.Problems, "\n"), truth.Summary(res.Logs))
			}
		})
	}
}
