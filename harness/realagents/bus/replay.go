package bus

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
)

// Replay serves the tape to the real bridge writing into a fresh AEP home
// under tmp, then checks the whole record (schemas may be nil): its
// problems are the bridge's recorded failures (besides the tape's end)
// and every truth violation.
func Replay(t *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
	prof, ok := opencode.Profiles[t.Vendor]
	if !ok {
		return realagents.TapeReplayed{Problems: []string{fmt.Sprintf("tape names no known vendor %q", t.Vendor)}}
	}
	v, _ := mapping.Lookup(prof.Table)
	player := NewPlayer(t)
	return realagents.ReplayTape(realagents.TapeServe{
		Server: player, Vendor: v, Clock: t.RecordedAt, Facts: t.Facts,
		// The tape ends as the streams close and the last connect is
		// refused.
		Channel: "bridge", StreamEnds: true,
		Run: func(r realagents.TapeRun) error {
			bridge := &opencode.Bridge{
				Base: r.Base, AllDirectories: t.AllDirectories, Mode: mapping.Primary,
				Nonce: r.Nonce,
				Now:   func() time.Time { return t.RecordedAt },
			}
			runner := r.Runner(prof.Table, bridge)
			runner.Cursor = follow.FileCursor{Path: filepath.Join(r.Tmp, "cursor")}
			if !realagents.FollowUntil(runner, player.Done, 2*time.Minute) {
				r.Bad("replay did not finish: requests %v", player.Requests)
			}
			return nil
		},
	}, tmp, schemas)
}
