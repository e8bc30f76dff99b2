package openclawtape

import (
	"time"

	"github.com/aep-hook/aep-hook/adapters/openclaw"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
)

// Replay serves the tape to the real bridge writing into a fresh AEP home
// under tmp, then checks the whole record (schemas may be nil).
func Replay(t *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
	g := NewGateway(t.Frames)
	return realagents.ReplayTape(realagents.TapeServe{
		Server: g, Vendor: mapping.OpenClaw(), Clock: t.RecordedAt, Facts: t.Facts,
		// The tape ends as the stream closes and the reconnect is refused.
		Channel: "bridge", StreamEnds: true,
		Run: func(r realagents.TapeRun) error {
			b := &openclaw.Bridge{Base: r.Base, Token: "replay", Nonce: r.Nonce}
			if !realagents.FollowUntil(r.Runner("openclaw", b), g.Done, time.Minute) {
				r.Bad("the replay did not finish")
			}
			return nil
		},
	}, tmp, schemas)
}
