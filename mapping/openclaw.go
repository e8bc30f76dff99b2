package mapping

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// OpenClaw is the AEP-0002 Annex A.16 table for the OpenClaw Gateway
// (`openclaw` 2026.9.6, gateway protocol v4), fed by TransportOpenClaw: the
// read-only gateway client (`aep-hook follow openclaw`) that connects with
// scope operator.read and receives the gateway's broadcast event frames
// ({type:"event", event, payload, seq}). The Annex names six families;
// the project's reading of them against the real gateway (pinned in
// fixtures/openclaw/pins/openclaw.json):
//
//   - agent (the run's event stream, by stream): lifecycle start →
//     run.started (trigger schedule for heartbeat runs and cron sessions,
//     else user), lifecycle end → run.finished (the output tokens the run's
//     usage stream reported last), or run.cancelled when aborted, or run.failed when its
//     stop reason is error; lifecycle error → run.failed; run_status →
//     progress.status (phase); a tool item's start → tool.requested, its
//     end → tool.completed (status completed) or tool.failed; assistant
//     deltas only behind --deltas; other streams ride
//     x.openclaw.agent.<stream> (session.tool, the same call with its
//     arguments and result, rides x.openclaw.session.tool);
//   - chat (the UI's view of the same run): its final, aborted and error
//     states ride x.openclaw.chat.* (the run's terminal is the agent
//     lifecycle's; a second terminal would be a lie), deltas behind
//     --deltas, status phases are the agent stream's run_status again;
//   - session.message (the transcript): the user's and the assistant's
//     messages ride x.openclaw.message.user / .assistant, since message.*
//     stays reserved in AEP 0.1 (the A.12 / A.15 rule; AEP-0007 has no
//     registered schema yet);
//   - presence → agent.presence, health → agent.health (ok / failing),
//     heartbeat → agent.heartbeat, shutdown → agent.presence offline: the
//     gateway's own state, agent-scoped;
//   - tick is the transport's keepalive (every 30 s): nothing;
//   - everything else (sessions.changed, cron, ...) rides x.openclaw.*.
//
// The AEP session is the gateway's sessionKey (agent:<id>:<name>); frames
// without one (the gateway's own) go to the "gateway" lane.
func OpenClaw() Vendor {
	return Vendor{
		Name:      "openclaw",
		Summary:   "OpenClaw Gateway: the gateway's broadcast events (runs, their progress, the gateway's health and presence)",
		Transport: TransportOpenClaw,
		Identify:  openClawIdentify,
		Map:       openClawMap,
	}
}

// OpenClawGatewayLane is the session lane of frames no session owns.
const OpenClawGatewayLane = "gateway"

func openClawIdentify(m Moment) (string, string) {
	s := m.Facts.Session
	if s == "" {
		s = OpenClawGatewayLane
	}
	return m.Facts.Name, s
}

// Table-state keys (per session).
const (
	ocSeenKey    = "oc.session"
	ocRunPrefix  = "oc.run:"   // "open" or "done"
	ocTokPrefix  = "oc.usage:" // the run's output tokens so far
	ocModelKey   = "oc.model:" // the run's model
	ocToolPrefix = "oc.tool:"  // a tool call: "open" or "done"
	ocVendorName = "openclaw"
)

func openClawMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	p := []byte(gjson.GetBytes(raw, "payload").Raw)
	if len(p) == 0 {
		p = []byte("{}")
	}
	var ds []Draft
	if m.Facts.Session != "" {
		if _, seen := st.Get(ocSeenKey); !seen {
			st.Set(ocSeenKey, "1")
			ds = append(ds, Draft{Type: "session.started", Data: Data(
				"client", map[string]any{"name": ocVendorName}, "agent_id", Str(p, "agentId"))})
		}
	}
	run := m.Facts.Run
	switch m.Facts.Name {
	case "agent":
		return append(ds, ocAgent(m, st, p, run)...), nil
	case "chat":
		return append(ds, ocChat(m, p, run)...), nil
	case "session.message":
		return append(ds, ocMessage(p)...), nil
	case "presence":
		return append(ds, Draft{Type: "agent.presence", Data: Data("state", "online")}), nil
	case "shutdown":
		return append(ds, Draft{Type: "agent.presence", Data: Data("state", "offline")}), nil
	case "health":
		status := "ok"
		if r := gjson.GetBytes(p, "ok"); r.Exists() && !r.Bool() {
			status = "failing"
		}
		return append(ds, Draft{Type: "agent.health", Data: Data("status", status)}), nil
	case "heartbeat":
		return append(ds, Draft{Type: "agent.heartbeat", Data: map[string]any{}}), nil
	case "tick", "connect.challenge":
		return ds, nil
	case "session.tool":
		d := []byte(gjson.GetBytes(p, "data").Raw)
		return append(ds, Draft{Type: "x.openclaw.session.tool", Subject: Str(d, "toolCallId"), Run: run, Severity: debug,
			Data:   Data("phase", Str(d, "phase"), "name", Str(d, "name")),
			Levels: extLevels(redact.Metadata, "phase", "name")}), nil
	case "sessions.changed":
		return append(ds, Draft{Type: "x.openclaw.sessions.changed", Run: run, Severity: debug,
			Data:   Data("reason", Str(p, "reason"), "phase", Str(p, "phase")),
			Levels: extLevels(redact.Metadata, "reason", "phase")}), nil
	}
	return append(ds, Draft{Type: vendorEventType(ocVendorName, wireSegments(m.Facts.Name)...), Run: run,
		Severity: debug, Data: map[string]any{}}), nil
}

// ocTrigger is who started a run: the gateway's heartbeat and cron runs
// are scheduled, anything else a person's message.
func ocTrigger(m Moment, p []byte) string {
	if gjson.GetBytes(p, "isHeartbeat").Bool() || strings.HasPrefix(m.Facts.Session, "cron:") ||
		strings.Contains(m.Facts.Session, ":cron:") {
		return "schedule"
	}
	return "user"
}

// ocEnsureRun starts run at its first sight (a bridge attaching mid-run
// sees its later frames first).
func ocEnsureRun(m Moment, st *State, p []byte, run string) []Draft {
	if run == "" {
		return nil
	}
	if _, known := st.Get(ocRunPrefix + run); known {
		return nil
	}
	st.Set(ocRunPrefix+run, "open")
	return []Draft{{Type: "run.started", Run: run, Data: Data("trigger", ocTrigger(m, p))}}
}

func ocAgent(m Moment, st *State, p []byte, run string) []Draft {
	data := []byte(gjson.GetBytes(p, "data").Raw)
	stream := Str(p, "stream")
	switch stream {
	case "lifecycle":
		phase := Str(data, "phase")
		switch phase {
		case "start":
			return ocEnsureRun(m, st, p, run)
		case "model":
			if model := Str(data, "model"); model != "" && run != "" {
				st.Set(ocModelKey+run, model)
			}
			return nil
		case "end", "error":
			ds := ocEnsureRun(m, st, p, run)
			if state, _ := st.Get(ocRunPrefix + run); state == "done" || run == "" {
				return ds
			}
			st.Set(ocRunPrefix+run, "done")
			return append(ds, ocTerminal(st, run, phase, data))
		}
		return nil // finishing: the end follows
	case "run_status":
		ds := ocEnsureRun(m, st, p, run)
		if state, _ := st.Get(ocRunPrefix + run); state == "done" {
			return ds
		}
		return append(ds, Draft{Type: "progress.status", Run: run, Data: Data("phase", Str(data, "phase"))})
	case "usage":
		// The usage stream reports the run's count so far: the last
		// (largest) one is the run's.
		if n := gjson.GetBytes(data, "outputTokens"); n.Type == gjson.Number && run != "" {
			prev, _ := st.Get(ocTokPrefix + run)
			st.Set(ocTokPrefix+run, strconv.FormatInt(max(decimalValue(prev), n.Int()), 10))
		}
		return nil
	case "item":
		if Str(data, "kind") == "tool" {
			return append(ocEnsureRun(m, st, p, run), ocTool(st, run, data)...)
		}
	case "assistant":
		if !m.Deltas {
			return nil
		}
		return []Draft{{Type: "x.openclaw.agent.assistant", Subject: Str(data, "itemId"), Run: run, Severity: debug,
			Data: Data("delta", Str(data, "delta")), Levels: deltaLevels(redact.Redacted)}}
	}
	return []Draft{{Type: vendorEventType(ocVendorName, "agent", SnakeCase(stream)), Run: run, Severity: debug,
		Data:   Data("phase", Str(data, "phase"), "name", Str(data, "name")),
		Levels: extLevels(redact.Metadata, "phase", "name")}}
}

// ocTool maps a tool item of the agent stream: its start requests the
// call, its end completes it (status completed) or fails it (any other
// status), once per call id.
func ocTool(st *State, run string, data []byte) []Draft {
	name, call := Str(data, "name"), Str(data, "toolCallId")
	if name == "" {
		name = "unknown"
	}
	key := ocToolPrefix + call
	ref := Data("tool", ToolRef(name, call))
	switch Str(data, "phase") {
	case "start":
		if _, seen := st.Get(key); seen && call != "" {
			return nil
		}
		st.Set(key, "open")
		return []Draft{{Type: "tool.requested", Subject: name, Run: run, Data: ref}}
	case "end":
		if state, _ := st.Get(key); state == "done" && call != "" {
			return nil
		}
		st.Set(key, "done")
		if status := Str(data, "status"); status != "completed" {
			ref["error"] = Data("type", firstNonEmpty(status, "error"))
			return []Draft{{Type: "tool.failed", Subject: name, Run: run, Data: ref}}
		}
		return []Draft{{Type: "tool.completed", Subject: name, Run: run, Data: ref}}
	}
	return nil
}

// ocTerminal is the run's one terminal from its lifecycle end or error.
func ocTerminal(st *State, run, phase string, data []byte) Draft {
	tokens, _ := st.Get(ocTokPrefix + run)
	model, _ := st.Get(ocModelKey + run)
	st.Del(ocTokPrefix + run)
	st.Del(ocModelKey + run)
	stop := Str(data, "stopReason")
	switch {
	case phase == "error" || stop == "error":
		msg := firstNonEmpty(Str(data, "error"), Str(data, "errorMessage"), Str(data, "error.message"))
		return Draft{Type: "run.failed", Run: run, Data: Data("reason", "error",
			"error", Data("type", firstNonEmpty(Str(data, "errorKind"), "error"), "message", msg))}
	case gjson.GetBytes(data, "aborted").Bool() || stop == "aborted":
		return Draft{Type: "run.cancelled", Run: run, Data: map[string]any{}}
	}
	d := Data("summary", Str(data, "terminalReply.text"), "gen_ai.request.model", model)
	if tokens != "" {
		d["gen_ai.usage.output_tokens"] = decimalValue(tokens)
	}
	return Draft{Type: "run.finished", Run: run, Data: d}
}

func ocChat(m Moment, p []byte, run string) []Draft {
	switch state := Str(p, "state"); state {
	case "final":
		return []Draft{{Type: "x.openclaw.chat.final", Run: run, Severity: debug,
			Data:   Data("stop_reason", Str(p, "stopReason"), "text", ocText(p, "message.content")),
			Levels: map[string]redact.Level{"stop_reason": redact.Metadata, "text": redact.Redacted}}}
	case "aborted", "error":
		return []Draft{{Type: "x.openclaw.chat." + state, Run: run, Severity: debug,
			Data:   Data("error_kind", Str(p, "errorKind"), "stop_reason", Str(p, "stopReason")),
			Levels: extLevels(redact.Metadata, "error_kind", "stop_reason")}}
	case "delta":
		if !m.Deltas {
			return nil
		}
		return []Draft{{Type: "x.openclaw.chat.delta", Run: run, Severity: debug,
			Data: Data("delta", Str(p, "deltaText")), Levels: deltaLevels(redact.Redacted)}}
	}
	return nil // status: the agent stream's run_status says it
}

// ocText joins the text of a message's content (a string, or parts with
// type text).
func ocText(p []byte, path string) string {
	c := gjson.GetBytes(p, path)
	if c.Type == gjson.String {
		return c.Str
	}
	var parts []string
	for _, x := range c.Array() {
		if x.Get("type").String() == "text" {
			parts = append(parts, x.Get("text").String())
		}
	}
	return strings.Join(parts, "\n\n")
}

func ocMessage(p []byte) []Draft {
	role := Str(p, "message.role")
	id := Str(p, "message.__openclaw.id")
	run := Str(p, "message.__openclaw.runId")
	switch role {
	case "user":
		return []Draft{{Type: "x.openclaw.message.user", Subject: id, Run: run, Severity: debug,
			Data:   Data("text", ocText(p, "message.content")),
			Levels: map[string]redact.Level{"text": redact.Redacted}}}
	case "assistant":
		return []Draft{{Type: "x.openclaw.message.assistant", Subject: id, Run: run, Severity: debug,
			Data: Data("text", ocText(p, "message.content"), "model", Str(p, "message.model"),
				"provider", Str(p, "message.provider"), "stop_reason", Str(p, "message.stopReason")),
			Levels: map[string]redact.Level{"text": redact.Redacted, "model": redact.Metadata,
				"provider": redact.Metadata, "stop_reason": redact.Metadata}}}
	}
	return []Draft{{Type: vendorEventType(ocVendorName, "message", SnakeCase(role)), Subject: id, Run: run,
		Severity: debug, Data: map[string]any{}}}
}

// decimalValue is the count in s, 0 when s is not one.
func decimalValue(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}
