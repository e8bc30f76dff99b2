// Package a2atape records and replays A2A sessions for the A2A channels of
// aep-hook (adapters/a2a): the tee in front of an A2A server and the task
// follower.
//
// A Tape is every JSON-RPC exchange one scenario had with a real
// @a2a-js/sdk server (the scripted agent in agent.mjs, driven by the SDK's
// own client in client.mjs): the request body and the answer's bytes, a
// stream's whole SSE body included. Record (`make real`) runs the real
// server, the real client and the real `aep-hook a2a` binary (or, for a
// follower scenario, `aep-hook follow a2a`), with a recording proxy between
// aep-hook and the server, and saves the tape under
// fixtures/a2a/recorded/<scenario>/. Replay (`make test`, no network, no
// Node) serves the tape from a local server to the real tee (the client's
// recorded requests sent through it) or the real follower, writes the
// record with the file emitter, and holds it to the scenario's facts with
// harness/truth.
package a2atape

import (
	"encoding/json"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// File is a tape's file name inside its scenario folder.
const File = "exchanges.json"

// The pinned packages the tapes are recorded with.
const (
	SDKPackage     = "@a2a-js/sdk"
	SDKVersion     = "1.3.0"
	ExpressVersion = "5.3.0"
)

// Tape is one recorded A2A scenario.
type Tape struct {
	Agent       string `json:"agent"`
	Version     string `json:"version"`
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	// Channel is "tee" (the client's requests through `aep-hook a2a`) or
	// "follow" (`aep-hook follow a2a` following Task).
	Channel string `json:"channel"`
	// Task is the followed task (follow channel).
	Task string `json:"task,omitempty"`
	// RecordedAt is when the session was recorded: the replay's clock.
	RecordedAt time.Time `json:"recorded_at"`
	// Facts are what really happened, for the truth checker.
	Facts truth.Facts `json:"facts"`
	// Exchanges are the JSON-RPC requests and their answers, in the
	// order the requests were made.
	Exchanges []Exchange `json:"exchanges"`

	dir string
}

// Exchange is one request and its answer.
type Exchange struct {
	// Method is the JSON-RPC method (the match key of a replay).
	Method string `json:"method"`
	// Path is the HTTP path the request was posted to.
	Path string `json:"path"`
	// Version is the request's A2A-Version header.
	Version string `json:"version,omitempty"`
	// Request is the request body.
	Request json.RawMessage `json:"request"`
	// Status and Type are the answer's HTTP status and Content-Type.
	Status int    `json:"status"`
	Type   string `json:"type"`
	// Body is the answer's body as it travelled (an SSE stream's bytes
	// included).
	Body string `json:"body"`
}

// LoadTapes reads every tape under root/a2a/recorded/*/, sorted.
func LoadTapes(root string) ([]*Tape, error) {
	return realagents.LoadTapes(root, "a2a", File, func(t *Tape, dir string) { t.dir = dir })
}

// Dir is the tape's folder.
func (t *Tape) Dir() string { return t.dir }

// Save writes the tape into dir.
func (t *Tape) Save(dir string) error {
	t.dir = dir
	return realagents.SaveTape(dir, File, t)
}
