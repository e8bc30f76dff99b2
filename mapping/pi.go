package mapping

import (
	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// Pi is the AEP-0002 Annex A.12 table for pi's extension bus
// (@earendil-works/pi-coding-agent; pinned at 0.80.6, observed with
// 1.6.0), fed by the extension shipped in the binary (TransportPi). One
// moment is one bus event in Raw, its type in Facts.Name and the pi session
// id in Facts.Session.
//
// A run is one agent loop: agent_start opens it (a second start while one is
// open keeps the live run), agent_end closes it on the last assistant
// message's stopReason (error → run.failed, aborted → run.cancelled with no
// claim of who, anything else → run.finished). An automatic retry is a new
// loop and so a new run; agent_settled, the "nothing more will run" fact,
// rides x.pi.agent.settled. turn_start/turn_end are the run's steps, the
// envelope step being the vendor's turnIndex (which restarts with every
// loop). toolCallId pairs the tool trio and the typed isError splits
// completed from failed. Message boundaries and machinery facts stay in
// x.pi.* at debug (message.user.submitted and message.agent.replied are
// reserved); stream updates only behind the deltas opt-in. No attention.*
// claims of pi's own: approvals are not bus-visible (1.6.0's
// ui_prompt_start/end say only that pi waits on an extension's dialog:
// x.pi.ui_prompt.*). The one request is aep-hook's opt-in tool_call gate
// (pigate.go), raised only while the control loop holds the call live.
func Pi() Vendor {
	return Vendor{
		Name:      "pi",
		Summary:   "pi extension-bus events, forwarded by the extension `aep-hook plugin pi` prints; tool_call an opt-in control gate",
		Transport: TransportPi,
		Identify:  identifyFacts,
		Map:       mapPiResumable,
		Seed:      seedPi,
		Hold:      piHold,
	}
}

// Table-state keys of the pi table: the session's AEP start and end seen,
// and the AEP session its events go to after a resume.
const (
	piStarted = "pi.started"
	piEnded   = "pi.ended"
	piAEP     = "pi.aep"
)

// mapPiResumable maps a moment and addresses its drafts to the AEP
// session the pi session is in now. pi resumes a session under its old id
// (--resume, --continue, /resume), but an AEP session ends once: a
// session_start after the session's end opens a new AEP session,
// "{id}~r{nonce}", whose session.started says trigger resume and names the
// session it continues (resumed_from); the pi session's later events go
// there, until the next resume.
func mapPiResumable(m Moment, st *State) ([]Draft, error) {
	if _, ended := st.Get(piEnded); ended && m.Facts.Name == "session_start" {
		prev, ok := st.Get(piAEP)
		if !ok {
			prev = m.Facts.Session
		}
		st.SetOwn(piAEP, m.Facts.Session+"~r"+m.Nonce)
		st.Del(piEnded)
		st.Del(piStarted)
		st.Del(stateRun)
		st.Del(stateLastRun)
		ds, err := mapPi(m, st)
		for i := range ds {
			if ds[i].Type == "session.started" {
				ds[i].Data["trigger"] = "resume"
				ds[i].Data["resumed_from"] = prev
			}
		}
		return piAddress(ds, st), err
	}
	ds, err := mapPi(m, st)
	return piAddress(ds, st), err
}

// piAddress sends drafts to the resumed AEP session, if there is one.
func piAddress(ds []Draft, st *State) []Draft {
	if aep, ok := st.Get(piAEP); ok {
		for i := range ds {
			ds[i].Session = aep
		}
	}
	return ds
}

// seedPi prepares what the pins presume: the session already started, and
// for a loop's end, the loop's run open.
func seedPi(_ []byte, m Moment, st *State) {
	if m.Facts.Name != "session_start" {
		st.Set(piStarted, "1")
	}
	if m.Facts.Name == "agent_end" {
		sessionRuns.begin(st, "seeded")
	}
}

func mapPi(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	typ := m.Facts.Name
	switch typ {
	case "session_start":
		if _, ok := st.Get(piStarted); ok {
			// pi 0.80.6 fires session_start twice for a new session.
			return nil, nil
		}
		st.Set(piStarted, "1")
		return []Draft{{Type: "session.started", Data: Data(
			"client", map[string]any{"name": "pi"},
			"reason", Str(raw, "reason"),
		)}}, nil
	case "session_shutdown":
		if _, ok := st.Get(piEnded); ok {
			return nil, nil
		}
		st.Set(piEnded, "1")
		// Every teardown reason is orderly: the schema's normal, the
		// vendor's word beside it. A loop still running is cut short, and
		// a gate request still open (its held run killed) is dismissed.
		ds := append(dismissPending(st), drainRun(st)...)
		return append(ds, Draft{Type: "session.ended", Data: Data("reason", "normal", "vendor_reason", Str(raw, "reason"))}), nil
	case "session_compact":
		return inRun(st, Draft{Type: "session.compacted", Data: Data(
			"reason", Str(raw, "reason"),
			"will_retry", extBool(raw, "willRetry"),
		)}), nil
	case "agent_start":
		if currentRun(st) != "" {
			return nil, nil // a duplicate open keeps the live run
		}
		sessionRuns.begin(st, m.Nonce)
		return []Draft{{Type: "run.started", Run: m.Nonce, Data: map[string]any{}}}, nil
	case "agent_end":
		return piAgentEnd(m, st), nil
	case "agent_settled":
		// After the loop's end: the settlement of the whole sequence of
		// loops (a retry's included), no one run's.
		return []Draft{piExt("agent", "settled", "", Data("aborted", extBool(raw, "aborted")), redact.Metadata)}, nil
	case "turn_start", "turn_end":
		t := "run.step.started"
		if typ == "turn_end" {
			t = "run.step.finished"
		}
		// turn_end's toolResults are not re-emitted: the tool trio has them.
		return inRun(st, Draft{Type: t, Step: extStep(raw, "turnIndex"), Data: map[string]any{}}), nil
	case "message_start":
		if Str(raw, "message.role") != "user" {
			return nil, nil // the assistant boundary is taken once, at its end
		}
		return inRun(st, Draft{
			Type: "x.pi.message.submitted", Severity: debug,
			Data:   Data("content_digest", textDigest(raw, "message.content"), "content", Value(raw, "message.content")),
			Levels: map[string]redact.Level{"content_digest": redact.Metadata, "content": redact.Redacted},
		}), nil
	case "message_update":
		if !m.Deltas {
			return nil, nil
		}
		return inRun(st, Draft{
			Type: "x.pi.message.delta", Severity: debug,
			Data:   Data("kind", Str(raw, "assistantMessageEvent.type"), "delta", Value(raw, "assistantMessageEvent.delta")),
			Levels: map[string]redact.Level{"kind": redact.Metadata, "delta": redact.Redacted},
		}), nil
	case "message_end":
		msg := gjson.GetBytes(raw, "message")
		if msg.Get("role").String() != "assistant" {
			return nil, nil // toolResult messages belong to the tool trio
		}
		d := Data(
			"stop_reason", Str(raw, "message.stopReason"),
			"gen_ai.usage.input_tokens", extInt(raw, "message.usage.input"),
			"gen_ai.usage.output_tokens", extInt(raw, "message.usage.output"),
			"content_digest", textDigest(raw, "message.content"),
			"content", Value(raw, "message.content"),
		)
		return inRun(st, Draft{
			Type: "x.pi.message.replied", Severity: debug, Data: d,
			Levels: map[string]redact.Level{
				"stop_reason": redact.Metadata, "gen_ai.usage.input_tokens": redact.Metadata,
				"gen_ai.usage.output_tokens": redact.Metadata, "content_digest": redact.Metadata,
				"content": redact.Redacted,
			},
		}), nil
	case "tool_execution_start":
		return inRun(st, toolRequested(raw, Str(raw, "toolName"), Str(raw, "toolCallId"), "args")), nil
	case "tool_execution_update":
		if !m.Deltas {
			return nil, nil
		}
		name := Str(raw, "toolName")
		return inRun(st, Draft{
			Type: "x.pi.tool.update", Subject: name, Severity: debug,
			Data: Data("tool", ToolRef(name, Str(raw, "toolCallId")),
				"partial_digest", extDigest(raw, "partialResult"), "partial", Value(raw, "partialResult")),
			Levels: map[string]redact.Level{"tool": redact.Metadata, "partial_digest": redact.Metadata, "partial": redact.Redacted},
		}), nil
	case "tool_call":
		// Only the gate's held run hands pi's tool_call over; observed
		// (no relay took it) it adds nothing to tool_execution_start.
		if !m.Control {
			return nil, nil
		}
		return piGateRequest(raw, st), nil
	case "aep_gate":
		// Not pi's: the extension's own note on its gate.
		return inRun(st, piGateReleased(raw, st)...), nil
	case "tool_execution_end":
		name, call := Str(raw, "toolName"), Str(raw, "toolCallId")
		settled, gated := piGateEnd(raw, st)
		if gated != nil {
			if gated.Type == "tool.failed" {
				*gated = withData(*gated, "duration_ms", extInt(raw, "durationMs"))
			}
			return inRun(st, append(settled, *gated)...), nil
		}
		var d Draft
		if gjson.GetBytes(raw, "isError").Bool() {
			// The vendor's own typed flag, never inferred; the error's
			// text is the result's, gated at redacted.
			d = toolFailed(name, call, "error", piResultText(raw))
		} else {
			d = toolCompleted(raw, name, call, "result")
		}
		return inRun(st, append(settled, withData(d, "duration_ms", extInt(raw, "durationMs")))...), nil
	case "session_info_changed":
		return inRun(st, piExt("session", "info", "", Data("name", Str(raw, "name")), redact.Redacted)), nil
	case "session_tree":
		return inRun(st, piExt("session", "tree", "", nil, redact.Metadata)), nil
	case "model_select":
		return inRun(st, piExt("model", "select", "", Data("source", Str(raw, "source"), "model", Str(raw, "model.id")), redact.Metadata)), nil
	case "thinking_level_select":
		return inRun(st, piExt("thinking", "select", "", Data("level", Str(raw, "level")), redact.Metadata)), nil
	case "session_compact_failed":
		return inRun(st, piExt("session", "compact_failed", "", Data(
			"reason", Str(raw, "reason"), "aborted", extBool(raw, "aborted"), "will_retry", extBool(raw, "willRetry"),
		), redact.Metadata)), nil
	case "ui_prompt_start", "ui_prompt_end":
		leaf := "start"
		if typ == "ui_prompt_end" {
			leaf = "end"
		}
		d := piExt("ui_prompt", leaf, "", Data("kind", Str(raw, "kind"), "title", Str(raw, "title")), redact.Metadata)
		d.Levels["title"] = redact.Redacted
		return inRun(st, d), nil
	}
	// A future bus member: two segments deep in x.pi.*, nothing of its
	// unknown payload.
	return inRun(st, piExt("event", SnakeCase(typ), "", nil, redact.Metadata)), nil
}

// piAgentEnd closes the loop's run on the last assistant message's typed
// stopReason; a loop with no assistant message is a bare completion, and
// dropped when no run is open.
func piAgentEnd(m Moment, st *State) []Draft {
	raw := m.Raw
	var last gjson.Result
	msgs := gjson.GetBytes(raw, "messages").Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() == "assistant" {
			last = msgs[i]
			break
		}
	}
	if !last.Exists() && currentRun(st) == "" {
		return nil
	}
	run := closeRun(m, st)
	if !last.Exists() {
		return []Draft{{Type: "run.finished", Run: run, Data: map[string]any{}}}
	}
	reason := last.Get("stopReason").String()
	switch reason {
	case "error":
		return []Draft{{Type: "run.failed", Run: run, Data: Data(
			"reason", "error", "stop_reason", reason,
			"error", Data("type", "error", "message", last.Get("errorMessage").String()),
		)}}
	case "aborted":
		// Esc and a programmatic abort look alike here: no "by" claim.
		return []Draft{{Type: "run.cancelled", Run: run, Data: Data("stop_reason", reason)}}
	}
	lr := []byte(last.Raw)
	return []Draft{{Type: "run.finished", Run: run, Data: Data(
		"stop_reason", reason,
		"gen_ai.usage.input_tokens", extInt(lr, "usage.input"),
		"gen_ai.usage.output_tokens", extInt(lr, "usage.output"),
	)}}
}

// piResultText is a tool result's text parts joined (the error text of a
// failed call), "" when it has none.
func piResultText(raw []byte) string {
	r := gjson.GetBytes(raw, "result")
	if r.Type == gjson.String {
		return r.Str
	}
	return contentText(r.Get("content"))
}

// piExt is an x.pi.{family}.{leaf} event at debug with every payload field
// declared at level.
func piExt(family, leaf, run string, data map[string]any, level redact.Level) Draft {
	if data == nil {
		data = map[string]any{}
	}
	lv := make(map[string]redact.Level, len(data))
	for k := range data {
		lv[k] = level
	}
	return Draft{Type: vendorEventType("pi", family, leaf), Run: run, Severity: debug, Data: data, Levels: lv}
}
