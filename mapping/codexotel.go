package mapping

import (
	"strings"
	"sync"

	"github.com/aep-hook/aep-hook/redact"
)

// CodexOtel is the Codex OTel channel (AEP-0002 Annex A.2, pinned by
// codex-otel.json): the LogRecords Codex's [otel] config exports, one per
// moment, decoded by the OTLP sidecar (Facts.Record, see OTelRecord).
// Identity: session is the record's conversation.id; no runs are
// synthesized. Companion mode (the default) emits only x.codex.otel.*;
// primary mode adds the core subset (session.started,
// tool.completed/tool.failed, tool.denied for config or automation denies
// only). It is the receiver's default profile: a resource no vendor claims
// comes here, to the unknown rule.
func CodexOtel() Vendor {
	return Vendor{
		Name:      "codex-otel",
		Agent:     "codex",
		Summary:   "Codex OpenTelemetry log records (OTLP sidecar channel; `aep-hook otel`).",
		Transport: TransportOTLP,
		Identify: func(m Moment) (string, string) {
			return otelIdentify(m, "conversation.id", false)
		},
		Map:    func(m Moment, st *State) ([]Draft, error) { return codexOtelMap(codexOtelProfileOnce(), m, st) },
		Detect: codexOtelDetect,
	}
}

// codexOtelProfileOnce is the Codex profile, built on first use: every
// Lookup builds every table, hook processes included, and the profile's
// maps cost more than the rest of the registry together. Never modified.
var codexOtelProfileOnce = sync.OnceValue(codexOtelProfile)

// codexOtelDetect claims a codex* service, records of the codex.* family
// (strong) or stamped with conversation.id (weak), and, as the default
// profile, any resource no other vendor claims.
func codexOtelDetect(res map[string]any, rec *OTelRecord) Match {
	if rec == nil {
		if strings.HasPrefix(strings.ToLower(attrStr(res, "service.name")), "codex") {
			return MatchStrong
		}
		return MatchFallback
	}
	if strings.HasPrefix(rec.name(), "codex.") {
		return MatchStrong
	}
	if rec.attrs().has("conversation.id") {
		return MatchWeak
	}
	return NoMatch
}

// codexOtelProfile is the Codex profile: its known event names (vendor
// telemetry documentation), identity attributes and capture levels.
func codexOtelProfile() *otelProfile {
	md, rd, fl := redact.Metadata, redact.Redacted, redact.Full
	return &otelProfile{
		prefix: "x.codex.otel.",
		known: map[string]string{
			"codex.conversation_starts": "conversation_starts",
			"codex.api_request":         "api_request",
			"codex.sse_event":           "sse_event",
			"codex.websocket_request":   "websocket_request",
			"codex.websocket_event":     "websocket_event",
			"codex.user_prompt":         "user_prompt",
			"codex.tool_decision":       "tool_decision",
			"codex.tool_result":         "tool_result",
			"codex.startup_phase":       "startup_phase", // 0.171: thread start-up timings
			"codex.turn_ttft":           "turn_ttft",     // 0.171: time to a turn's first token
		},
		identity: map[string]bool{
			"event.name": true, "event.timestamp": true, "conversation.id": true,
			"app.version": true, "originator": true, "terminal.type": true,
		},
		levels: map[string]redact.Level{
			// metadata-grade: models, policies, statuses, durations, counts
			"model": md, "slug": md, "approval_policy": md, "sandbox_policy": md,
			"provider_name": md, "reasoning_effort": md, "reasoning_summary": md,
			"context_window": md, "max_output_tokens": md, "auto_compact_token_limit": md,
			"mcp_servers": md, "active_profile": md, "auth_mode": md,
			"prompt_length": md, "tool_name": md, "call_id": md, "decision": md,
			"source": md, "success": md, "duration_ms": md, "status": md,
			"http.response.status_code": md, "attempt": md, "attempts": md, "kind": md,
			"event.kind":        md, // sse_event's kind as Codex 0.169 names it (the pin says kind)
			"input_token_count": md, "output_token_count": md, "cached_token_count": md,
			"reasoning_token_count": md, "tool_token_count": md,
			// Codex 0.171: structural and metadata-grade attributes
			"cache_write_token_count": md, "ttft_ms": md, "endpoint": md,
			"tool_namespace": md, "tool_result_seq": md, "output_truncated": md,
			"agent_name": md, "mcp_server": md, "startup.phase": md, "startup.status": md,
			"config.legacy_multi_agent_disabled_sources": md,
			"auth.env_codex_api_key_enabled":             md, "auth.env_codex_api_key_present": md,
			"auth.env_openai_api_key_present": md, "auth.env_provider_key_name": md,
			"auth.env_provider_key_present": md, "auth.env_refresh_token_url_override_present": md,
			"auth.header_attached": md, "auth.header_name": md, "auth.retry_after_unauthorized": md,
			// what the sidecar adds to a Codex internal thread's records
			"thread_id": md, "thread_kind": md,
			// an MCP server's origin may be a URL with credentials in it
			"mcp_server_origin": rd,
			// content: prompt and error text redacted+, tool I/O and PII full
			"prompt": rd, "error": rd, "error.message": rd,
			"arguments": fl, "output": fl, "user.email": fl, "user.account_id": fl,
		},
	}
}
