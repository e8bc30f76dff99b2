// Package mapping holds the AEP-0002 Annex A tables: one vendor per file,
// each a pure function from a vendor moment and the session's table state to
// event drafts. Nothing here touches the clock, the disk, the network or
// randomness: the adapter supplies every input (including a nonce for ids a
// vendor does not give), and the shim emitter turns drafts into envelopes.
//
// The contract between adapters and tables is Moment: the vendor's payload
// (Raw, or a decoded Facts.Record) and the typed transport facts the
// adapter established (Facts: kind, direction, method, ids, session,
// thread, run, the adapter instance). A table reads the facts its
// Transport documents and the payload, and never parses anything an adapter
// built for it. Each transport's adapter also decodes the JSON form of its
// moments (adapters.Decode), so `aep-hook map` and the pins reach a table
// exactly as the live adapter would.
//
// Adding a vendor is its table file here plus one line in Vendors():
//
//   - a hook vendor: Identify, Map and Reply over the payload in Raw;
//   - a stream vendor (SSE, WebSocket, a tee): Transport names its
//     adapter; Identify and Map read Facts (Session, Thread, Run, Name, ...)
//     and the event in Raw;
//   - an OTLP vendor: Transport TransportOTLP, a Detect rule (which
//     resources and records are its), and an otelProfile (known event
//     names, identity attributes, capture levels, the primary subset); the
//     record arrives decoded in Facts.Record.
//
// Only a new transport needs code outside this package: one adapter that
// fills the Facts its Transport constant promises.
package mapping

import (
	"time"

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

// Moment is one vendor input: a hook firing, a JSON-RPC message, a stream
// event, a log record.
type Moment struct {
	// Hook is the vendor's moment name when the transport states it outside
	// the payload (Antigravity's argv, map --hook); "" means read it from Raw.
	Hook string
	// Raw is the vendor's JSON payload, read with gjson: the hook payload,
	// the JSON-RPC message, the event's data. It may be nil when Facts.Record
	// carries the decoded payload instead (OTLP records).
	Raw []byte
	// Facts are what the transport established about the moment beyond its
	// payload. The zero value (a hook payload) means everything is in Raw.
	Facts Facts
	// Nonce is a unique, time-sortable token minted by the adapter for this
	// moment, for ids the vendor does not give (synthesized runs).
	Nonce string
	// Mode is the channel posture; "" means the vendor's default.
	Mode Mode
	// Deltas asks stream vendors to keep token-delta moments.
	Deltas bool
	// Arena, when set, is where the OTLP tables cut the moment's drafts
	// from: the emitter's, for a batch whose drafts it lets go once written
	// (see Arena). Nil allocates them.
	Arena *Arena
	// Control says the control loop holds this moment live: the adapter is
	// connected to a relay as the session's emitter and waits for an answer
	// (AEP-0004), so the request the moment raises can be answered over
	// control. False, the observe-only posture, means any answer arrives
	// out of band, in the agent's own UI: a request then declares
	// respond_via ["oob"], never control (AEP-0008).
	Control bool
}

// Facts are the typed transport facts an adapter hands a table with each
// moment: how the message travelled, what its wire called it, and the
// identities the transport resolved (a response's session from its request,
// a stream's thread and run). A table reads them and never parses anything
// an adapter built for it; what the vendor itself sent stays in Raw.
//
// Which fields a transport fills is part of its contract, stated on its
// Transport constant; every field a transport does not know stays zero.
type Facts struct {
	// Kind classifies the moment on its wire; KindNone for hook payloads.
	Kind Kind
	// Direction is which way the message travelled through a tee.
	Direction Direction
	// Method is a JSON-RPC method; for a response, the method of the request
	// it answers ("" when no request matched).
	Method string
	// Name is the event's or record's own type as the transport decoded it
	// (an AG-UI event type, an SSE event name); "" when it has none.
	Name string
	// ID is the message's wire id as text (a JSON-RPC number as written, a
	// string's content); "" when it has none (a notification, a null id).
	ID string
	// Session, Thread and Run are identities the transport resolved, ""
	// when it knows none: the session a JSON-RPC message (or the request a
	// response answers) names, the thread and run a stream belongs to.
	Session, Thread, Run string
	// Reason, for KindEnd, is why the unit ended: "agent_exited",
	// "upstream_dropped", "client_aborted", ...
	Reason string
	// Instance is the adapter instance's own token (one tee process), which
	// qualifies wire ids that restart with the peer (ACP's prompt-turn ids).
	Instance string
	// Peer is the agent the transport's handshake named (ACP's initialize
	// result agentInfo), once known; zero where the transport has none.
	Peer Peer
	// Record is the transport's decoded form of the payload when it has one:
	// *OTelRecord for TransportOTLP. A table asserts the type its transport
	// documents and never decodes Raw in its place.
	Record any
}

// Peer is an agent as its handshake names it.
type Peer struct {
	Name, Version string
}

// Kind classifies a moment on its wire.
type Kind uint8

// The moment kinds.
const (
	KindNone         Kind = iota // no transport facts: a hook payload
	KindRequest                  // a JSON-RPC request (method and id)
	KindResponse                 // a JSON-RPC response (id, result or error)
	KindNotification             // a JSON-RPC notification (method, no id)
	KindEvent                    // one event of a stream (SSE, WebSocket)
	KindRecord                   // one telemetry record (an OTLP LogRecord)
	// KindEnd says the transport saw a unit end without the vendor's own
	// terminal (an ACP prompt still unanswered when the agent exited, an
	// AG-UI stream cut after RUN_STARTED); the facts name the unit as its
	// opening moment did, and Reason says why.
	KindEnd
)

var kindNames = [...]string{"", "request", "response", "notification", "event", "record", "end"}

// String is the kind's wire word ("request", ...; "" for KindNone).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind is the inverse of Kind.String for the JSON moment forms; ok is
// false for a word that names no kind.
func ParseKind(s string) (k Kind, ok bool) {
	for i, n := range kindNames {
		if n == s && i > 0 {
			return Kind(i), true
		}
	}
	return KindNone, false
}

// Direction says which way a message travelled through a tee.
type Direction uint8

// The directions; DirectionNone where the transport has no sides.
const (
	DirectionNone Direction = iota
	ToAgent                 // client (editor, UI) → agent
	FromAgent               // agent → client
)

// Transport names the adapter that feeds a table its moments, and with it
// the Facts the table can rely on. Only TransportHook vendors get an
// `aep-hook <name>` hook command; every vendor can be tried with
// `aep-hook map <name>`, whose input lines the transport's adapter decodes
// (adapters.Decode).
type Transport uint8

// The transports, one adapter package each.
const (
	// TransportHook is a hook command (adapters/hook): one payload on
	// stdin, no facts.
	TransportHook Transport = iota
	// TransportACP is the ACP stdio tee (adapters/acp): Kind (request,
	// response, notification), Direction, Method, ID, Session (the
	// connection's session for messages naming none), Instance, Peer; Raw
	// is the JSON-RPC message. KindEnd (Raw nil) names a session/prompt
	// request left unanswered, Reason why: agent_exited, agent_stopped
	// (the tee forwarded the editor's signal), client_closed (the editor
	// closed the agent's stdin first).
	TransportACP
	// TransportAGUI is the AG-UI HTTP tee (adapters/agui): Kind event,
	// Name (the event type), Thread and Run (the event's own, else the
	// stream's), Instance (the stream's own token); Raw is the event.
	// KindEnd (Raw nil) names a stream's Thread, Run and Instance when it
	// ended after RUN_STARTED without RUN_FINISHED or RUN_ERROR, Reason
	// why: client_aborted, upstream_dropped, upstream_ended.
	TransportAGUI
	// TransportOTLP is the OTLP sidecar receiver (adapters/otlp): Kind
	// record and Record, an *OTelRecord; Raw is nil. OTLP vendors declare
	// Detect, the receiver's per-resource vendor choice.
	TransportOTLP
	// TransportOpenCode is the OpenCode / Kilo Code bus (adapters/opencode):
	// the SSE bridge (`aep-hook follow`) and the plugin forwarder. Kind event
	// is one bus event (Raw is the event {id?, type, properties}; Name its
	// type, ID its evt_ id when it has one, Thread the directory a
	// /global/event wrapper named, Method the plugin hook that carried it,
	// "" from the stream) or one interception hook (Method
	// "tool.execute.before" / "tool.execute.after", Raw {input, output};
	// "permission.ask", Raw the permission). Kind record is one object the
	// bridge fetched over REST while catching up after a reconnect (Name
	// the resource: "session", "message", "part", "permission", "question";
	// Raw the object as the server returned it; Session). Kind end says the
	// catch-up found Session idle without the stream having said so
	// (Reason); with Run, a user message id, it says only that every turn
	// begun before that message was over when it came (several turns in
	// one catch-up).
	TransportOpenCode
	// TransportPi is the pi extension forwarder (adapters/pi): the
	// extension shipped in the binary writes one line per bus event to
	// `aep-hook forward pi`. Kind event; Name is the event's type,
	// Session the pi session id the extension read from its session
	// manager; Raw is the event as pi emitted it (the extension only drops
	// members the mapping never reads, such as turn_end's context preview).
	TransportPi
	// TransportKimiWeb is the Kimi web channel (adapters/kimiweb), the
	// `kimi web` server's WebSocket event stream. Kind event; Name is the
	// frame's type, Session its session_id, ID its seq as written; Raw is
	// the frame as the server sent it ({type, seq, session_id, timestamp,
	// epoch, payload, volatile?}).
	TransportKimiWeb
	// TransportOpenHands is the OpenHands agent-server events WebSocket
	// (adapters/openhands). Kind event; Name is the event's kind, ID its
	// id, Session the conversation whose socket carried it; Raw is the
	// event as the server sent it (its transport dump).
	TransportOpenHands
	// TransportA2A is the A2A JSON-RPC surface (adapters/a2a): the tee in
	// front of an A2A server and the task follower. Kind request (Raw the
	// JSON-RPC request; Method, ID, Instance; Session and Run the context
	// and task it names, else the ones its answer named), response (Raw the
	// JSON-RPC response; Method the request's, ID; Name the result's case:
	// "task" or "message"; Session, Run), event (one SSE event of a
	// streaming answer or a subscription: Raw the JSON-RPC response it
	// carries; Name "task", "message", "statusUpdate" or "artifactUpdate";
	// Method the request's, ID; Session and Run the event's context and
	// task), end (a stream cut before its task reached a terminal or an
	// interrupted state: Method, Session, Run, Reason).
	TransportA2A
	// TransportOpenClaw is the OpenClaw Gateway client (adapters/openclaw),
	// connected read-only (scope operator.read) to the gateway's
	// WebSocket. Kind event; Raw is the event frame as the gateway sent it
	// ({type:"event", event, payload, seq?, stateVersion?}); Name its
	// event, ID its seq as written, Session the payload's sessionKey, Run
	// its runId.
	TransportOpenClaw
)

var transportNames = [...]string{"hook", "acp", "agui", "otlp", "opencode", "pi", "kimiweb", "openhands", "a2a", "openclaw"}

// String names the transport by its adapter package.
func (t Transport) String() string {
	if int(t) < len(transportNames) {
		return transportNames[t]
	}
	return "unknown"
}

// Match says how surely an OTLP resource or record belongs to a vendor
// (Vendor.Detect). The receiver picks, per resource, a strong match on the
// resource, else the first record any vendor matches (strong before weak),
// else a weak match on the resource, else the vendor that takes the rest.
type Match uint8

// The match strengths, weakest first.
const (
	NoMatch       Match = iota
	MatchFallback       // nothing names another vendor: this default profile takes it
	MatchWeak           // an identity attribute the vendor stamps
	MatchStrong         // the vendor's service name or event family
)

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
	// Fields, when Data is nil, is an untyped payload as a list: unique
	// keys in any order (the encoder sorts them as a map's), each with its
	// level as Levels declares it. It is Data's form for a table that has
	// the members as a list already (the OTLP records' attributes): the
	// emitter gates and encodes it without building a map per event.
	// Levels still names the level of any field the emitter adds
	// (digests_missing).
	Fields []redact.Field
	// Time, when set, is when the moment happened by the vendor's own
	// account (an OTLP record's timestamp): the event's time. Zero means
	// now, when the emitter builds the event.
	Time time.Time
	// Secrets names the form answers (answer.values ids) the request said
	// are secrets (see redact.Content.Secrets).
	Secrets []string

	// Session, when set, addresses the event to another AEP session than
	// the moment's (a resumed session's new AEP session, a child session):
	// the emitter writes it to that session's log with that session's seq,
	// epoch and references, taking that session's lock inside the moment's.
	// A table only names sessions no moment is identified to (derived
	// names such as "<id>~r<nonce>"), so locks always nest one way.
	Session string
	// Mark remembers this event's id under a key, for later Cause or
	// Subject references. Run, tool-call and subagent pairs are marked and
	// linked by the emitter itself; Mark is for anything else (attention).
	Mark string
	// CauseRef sets cause to the id remembered under this key, if any.
	CauseRef string
	// Cause, when CauseRef sets none, is the cause as an event id the table
	// was handed (a control command's id: the loop's acks and outcomes are
	// caused by an event another emitter wrote).
	Cause string
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
	// Transport is the adapter that feeds this table, and so the Facts
	// its moments carry.
	Transport Transport
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
	// Hold, for a table with a control surface, says whether the control
	// loop may hold moment m for an answer and how (nil: not held, the
	// moment is only observed). g is the adapter's control configuration.
	// Pure, like Map: it reads the payload and g.
	Hold func(m Moment, g Gate) *Hold
	// Detect, for a TransportOTLP vendor, says how surely a resource (rec
	// nil) or one record (rec non-nil) is this vendor's (see Match). res is
	// the resource's attributes.
	Detect func(res map[string]any, rec *OTelRecord) Match
}

// AgentName is the AEP agent the table's events carry: Agent, else Name.
func (v Vendor) AgentName() string {
	if v.Agent != "" {
		return v.Agent
	}
	return v.Name
}
