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
// record to the scenario's facts with harness/truth. `make test` runs it
// for every tape; no network, no agent.
//
// Recorder is the other half: a reverse proxy in front of a real server
// that writes the tape while `aep-hook follow` reads through it.
//
// The plugin channel is recorded in the same sessions: each server loads
// aep-hook's forwarder plugin, placed by `aep-hook install`'s own plan in
// its configuration folder's plugin/ (where opencode-ai 1.18.33 and Kilo
// 7.7.7 load it from), starting the harness recorder in place of
// `aep-hook forward`; the lines it forwarded are kept as plugin.jsonl
// beside the tape. ReplayPlugin feeds them to the real `aep-hook forward
// opencode|kilo` process and holds the record to the same facts, or to
// the tape's plugin facts where the plugin honestly sees less.
package bus
