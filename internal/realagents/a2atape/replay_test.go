package a2atape

import (
	"testing"

	"github.com/aep-hook/aep-hook/internal/pins"
)

// TestReplayTapes replays every recorded A2A session through the real tee
// or follower and holds the record to what really happened: one run per
// task (and per message-only exchange), one terminal each, the answers as
// answers, rejections and failures as failed runs, a cancel as the only
// cancelled run; the tee relays every byte as the server sent it.
func TestReplayTapes(t *testing.T) {
	root, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	(&Recording{}).tapes().Test(t, root)
}
