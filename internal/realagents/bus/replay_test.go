package bus

import (
	"path/filepath"
	"testing"

	"github.com/aep-hook/aep-hook/internal/realagents"
)

// TestReplayTapes replays every recorded OpenCode and Kilo Code session
// through the real bridge and holds the record to what really happened:
// one run per turn, every tool and ask closed once, no phantom runs after
// idle, nothing lost or doubled across a server restart.
func TestReplayTapes(t *testing.T) {
	realagents.Tapes[*Tape]{Agent: "bus", Load: LoadTapes, Replay: Replay,
		Name: func(tp *Tape) string { return tp.Agent + "/" + filepath.Base(tp.Dir()) }}.Test(t)
}
