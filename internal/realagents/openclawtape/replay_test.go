package openclawtape

import (
	"testing"

	"github.com/aep-hook/aep-hook/internal/pins"
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
	(&Recording{}).tapes().Test(t, root)
}
