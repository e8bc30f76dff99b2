package mapping

import (
	"strings"
	"sync"

	"github.com/aep-hook/aep-hook/redact"
)

// VSCodeOtel is the VS Code agent's OTel channel (AEP-0002 Annex A.5, pinned
// by vscode-otel.json): the copilot_chat.* LogRecord family behind the opt-in
// github.copilot.chat.otel.enabled setting, one record per moment, decoded
// by the OTLP sidecar (Facts.Record, see OTelRecord). Identity: session is
// the RESOURCE attribute session.id (one session per exporter process); no
// runs are synthesized. Companion mode (the default) emits only
// x.vscode.otel.*; primary mode adds session.started and
// tool.completed/tool.failed. Two vendor ceilings hold in both modes:
// tool.denied and session.ended are never emitted (neither reaches this
// channel).
func VSCodeOtel() Vendor {
	return Vendor{
		Name:      "vscode-otel",
		Agent:     "vscode",
		Summary:   "VS Code agent (Copilot Chat) OpenTelemetry log records (OTLP sidecar channel; `aep-hook otel`).",
		Transport: TransportOTLP,
		Identify: func(m Moment) (string, string) {
			return otelIdentify(m, "session.id", true)
		},
		Map:    func(m Moment, _ *State) ([]Draft, error) { return vscodeOtelProfileOnce().mapRecord(m) },
		Detect: vscodeOtelDetect,
	}
}

// vscodeOtelProfileOnce is the VS Code profile, built on first use (see
// codexOtelProfileOnce). Never modified.
var vscodeOtelProfileOnce = sync.OnceValue(vscodeOtelProfile)

// vscodeOtelDetect claims a Copilot service and copilot_chat.* records
// (strong), and a resource stamped with session.id (weak).
func vscodeOtelDetect(res map[string]any, rec *OTelRecord) Match {
	if rec == nil {
		if strings.Contains(strings.ToLower(attrStr(res, "service.name")), "copilot") {
			return MatchStrong
		}
		if _, ok := res["session.id"]; ok {
			return MatchWeak
		}
		return NoMatch
	}
	if strings.HasPrefix(rec.name(), "copilot_chat.") {
		return MatchStrong
	}
	return NoMatch
}

// vscodeOtelProfile is the VS Code profile: the known record family (vendor
// source at the pinned tag), identity attributes and capture levels.
func vscodeOtelProfile() *otelProfile {
	md, rd, fl := redact.Metadata, redact.Redacted, redact.Full
	return &otelProfile{
		prefix: "x.vscode.otel.",
		known: map[string]string{
			"copilot_chat.session.start":                "session.start",
			"copilot_chat.tool.call":                    "tool.call",
			"copilot_chat.agent.turn":                   "agent.turn",
			"copilot_chat.edit.feedback":                "edit.feedback",
			"gen_ai.client.inference.operation.details": "inference_details",
		},
		identity: map[string]bool{"event.name": true, "session.id": true},
		levels: map[string]redact.Level{
			// metadata-grade: models, names, tokens, counts, outcomes
			"gen_ai.request.model": md, "gen_ai.response.model": md, "gen_ai.agent.name": md,
			"gen_ai.operation.name": md, "gen_ai.provider.name": md, "gen_ai.tool.name": md,
			"gen_ai.tool.call.id": md, "gen_ai.response.id": md, "gen_ai.response.finish_reasons": md,
			"gen_ai.usage.input_tokens": md, "gen_ai.usage.output_tokens": md,
			"gen_ai.usage.cache_read.input_tokens": md, "gen_ai.usage.cache_creation.input_tokens": md,
			"gen_ai.conversation.id": md, "duration_ms": md, "success": md, "error.type": md,
			"turn.index": md, "tool_call_count": md, "outcome": md, "language_id": md,
			"participant": md, "request_id": md, "edit_surface": md,
			"has_remaining_edits": md, "is_notebook": md,
			// content: messages and error text redacted+, tool I/O and PII full
			"gen_ai.input.messages": rd, "gen_ai.output.messages": rd,
			"gen_ai.system_instructions": rd, "error.message": rd,
			"gen_ai.tool.call.arguments": fl, "gen_ai.tool.call.result": fl,
			"gen_ai.tool.definitions": fl, "user.email": fl,
		},
		primary: vscodeOtelPrimary,
	}
}

// vscodeOtelPrimary is the primary-mode core subset of the VS Code channel:
// the session frame and tool-call outcomes, nothing else.
func vscodeOtelPrimary(r *OTelRecord, name string) ([]Draft, bool) {
	a := r.attrs()
	switch name {
	case "copilot_chat.session.start":
		return []Draft{otelSessionStarted("vscode", a.str("gen_ai.request.model"))}, true
	case "copilot_chat.tool.call":
		tool := otelToolRef(r, "gen_ai.tool.name", "gen_ai.tool.call.id")
		subject := a.str("gen_ai.tool.name")
		d := Data("tool", tool)
		typ := "tool.completed"
		if otelFailed(a, "success", "error.type") {
			typ = "tool.failed"
			et := a.str("error.type")
			if et == "" {
				et = "tool_error"
			}
			d["error"] = Data("type", et, "message", a.str("error.message"))
		}
		if n, ok := attrNumber(a.val("duration_ms")); ok {
			d["duration_ms"] = n
		}
		return []Draft{{Type: typ, Subject: subject, Data: d}}, true
	}
	return nil, false
}
