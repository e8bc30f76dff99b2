// Package openclawtape records and replays OpenClaw Gateway sessions for
// the OpenClaw channel of aep-hook (adapters/openclaw, `aep-hook follow
// openclaw`).
//
// Record (`make real`) runs the real gateway (`openclaw` 2026.9.6 on Node
// 24, both from the npm registry) against the harness's scripted model
// server, with the real `aep-hook follow openclaw` attached, drives turns
// through a second gateway client (chat.send, chat.abort), and keeps every
// event frame the gateway broadcast to a read-only tap connection in
// fixtures/openclaw/recorded/<scenario>/frames.json. Replay (`make test`,
// no network, no Node) serves those frames from a local gateway stand-in
// (the same challenge / connect / hello-ok handshake) to the real bridge,
// writes the record with the file emitter, and holds it to the scenario's
// facts with harness/truth.
package openclawtape

import (
	"encoding/json"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// File is a tape's file name inside its scenario folder.
const File = "frames.json"

// The pinned packages.
const (
	Package     = "openclaw"
	Version     = "2026.9.6"
	NodeVersion = "24.22.3" // openclaw 2026.9.6 needs Node >= 24.16
)

// Tape is one recorded gateway session.
type Tape struct {
	Agent       string      `json:"agent"`
	Version     string      `json:"version"`
	Scenario    string      `json:"scenario"`
	Description string      `json:"description"`
	RecordedAt  time.Time   `json:"recorded_at"`
	Facts       truth.Facts `json:"facts"`
	// Frames are the event frames the gateway broadcast, in order.
	Frames []json.RawMessage `json:"frames"`

	dir string
}

// LoadTapes reads every tape under root/openclaw/recorded/*/, sorted.
func LoadTapes(root string) ([]*Tape, error) {
	return realagents.LoadTapes(root, "openclaw", File, func(t *Tape, dir string) { t.dir = dir })
}

// Save writes the tape into dir.
func (t *Tape) Save(dir string) error {
	t.dir = dir
	return realagents.SaveTape(dir, File, t)
}
