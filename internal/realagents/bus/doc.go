// Package bus records and replays the OpenCode and Kilo Code servers'
// HTTP surface for the stream bridge (aep-hook follow): a Tape is every
// exchange the bridge had with a real server in one scenario (each event
// stream's raw bytes, each REST answer its catch-up asked for), kept under
// fixtures/<agent>/recorded/<scenario>/ with machine paths rewritten.
//
// Replay serves a tape from a local HTTP server (Player: the Nth stream
// request gets the Nth recorded stream, a REST request the answer recorded
// for its path) to the real bridge (adapters/opencode with the
// adapters/follow runtime and the file emitter), then holds the whole
// record to the scenario's facts with internal/truth. `make test` runs it
// for every tape; no network, no agent.
//
// Recorder is the other half: a reverse proxy in front of a real server
// that writes the tape while `aep-hook follow` reads through it.
package bus
