package mapping

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// OpenCode is the AEP-0002 Annex A.7 table for OpenCode's plugin channel:
// the bus events and interception hooks the forwarder plugin
// (`aep-hook plugin opencode`) hands over. It is the core-type authority
// (the pins' plugin posture); see busTable for the rules every OpenCode and
// Kilo Code channel shares.
func OpenCode() Vendor {
	return busVendor(busProfile{agent: "opencode"}, "opencode",
		"OpenCode plugin forwarder: bus events and tool hooks from the plugin (aep-hook plugin opencode)")
}

// OpenCodeSSE is the OpenCode SSE channel (Annex A.7, the pins' sse_modes):
// the same bus read from a running server's event stream by
// `aep-hook follow opencode`. It emits as opencode. Primary (the default)
// maps the whole bus; companion emits only the channel-visible
// x.opencode.* family, for when the plugin forwarder is the primary.
func OpenCodeSSE() Vendor {
	return busVendor(busProfile{agent: "opencode", stream: true}, "opencode-sse",
		"OpenCode server event stream (aep-hook follow opencode): sessions, turns, tools, asks, todos")
}

// KiloCode is the Annex A.8 table for Kilo Code's plugin channel (the
// OpenCode fork, carried whole on its own identity).
func KiloCode() Vendor {
	return busVendor(busProfile{agent: "kilocode"}, "kilocode",
		"Kilo Code plugin forwarder: bus events and tool hooks from the plugin (aep-hook plugin kilo)")
}

// KiloCodeSSE is the Kilo Code SSE channel (Annex A.8 sse_modes), emitting
// as kilocode.
func KiloCodeSSE() Vendor {
	return busVendor(busProfile{agent: "kilocode", stream: true}, "kilocode-sse",
		"Kilo Code server event stream (aep-hook follow kilo): sessions, turns, tools, asks, todos")
}

// busProfile is what differs between the four bus tables: the AEP agent
// (and x.* namespace) and whether the channel is the read-only stream,
// whose asks advertise no way to answer.
type busProfile struct {
	agent  string
	stream bool
}

func busVendor(p busProfile, name, summary string) Vendor {
	v := Vendor{
		Name:      name,
		Summary:   summary,
		Transport: TransportOpenCode,
		Identify:  busIdentify,
		Map:       p.mapMoment,
		Seed:      busSeed,
	}
	if p.stream {
		v.Hold = p.busHold
	}
	if name != p.agent {
		v.Agent = p.agent
	}
	return v
}

// The bus tables' rules (what the servers send today, opencode-ai 1.18.33
// and @kilocode/cli 7.7.7, and the pinned older shapes):
//
//   - Sessions: the bus sessionID is the AEP session; session.created
//     starts it once (client name and version, the parent of a child
//     session), session.deleted ends it.
//   - Runs: one per turn, synthesized. A user message.updated whose id is
//     newer than every user message seen opens a run named by that message
//     id (the server re-sends older user messages with summaries: those
//     never open a run; a prompt while a run is open steers it). Kilo's
//     session.turn.open / session.turn.close are the boundary when present
//     (Kilo ends a turn "superseded" for a prompt queued meanwhile: the
//     run is cancelled and the next turn opens one).
//     session.idle closes the run: cancelled when its assistant message was
//     aborted or closed with neither a finish nor an error (cut: Kilo at
//     SIGTERM), failed when it ended in an error, else finished with the
//     summed usage. A second idle finds nothing open.
//   - Tools: message.part.updated tool parts, paired by callID: running
//     (or the first outcome) requests, completed completes, error fails
//     (type "rejected" when the human rejected the call's permission,
//     "aborted" inside an aborted turn). The plugin's
//     tool.execute.before/after request and complete the same calls once.
//   - Asks: permission.asked (and the pinned permission.updated /
//     permission.ask shapes) and question.asked raise attention.requested;
//     permission.replied / question.replied answer and resolve them;
//     question.rejected dismisses; asks still pending when the run closes
//     (an abort sends no reply) are dismissed.
//   - Todos: todo.updated snapshots are diffed (by id when the items have
//     one, else by content and position) into progress.task.planned /
//     progress.task.completed.
//   - Everything else rides x.{agent}.{bus type} at debug (session.error at
//     error); token deltas only behind the deltas opt-in; heartbeats and
//     the global stream's sync copies are transport, never events.
//
// Companion mode maps the moment as primary would on a copy of the state
// (the primary channel owns the session's state), then keeps only x.*
// events; a moment whose primary mapping is core (or nothing) becomes its
// x.{agent}.{bus type} event with an empty payload.

// Table-state keys of the bus tables.
const (
	busStarted   = "oc.started"  // session.started emitted
	busLastUser  = "oc.user"     // newest user message id seen
	busOutcome   = "oc.outcome"  // the open run's outcome so far: abort, error:<name>
	busFinish    = "oc.finish"   // the last assistant message's finish, "" while it runs
	busUsageIn   = "oc.in"       // the open run's input tokens
	busUsageOut  = "oc.out"      // the open run's output tokens
	busCost      = "oc.cost"     // the open run's cost
	busTurnOwner = "oc.turns"    // the vendor states turn boundaries (Kilo)
	busTodos     = "oc.todos"    // the last todo snapshot (see todoItem)
	busTodoSeq   = "oc.todo.seq" // the last synthesized todo label
	busAnswered  = "oc.answered" // the newest user message an answer in a run replied to
)

func busToolKey(call string) string   { return "oc.tool:" + call }
func busRejectKey(call string) string { return "oc.rej:" + call }
func busAskedKey(id string) string    { return "oc.asked:" + id }
func busFormKey(id string) string     { return "oc.form:" + id }

// busAttnKey is the emitter reference of an ask's attention.requested.
func busAttnKey(id string) string { return "oc.attn:" + id }

// busIdentify names the moment and finds its session: the fact the
// transport gave, else the session the vendor's payload names.
func busIdentify(m Moment) (string, string) {
	name := busName(m)
	s := m.Facts.Session
	if s == "" {
		s = busSession(m)
	}
	if s == "" {
		s = UnknownSession
	}
	return name, s
}

// busName is the moment's name: the bus event type, the interception hook,
// or the REST resource of a catch-up record.
func busName(m Moment) string {
	switch {
	case m.Facts.Kind == KindRecord:
		return "record:" + m.Facts.Name
	case m.Facts.Kind == KindEnd:
		return "end"
	case m.Facts.Method != "" && m.Facts.Method != "event":
		return m.Facts.Method
	case m.Facts.Name != "":
		return m.Facts.Name
	}
	return Str(m.Raw, "type")
}

// busSession reads the session the payload names, per moment shape.
func busSession(m Moment) string {
	raw := m.Raw
	switch m.Facts.Method {
	case "tool.execute.before", "tool.execute.after":
		return Str(raw, "input.sessionID")
	case "permission.ask":
		return Str(raw, "sessionID")
	}
	if s := Str(raw, "properties.sessionID"); s != "" {
		return s
	}
	if s := Str(raw, "properties.info.sessionID"); s != "" {
		return s
	}
	if s := Str(raw, "properties.part.sessionID"); s != "" {
		return s
	}
	if strings.HasPrefix(busName(m), "session.") {
		return Str(raw, "properties.info.id")
	}
	return ""
}

// busSeed gives a pinned moment the runtime state the pins presume: an
// open run for the moment that closes one, the snapshot already seen for a
// todo list (a snapshot alone is not a transition).
func busSeed(_ []byte, m Moment, st *State) {
	switch busName(m) {
	case "session.idle":
		if currentRun(st) == "" {
			sessionRuns.begin(st, "pin-run")
		}
	case "todo.updated":
		diffTodos(st, gjson.GetBytes(m.Raw, "properties.todos").Array())
	}
}

// mapMoment is the table's Map: primary mapping, or its companion view.
func (p busProfile) mapMoment(m Moment, st *State) ([]Draft, error) {
	if m.Mode != Companion {
		return p.primary(m, st), nil
	}
	scratch := cloneState(st)
	ds := p.primary(m, &scratch)
	if m.Facts.Kind != KindEvent && m.Facts.Kind != KindNone {
		return nil, nil // catch-up records are state, never channel events
	}
	keep := ds[:0]
	for _, d := range ds {
		if strings.HasPrefix(d.Type, "x.") {
			keep = append(keep, d)
		}
	}
	if len(keep) > 0 && len(keep) == len(ds) {
		return keep, nil
	}
	name := busName(m)
	if busPlumbing(name) || name == "message.part.delta" && !m.Deltas {
		return nil, nil
	}
	return []Draft{{Type: p.vendorType(name), Severity: debug, Data: map[string]any{}}}, nil
}

// busPlumbing names what no channel records: transport (heartbeats, the
// global stream's sync copies) and the instance's catalog plumbing
// (sessionless, dozens at every start, no agent activity).
func busPlumbing(name string) bool {
	switch name {
	case "server.heartbeat", "sync", "plugin.added", "catalog.updated", "reference.updated",
		"integration.updated", "integration.connection.updated", "models-dev.refreshed", "indexing.status":
		return true
	}
	return false
}

// cloneState copies st so a companion's mapping leaves the primary
// channel's state untouched.
func cloneState(st *State) State {
	c := State{Clock: st.Clock, Entries: make(map[string]string, len(st.Entries)), Touch: make(map[string]uint64, len(st.Touch))}
	for k, v := range st.Entries {
		c.Entries[k] = v
	}
	for k, v := range st.Touch {
		c.Touch[k] = v
	}
	return c
}

// vendorType is x.{agent}.{bus type}, each dotted segment a legal token.
func (p busProfile) vendorType(name string) string {
	var segs []string
	for _, s := range strings.Split(name, ".") {
		segs = append(segs, SnakeCase(s))
	}
	return vendorEventType(p.agent, segs...)
}

// machinery is the x.* event of a bus moment with no core meaning.
func (p busProfile) machinery(name string, data map[string]any, lv map[string]redact.Level) Draft {
	if data == nil {
		data = map[string]any{}
	}
	return Draft{Type: p.vendorType(name), Severity: debug, Data: data, Levels: lv}
}

// primary maps one moment with every rule.
func (p busProfile) primary(m Moment, st *State) []Draft {
	st.Get(busStarted) // keep the session's first-sight mark fresh
	switch m.Facts.Kind {
	case KindRecord:
		return p.record(m, st)
	case KindEnd:
		if later := m.Facts.Run; later != "" {
			// Only a run begun before that user message is over (ids
			// sort by time); the stream may have opened it already.
			if run := currentRun(st); run == "" || run >= later {
				return nil
			}
		}
		return p.closeRun(st, "shutdown")
	}
	raw := m.Raw
	switch m.Facts.Method {
	case "tool.execute.before":
		return p.hookTool(raw, st, false)
	case "tool.execute.after":
		return p.hookTool(raw, st, true)
	case "permission.ask":
		return p.ask(raw, st, "", true, false)
	}
	name := busName(m)
	props := []byte(gjson.GetBytes(raw, "properties").Raw)
	if busPlumbing(name) {
		return nil
	}
	switch name {
	case "session.created":
		return p.sessionStarted(Raw(props, "info"), st)
	case "session.deleted":
		ds := p.closeRun(st, "")
		return append(ds, Draft{Type: "session.ended", Data: Data("reason", "normal")})
	case "session.idle":
		if _, vendorTurns := st.Get(busTurnOwner); vendorTurns {
			return nil // the turn's own close follows
		}
		return p.closeRun(st, "")
	case "session.compacted":
		return inRun(st, Draft{Type: "session.compacted", Data: map[string]any{}})
	case "session.status":
		if Str(props, "status.type") != "retry" {
			return nil
		}
		return inRun(st, Draft{Type: "progress.status", Subject: "retry", Data: Data("message", Str(props, "status.message"))})
	case "session.error":
		errName := Str(props, "error.name")
		if currentRun(st) != "" && errName != "" {
			if errName == "MessageAbortedError" {
				st.Set(busOutcome, "abort")
			} else {
				st.Set(busOutcome, "error:"+errName)
			}
		}
		d := p.machinery(name, Data("type", errName, "message", Str(props, "error.data.message")),
			map[string]redact.Level{"type": redact.Metadata, "message": redact.Redacted})
		d.Severity = "error"
		return inRun(st, d)
	case "session.turn.open":
		// Kilo states its turns: from now on they, not idle, bound runs.
		// The turn follows its user message, which named the run already.
		st.Set(busTurnOwner, "1")
		last, _ := st.Get(busLastUser)
		return p.openRun(st, firstNonEmpty(last, m.Nonce), "")
	case "session.turn.close":
		st.Set(busTurnOwner, "1")
		return p.closeRun(st, firstNonEmpty(Str(props, "reason"), "completed"))
	case "message.updated":
		return p.message(Raw(props, "info"), st, name, true)
	case "message.part.updated":
		return p.part(Raw(props, "part"), st, name, true)
	case "message.part.delta":
		if !m.Deltas {
			return nil
		}
		return inRun(st, p.machinery(name, Data("delta", Str(props, "delta")), deltaLevels(redact.Redacted)))
	case "permission.asked", "permission.updated":
		return p.ask(props, st, name, false, m.Control)
	case "permission.replied":
		return p.permissionReplied(props, st)
	case "question.asked":
		return p.question(props, st, m.Control)
	case "question.replied":
		return p.questionReplied(props, st)
	case "question.rejected":
		return p.questionRejected(props, st)
	case "todo.updated":
		return inRun(st, diffTodos(st, gjson.GetBytes(props, "todos").Array())...)
	case "file.edited":
		return inRun(st, p.machinery(name, Data("file", Str(props, "file")), extLevels(redact.Redacted, "file")))
	case "command.executed":
		return inRun(st, p.machinery(name, Data("name", Str(props, "name"), "arguments", Str(props, "arguments")),
			map[string]redact.Level{"name": redact.Metadata, "arguments": redact.Redacted}))
	}
	return inRun(st, p.machinery(name, nil, nil))
}

// record maps an object fetched while catching up: only what changes the
// record (a session first seen, a turn, a tool outcome, a pending ask);
// nothing of the machinery plane.
func (p busProfile) record(m Moment, st *State) []Draft {
	switch m.Facts.Name {
	case "session":
		return p.sessionStarted(m.Raw, st)
	case "message":
		return p.message(m.Raw, st, "", false)
	case "part":
		return p.part(m.Raw, st, "", false)
	case "permission":
		return p.ask(m.Raw, st, "permission.asked", false, m.Control)
	case "question":
		return p.question(m.Raw, st, m.Control)
	}
	return nil
}

// sessionStarted starts the session once: client name and version, the
// parent of a child session; title and directory for the gate.
func (p busProfile) sessionStarted(info []byte, st *State) []Draft {
	if _, done := st.Get(busStarted); done {
		return nil
	}
	st.Set(busStarted, "1")
	d := Data(
		"client", Data("name", p.agent, "version", Str(info, "version")),
		"label", Str(info, "title"),
		"cwd", Str(info, "directory"),
	)
	if parent := Str(info, "parentID"); parent != "" {
		d["parent"] = map[string]any{"session": parent}
	}
	return []Draft{{Type: "session.started", Data: d}}
}

// openRun opens the run id (trigger user), resetting the run's outcome
// and usage; a run already open is steered, never doubled.
func (p busProfile) openRun(st *State, id, _ string) []Draft {
	if currentRun(st) != "" || id == "" {
		return nil
	}
	sessionRuns.begin(st, id)
	for _, k := range []string{busOutcome, busFinish, busUsageIn, busUsageOut, busCost} {
		st.Del(k)
	}
	return []Draft{{Type: "run.started", Run: id, Data: Data("trigger", "user")}}
}

// closeRun closes the open run, if any: pending asks dismissed, tools
// still open failed, then the run's one terminal. reason is the vendor's
// (Kilo's turn.close) or "shutdown" when a catch-up found the session idle
// with the turn unfinished.
func (p busProfile) closeRun(st *State, reason string) []Draft {
	run := currentRun(st)
	if run == "" {
		return nil
	}
	ds := dismissPending(st)
	outcome, _ := st.Get(busOutcome)
	finish, _ := st.Get(busFinish)
	switch {
	case reason == "shutdown" && (outcome == "" || outcome == "cut") && (finish == "" || finish == "tool-calls"):
		outcome = "shutdown"
	case reason != "" && reason != "shutdown" && outcome == "":
		switch r := SnakeCase(reason); r {
		case "completed", "complete", "done", "idle", "stop", "finished":
		case "abort", "aborted", "cancelled", "canceled", "interrupted", "superseded":
			// superseded: Kilo ended the turn for a prompt queued
			// meanwhile, which opens the next one.
			outcome = "abort"
		default:
			outcome = "error:" + r
		}
	}
	cmd, cancelled := st.Get(ctlCancel)
	st.Del(ctlCancel)
	if cancelled && !strings.HasPrefix(outcome, "error:") {
		// A control.cancel aborted the turn: the server's end of it is
		// the cancel's outcome, whatever the abort left in the messages
		// (an abort between two steps marks none aborted).
		outcome = "abort"
	}
	ds = append(ds, p.failOpenTools(st, run, outcome)...)
	sessionRuns.end(st, "")
	switch {
	case cancelled && outcome == "abort":
		ds = append(ds, Draft{Type: "run.cancelled", Run: run, Cause: cmd, Data: Data("by", "control")})
	case outcome == "abort" || outcome == "cut":
		// cut: the answer ended unfinished, for a cause the server does
		// not say; cancelled, with no claim of by whom.
		ds = append(ds, Draft{Type: "run.cancelled", Run: run, Data: map[string]any{}})
	case outcome == "shutdown":
		ds = append(ds, Draft{Type: "run.cancelled", Run: run, Data: Data("by", "shutdown")})
	case strings.HasPrefix(outcome, "error:"):
		ds = append(ds, Draft{Type: "run.failed", Run: run, Data: Data("reason", "error",
			"error", Data("type", strings.TrimPrefix(outcome, "error:")))})
	default:
		ds = append(ds, Draft{Type: "run.finished", Run: run, Data: p.runUsage(st)})
	}
	for _, k := range []string{busOutcome, busFinish, busUsageIn, busUsageOut, busCost} {
		st.Del(k)
	}
	return ds
}

// runUsage is run.finished's usage and cost, summed over the run's
// assistant messages.
func (p busProfile) runUsage(st *State) map[string]any {
	d := map[string]any{}
	in, _ := st.Get(busUsageIn)
	out, _ := st.Get(busUsageOut)
	u := map[string]any{}
	if n, err := strconv.ParseInt(in, 10, 64); err == nil && n > 0 {
		u["gen_ai.usage.input_tokens"] = n
	}
	if n, err := strconv.ParseInt(out, 10, 64); err == nil && n > 0 {
		u["gen_ai.usage.output_tokens"] = n
	}
	if len(u) > 0 {
		d["usage"] = u
	}
	return d
}

// failOpenTools closes the run's tool calls that never reported an outcome
// (the server went away mid-call, or an abort it did not report per call).
func (p busProfile) failOpenTools(st *State, run, outcome string) []Draft {
	typ := "interrupted"
	if outcome == "abort" {
		typ = "aborted"
	}
	var ds []Draft
	for _, k := range sortedKeysWith(st, "oc.tool:") {
		v := st.Entries[k]
		parts := strings.SplitN(v, ":", 3)
		if len(parts) != 3 || parts[0] != "r" {
			continue
		}
		name := parts[2]
		call := strings.TrimPrefix(k, "oc.tool:")
		st.Set(k, "c:"+parts[1])
		ds = append(ds, Draft{Type: "tool.failed", Subject: name, Run: run,
			Data: Data("tool", ToolRef(name, call), "error", Data("type", typ))})
	}
	return ds
}

// message maps a message's info (message.updated, or a catch-up record).
func (p busProfile) message(info []byte, st *State, name string, live bool) []Draft {
	switch Str(info, "role") {
	case "user":
		id := Str(info, "id")
		last, _ := st.Get(busLastUser)
		if id == "" || (last != "" && id <= last) {
			return nil // a re-sent (summary) update of a message already seen
		}
		st.Set(busLastUser, id)
		return p.openRun(st, id, "")
	case "assistant":
		opened := p.queuedTurn(info, st)
		if currentRun(st) != "" {
			p.noteAssistant(info, st)
			prev, _ := st.Get(busAnswered)
			if parent := Str(info, "parentID"); parent > prev {
				st.Set(busAnswered, parent)
			}
		}
		if !live {
			return opened
		}
		d := Data("role", "assistant")
		lv := map[string]redact.Level{"role": redact.Metadata}
		for k, path := range map[string]string{"gen_ai.usage.input_tokens": "tokens.input", "gen_ai.usage.output_tokens": "tokens.output"} {
			if v := extInt(info, path); v != nil {
				d[k] = v
				lv[k] = redact.Metadata
			}
		}
		return append(opened, inRun(st, p.machinery(name, d, lv))...)
	}
	if !live {
		return nil
	}
	return inRun(st, p.machinery(name, Data("role", Str(info, "role")), extLevels(redact.Metadata, "role")))
}

// queuedTurn opens the run of a prompt that arrived while an earlier turn
// ran and that the server answers as a turn of its own once that one is
// over (Kilo queues it: idle, then a new answer): an assistant message
// answering the newest user message, with no run open and that message's
// turn never run nor answered inside another. Where the vendor states its turns (Kilo's
// session.turn.open on the stream), they open it instead; the plugin
// channel never sees those.
func (p busProfile) queuedTurn(info []byte, st *State) []Draft {
	if currentRun(st) != "" {
		return nil
	}
	if _, vendorTurns := st.Get(busTurnOwner); vendorTurns {
		return nil
	}
	parent := Str(info, "parentID")
	newest, _ := st.Get(busLastUser)
	last, _ := st.Get(stateLastRun)
	answered, _ := st.Get(busAnswered)
	if parent == "" || parent != newest || parent <= last || parent <= answered {
		return nil // answered inside a run already (OpenCode steers in one loop)
	}
	return p.openRun(st, parent, "")
}

// noteAssistant keeps what an assistant message says about its turn: how
// it finished, an abort or error, and (once complete) its usage.
func (p busProfile) noteAssistant(info []byte, st *State) {
	if name := Str(info, "error.name"); name != "" {
		if name == "MessageAbortedError" {
			st.Set(busOutcome, "abort")
		} else {
			st.Set(busOutcome, "error:"+name)
		}
	}
	finish := Str(info, "finish")
	st.Set(busFinish, finish)
	if !gjson.GetBytes(info, "time.completed").Exists() {
		return
	}
	switch outcome, _ := st.Get(busOutcome); {
	case finish == "" && outcome == "" && Str(info, "error.name") == "":
		// Closed with neither a finish nor an error: the answer was cut
		// (Kilo marks it so when SIGTERM stops a turn mid-retry, then
		// goes idle). A later answer of the turn that finishes undoes it.
		st.Set(busOutcome, "cut")
	case finish != "" && outcome == "cut":
		st.Del(busOutcome)
	}
	// Each completed assistant message counts once: keyed by its id.
	id := Str(info, "id")
	if id == "" {
		return
	}
	if _, counted := st.Get("oc.usage:" + id); counted {
		return
	}
	st.Set("oc.usage:"+id, "1")
	add := func(key, path string) {
		v := gjson.GetBytes(info, path).Int()
		cur, _ := st.Get(key)
		n, _ := strconv.ParseInt(cur, 10, 64)
		st.Set(key, strconv.FormatInt(n+v, 10))
	}
	add(busUsageIn, "tokens.input")
	add(busUsageOut, "tokens.output")
}

// part maps a message part: tool parts drive the tool lifecycle, every
// other part is machinery.
func (p busProfile) part(part []byte, st *State, name string, live bool) []Draft {
	if Str(part, "type") != "tool" {
		if !live {
			return nil
		}
		return inRun(st, p.machinery(name, Data("part", Str(part, "type")), extLevels(redact.Metadata, "part")))
	}
	call, tool := Str(part, "callID"), Str(part, "tool")
	status := Str(part, "state.status")
	p.reusedCall(st, call, Str(part, "messageID"))
	var ds []Draft
	switch status {
	case "running":
		ds = p.toolRequest(st, tool, call, Raw(part, "state.input"))
	case "completed":
		ds = p.toolRequest(st, tool, call, Raw(part, "state.input"))
		if p.toolClose(st, call) {
			d := withData(toolCompleted(part, tool, call, "state.output"), "duration_ms", toolDuration(part))
			ds = append(ds, d)
		}
	case "error":
		ds = p.toolRequest(st, tool, call, Raw(part, "state.input"))
		if p.toolClose(st, call) {
			d := withData(toolFailed(tool, call, p.toolErrorType(st, call), Str(part, "state.error")), "duration_ms", toolDuration(part))
			ds = append(ds, d)
		}
	}
	return inRun(st, ds...)
}

// toolDuration is a finished tool part's time.end - time.start, nil when
// either is missing.
func toolDuration(part []byte) any {
	r := gjson.GetManyBytes(part, "state.time.start", "state.time.end")
	if r[0].Type != gjson.Number || r[1].Type != gjson.Number || r[1].Int() < r[0].Int() {
		return nil
	}
	return r[1].Int() - r[0].Int()
}

// toolErrorType types a failed call: rejected by the human, aborted with
// its turn, or an error.
func (p busProfile) toolErrorType(st *State, call string) string {
	if _, ok := st.Get(busRejectKey(call)); ok {
		st.Del(busRejectKey(call))
		return "rejected"
	}
	if o, _ := st.Get(busOutcome); o == "abort" {
		return "aborted"
	}
	return "error"
}

// reusedCall forgets a call id last used by another assistant message:
// some providers number their calls per response (call_0, call_1, ...), so
// the same id in a later message is a new call.
func (p busProfile) reusedCall(st *State, call, msg string) {
	if call == "" || msg == "" {
		return
	}
	if v, ok := st.Get(busToolKey(call)); ok {
		switch toolStateMsg(v) {
		case msg:
			return
		case "":
			// The plugin's tool hook saw the call first (Kilo fires
			// tool.execute.before before the call's first part; the hook
			// names no message): the same call, under this message.
			if parts := strings.SplitN(v, ":", 3); len(parts) >= 2 {
				parts[1] = msg
				st.Set(busToolKey(call), strings.Join(parts, ":"))
				return
			}
		}
		st.Del(busToolKey(call))
	}
	st.Set("oc.toolmsg:"+call, msg)
}

// toolStateMsg is the message a tool state entry ("r:MSG:NAME", "c:MSG")
// was recorded under.
func toolStateMsg(v string) string {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// toolRequest emits tool.requested for call once.
func (p busProfile) toolRequest(st *State, tool, call string, input []byte) []Draft {
	if call == "" {
		return nil
	}
	if _, seen := st.Get(busToolKey(call)); seen {
		return nil
	}
	msg, _ := st.Get("oc.toolmsg:" + call)
	st.Del("oc.toolmsg:" + call)
	st.Set(busToolKey(call), "r:"+msg+":"+clip(tool, maxKeyName))
	d := Draft{Type: "tool.requested", Subject: tool, Data: Data("tool", ToolRef(tool, call))}
	if len(input) > 0 {
		d.Data["args_digest"] = redact.DigestJSON(input)
		d.Data["args"] = gjson.ParseBytes(input).Value()
	}
	return []Draft{d}
}

// toolClose reports whether call is still open, and marks it closed.
func (p busProfile) toolClose(st *State, call string) bool {
	if call == "" {
		return false
	}
	v, _ := st.Get(busToolKey(call))
	if strings.HasPrefix(v, "c:") {
		return false
	}
	st.Set(busToolKey(call), "c:"+toolStateMsg(v))
	return true
}

// hookTool maps the plugin's tool.execute.before (request) and
// tool.execute.after (completion: the typed hook has no error surface).
func (p busProfile) hookTool(raw []byte, st *State, after bool) []Draft {
	tool, call := Str(raw, "input.tool"), Str(raw, "input.callID")
	if !after {
		ds := p.toolRequest(st, tool, call, nil)
		for i := range ds {
			ds[i] = withData(ds[i], "args_digest", extDigest(raw, "output.args"), "args", Value(raw, "output.args"))
		}
		return inRun(st, ds...)
	}
	if !p.toolClose(st, call) {
		return nil
	}
	return inRun(st, toolCompleted(raw, tool, call, "output.output"))
}

// ask raises attention.requested for a permission request once. hook
// marks the plugin's hold-open permission.ask (the pinned allow/deny
// card); name is the bus type (permission.updated is the hook's shadow on
// the plugin channel and raises nothing there). live says the stream
// bridge holds the request over a live control link: only then does the
// stream's card carry the server's reply options and respond_via control;
// otherwise it advertises no way to answer.
func (p busProfile) ask(perm []byte, st *State, name string, hook, live bool) []Draft {
	if name == "permission.updated" && !p.stream {
		return nil
	}
	id := Str(perm, "id")
	if id != "" {
		if _, seen := st.Get(busAskedKey(id)); seen {
			return nil
		}
		st.Set(busAskedKey(id), "1")
	}
	kind := firstNonEmpty(Str(perm, "permission"), Str(perm, "type"))
	detail := Str(perm, "title")
	if detail == "" {
		var pats []string
		for _, r := range gjson.GetBytes(perm, "patterns").Array() {
			pats = append(pats, r.String())
		}
		detail = firstNonEmpty(strings.Join(pats, ", "), Str(perm, "pattern"))
	}
	prompt := "Permission requested: " + kind
	if detail != "" {
		prompt += " — " + clip(detail, maxPromptDetail)
	}
	data := map[string]any{"kind": "permission", "prompt": prompt}
	if !p.stream {
		if hook {
			data["options"] = permissionOptions()
		} else {
			data["options"] = replyOptions()
		}
		// The forwarder plugin only forwards: the answer is the human's,
		// in the agent's own UI.
		data["respond_via"] = respondVia(false)
	} else if live && name == "permission.asked" {
		data["options"] = replyOptions()
		data["respond_via"] = respondVia(true)
	}
	key := busAttnKey(id)
	if id == "" {
		key = ""
	}
	var ds []Draft
	run := currentRun(st)
	if key != "" {
		ds = raiseAttention(st, key, run)
	}
	if call := Str(perm, "tool.callID"); call != "" && id != "" {
		st.Set("oc.askcall:"+id, call)
	}
	return append(ds, Draft{Type: "attention.requested", Subject: kind, Run: run, Mark: key, Data: data})
}

// replyOptions is the server's permission reply enum as options.
func replyOptions() []any {
	return []any{
		map[string]any{"id": "once", "label": "Allow once"},
		map[string]any{"id": "always", "label": "Always allow"},
		map[string]any{"id": "reject", "label": "Reject"},
	}
}

// permissionReplied answers and resolves a request seen raised; one never
// seen (settled before the channel saw it) is resolved under its vendor id.
func (p busProfile) permissionReplied(props []byte, st *State) []Draft {
	id := firstNonEmpty(Str(props, "requestID"), Str(props, "permissionID"))
	reply := firstNonEmpty(Str(props, "reply"), Str(props, "response"))
	if call, ok := st.Get("oc.askcall:" + id); ok {
		st.Del("oc.askcall:" + id)
		if reply == "reject" {
			st.Set(busRejectKey(call), "1")
		}
	}
	key := busAttnKey(id)
	_, pending := st.Get(attnPendingPrefix + key)
	if !pending {
		if _, seen := st.Get(busAskedKey(id)); seen || id == "" {
			return nil // already settled: one terminal per request
		}
		st.Set(busAskedKey(id), "1")
		return inRun(st, Draft{Type: "attention.resolved", Subject: id, Data: map[string]any{"resolution": "answered"}})
	}
	return ControlAnswered(st, key, reply, Data("option", reply), nil)
}

// question raises the form for a question request once (AEP-0006, the
// AskUserQuestion shape: select fields, the vendor's custom as other).
func (p busProfile) question(q []byte, st *State, live bool) []Draft {
	id := Str(q, "id")
	if id == "" {
		return nil
	}
	if _, seen := st.Get(busAskedKey(id)); seen {
		return nil
	}
	st.Set(busAskedKey(id), "1")
	data, meta, labels := questionForm(p.agent, []byte(gjson.GetBytes(q, "questions").Raw))
	if !p.stream {
		data["respond_via"] = respondVia(false)
	} else if live {
		data["respond_via"] = respondVia(true)
	}
	st.Set(busFormKey(id), labels)
	key := busAttnKey(id)
	run := currentRun(st)
	ds := raiseAttention(st, key, run)
	return append(ds, Draft{Type: "attention.requested", Subject: id, Run: run, Mark: key, Data: data, Meta: meta})
}

// questionReplied answers the form with the chosen choice ids (free text
// where the answer matches no choice) and resolves it.
func (p busProfile) questionReplied(props []byte, st *State) []Draft {
	id := Str(props, "requestID")
	key := busAttnKey(id)
	_, pending := st.Get(attnPendingPrefix + key)
	if !pending {
		if _, seen := st.Get(busAskedKey(id)); seen || id == "" {
			return nil
		}
		st.Set(busAskedKey(id), "1")
		return inRun(st, Draft{Type: "attention.resolved", Subject: id, Data: map[string]any{"resolution": "answered"}})
	}
	labels, _ := st.Get(busFormKey(id))
	st.Del(busFormKey(id))
	values, structural := questionValues(gjson.GetBytes(props, "answers").Array(), labels)
	return ControlAnswered(st, key, "", map[string]any{"values": values}, map[string]any{"values": structural})
}

// questionRejected settles a rejected question: refused over control (a
// command noted the reject on it), the refusal is the command's answer,
// via control and caused by it; rejected in the agent's own UI, it is
// dismissed (nothing was answered).
func (p busProfile) questionRejected(props []byte, st *State) []Draft {
	id := Str(props, "requestID")
	key := busAttnKey(id)
	if _, pending := st.Get(attnPendingPrefix + key); pending {
		if option := noteRefused(st, key, busQuestionReject); option != "" {
			st.Del(busFormKey(id))
			return ControlAnswered(st, key, option, Data("option", option), nil)
		}
	}
	st.Del(attnNotePrefix + key)
	return p.settle(st, id, "dismissed")
}

// settle resolves a pending ask with resolution (a rejected question is
// dismissed: nothing was answered).
func (p busProfile) settle(st *State, id, resolution string) []Draft {
	key := busAttnKey(id)
	if _, pending := st.Get(attnPendingPrefix + key); !pending {
		return nil
	}
	st.Del(busFormKey(id))
	return []Draft{settleAttention(st, key, resolution, "")}
}

// sortedKeysWith returns st's keys with prefix, oldest touch first.
func sortedKeysWith(st *State, prefix string) []string {
	var ks []string
	for k := range st.Entries {
		if strings.HasPrefix(k, prefix) {
			ks = append(ks, k)
		}
	}
	sortByTouch(st, ks)
	return ks
}
