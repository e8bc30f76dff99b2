// Package mapping holds the AEP-0002 Annex A tables: one vendor per file,
// each a pure function from a vendor moment and the session's table state to
// event drafts. Nothing here touches the clock, the disk, the network or
// randomness: the adapter supplies every input (including a nonce for ids a
// vendor does not give), and the shim emitter turns drafts into envelopes.
package mapping

import (
	"github.com/aep-hook/aep-hook/redact"
)

// Mode selects a channel's posture where a vendor has two sources for the
// same facts (AEP-0005 sidecars): a companion emits only its channel's x.*
// family, a primary also emits the core types its pins allow.
type Mode string

// The two channel modes.
const (
	Companion Mode = "companion"
	Primary   Mode = "primary"
)

// Moment is one vendor input: a hook firing, a stream event, a log record.
type Moment struct {
	// Hook is the vendor's moment name when the transport states it outside
	// the payload (Antigravity's argv, map --hook); "" means read it from Raw.
	Hook string
	// Raw is the vendor's JSON payload, read with gjson.
	Raw []byte
	// Nonce is a unique, time-sortable token minted by the adapter for this
	// moment, for ids the vendor does not give (synthesized runs).
	Nonce string
	// Mode is the channel posture; "" means the vendor's default.
	Mode Mode
	// Deltas asks stream vendors to keep token-delta moments.
	Deltas bool
}

// Draft is one event a mapping wants emitted. The emitter fills the envelope
// (id, time, source, seq, epoch, capture), gates Data through redact, and
// resolves the references.
type Draft struct {
	Type     string
	Subject  string
	Run      string
	Step     string
	Severity string // "" leaves the emitter's default for the type
	// Data is the payload with original content; the emitter gates it.
	Data map[string]any
	// Meta holds structural stand-ins for [metadata*] fields (see
	// redact.Content.Meta).
	Meta map[string]any
	// Levels declares the capture levels of content-bearing fields of an x.*
	// payload; undeclared fields of an x.* payload count as full.
	Levels map[string]redact.Level

	// Session, when set, overrides the moment's session (a child session).
	Session string
	// Mark remembers this event's id under a key, for later Cause or
	// Subject references. Run, tool-call and subagent pairs are marked and
	// linked by the emitter itself; Mark is for anything else (attention).
	Mark string
	// CauseRef sets cause to the id remembered under this key, if any.
	CauseRef string
	// SubjectRef sets subject to the id remembered under this key, if any
	// (the attention lifecycle: every later event's subject is the request
	// id). When the key is unknown, Subject stays as given.
	SubjectRef string
}

// Vendor is one Annex A table with the facts its transport needs.
type Vendor struct {
	// Name is the table's name: the adapter's command name and, unless
	// Agent says otherwise, the AEP agent its events carry.
	Name string
	// Agent, when set, is the AEP agent the events carry when it differs
	// from the table name (the OTLP channels codex-otel and vscode-otel emit
	// as codex and vscode, sharing the hook adapter's sessions and locks).
	Agent string
	// Summary is one line for --help.
	Summary string
	// Transport names how the vendor's moments arrive: "" (a hook command,
	// the default), "tee" (ACP, AG-UI), "otlp" (sidecar records), "stream".
	// Only hook vendors get an `aep-hook <name>` hook command; every vendor
	// can be tried with `aep-hook map <name>`.
	Transport string
	// HookFromArgv says the vendor names the moment on the command line,
	// not in the payload (Antigravity).
	HookFromArgv bool
	// Identify returns the moment's name and its AEP session. It never
	// fails: a missing session goes to the vendor's documented lane.
	Identify func(m Moment) (hook, session string)
	// Map turns one moment into drafts, reading and updating st.
	Map func(m Moment, st *State) ([]Draft, error)
	// Reply is the vendor's neutral hook reply for the named moment,
	// written byte-exact to stdout (nil writes nothing).
	Reply func(hook string) []byte
	// Seed, when set, prepares st as the earlier moments a pin's "join"
	// presumes would have (Antigravity's stepIdx join). Only the
	// conformance harness calls it.
	Seed func(join []byte, m Moment, st *State)
	// Split, when set, cuts one transport unit into the moments Map takes
	// (an OTLP/JSON ExportLogsServiceRequest into its flattened records);
	// the map verb calls it on every input line. Nil means one moment.
	Split func(raw []byte) [][]byte
}
