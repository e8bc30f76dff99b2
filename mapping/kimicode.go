package mapping

import (
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// KimiCode is the AEP-0002 Annex A.6 table for the Kimi Code CLI external
// hooks (sixteen events). Runs are synthesized per UserPromptSubmit and closed
// by Stop, StopFailure or the vendor's own Interrupt; a run left open drains
// as run.cancelled at the next boundary. tool_call_id pairs the tool trio and
// the out-of-band permission pair; turn_id never becomes the run id, and cwd
// never rides.
func KimiCode() Vendor {
	return Vendor{
		Name:     "kimi-code",
		Summary:  "Kimi Code CLI external hooks (global config.toml), observe-only",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      mapKimiCode,
		// Kimi Code adds a hook's stdout to the model's input whenever it
		// is not JSON with a "message": even "{}" becomes a
		// <hook_result> user message. Only an empty stdout (exit 0) is
		// neutral on every event.
		Reply: func(string) []byte { return nil },
	}
}

// kimiSeverities are the vendor notification severities that are also AEP
// severities (AEP-0001 §8.1) and so may set the envelope's.
var kimiSeverities = map[string]bool{"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true}

func mapKimiCode(m Moment, st *State) ([]Draft, error) {
	const vendor = "kimi-code"
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_call_id")
	switch hook {
	case "SessionStart":
		return []Draft{{Type: "session.started", Data: Data("trigger", Str(raw, "source"))}}, nil
	case "SessionEnd":
		return sessionEnd(st, Str(raw, "reason")), nil
	case "UserPromptSubmit":
		prompt := kimiPromptText(raw)
		if gjson.GetBytes(raw, "is_steer").Bool() {
			// A steer rides the running turn: no run boundary exists here.
			return inRun(st, Draft{
				Type:   "x.kimi-code.run.steer_submitted",
				Data:   Data("prompt", prompt),
				Levels: map[string]redact.Level{"prompt": redact.Redacted},
			}), nil
		}
		return promptRun(m, st, prompt), nil
	case "Stop":
		return endRun(m, st, "run.finished", map[string]any{}), nil
	case "StopFailure":
		errType := Str(raw, "error_type")
		reason := errType
		if reason == "" {
			reason = "unknown"
		}
		return endRun(m, st, "run.failed", Data(
			"reason", reason,
			"error", omitEmpty(Data("type", errType, "message", Str(raw, "error_message"))),
		)), nil
	case "Interrupt":
		// Fired only for the user's own cancellation (reason "cancelled").
		return endRun(m, st, "run.cancelled", map[string]any{"by": "user"}), nil
	case "PreToolUse":
		return inRun(st, toolRequested(raw, tool, call, "tool_input")), nil
	case "PostToolUse":
		return inRun(st, toolCompleted(raw, tool, call, "tool_output")), nil
	case "PostToolUseFailure":
		errType := Str(raw, "error.name")
		msg := Str(raw, "error.message")
		if s := Str(raw, "error"); s != "" {
			msg = s
		}
		if errType == "" {
			errType = "tool_error"
		}
		return inRun(st, toolFailed(tool, call, errType, msg)), nil
	case "PermissionRequest":
		return inRun(st, kimiPermissionRequest(raw, st, tool, call)), nil
	case "PermissionResult":
		return inRun(st, kimiPermissionResult(raw, st, tool, call)...), nil
	case "SubagentStart":
		// The subagent's prompt has no field on delegation.* and does not
		// ride; its session is the unknown lane (no session_id).
		return inRun(st, Draft{Type: "delegation.subagent.started", Subject: Str(raw, "agent_name"), Data: map[string]any{}}), nil
	case "SubagentStop":
		return inRun(st, Draft{Type: "delegation.subagent.stopped", Subject: Str(raw, "agent_name"), Data: map[string]any{}}), nil
	case "PreCompact":
		// The post moment is the truthful carrier; the pre moment degrades
		// to the fallback with its metadata-grade facts, never drops.
		return inRun(st, Draft{
			Type:   Fallback(vendor, "session", hook),
			Data:   Data("trigger", Str(raw, "trigger"), "token_count", extInt(raw, "token_count")),
			Levels: map[string]redact.Level{"trigger": redact.Metadata, "token_count": redact.Metadata},
		}), nil
	case "PostCompact":
		return inRun(st, Draft{Type: "session.compacted", Data: Data(
			"trigger", Str(raw, "trigger"),
			"estimated_token_count", extInt(raw, "estimated_token_count"),
		)}), nil
	case "Notification":
		// Background-task status only, never an attention loop.
		d := Draft{
			Type:    "progress.status",
			Subject: Str(raw, "notification_type"),
			Data:    Data("severity", Str(raw, "severity"), "message", Str(raw, "title")),
		}
		if sev := Str(raw, "severity"); kimiSeverities[sev] {
			d.Severity = sev
		}
		return inRun(st, d), nil
	}
	return inRun(st, fallback(vendor, hook)), nil
}

// kimiPromptText joins the text parts of the vendor's content-part prompt
// array (a plain string prompt passes as is).
func kimiPromptText(raw []byte) string {
	p := gjson.GetBytes(raw, "prompt")
	if p.Type == gjson.String {
		return p.Str
	}
	var parts []string
	for _, part := range p.Array() {
		if part.Get("type").String() == "text" {
			parts = append(parts, part.Get("text").String())
		}
	}
	return strings.Join(parts, "\n")
}

// kimiPermission is the table-state key remembering an observed permission
// request until its result arrives: the shared pending-attention entry, so
// a session that ends first dismisses it (AEP-0002 §7 rule 2).
func kimiPermission(call string) string { return attnPendingPrefix + "attn:" + call }

// kimiPermissionRequest observes the vendor's own approval prompt opening:
// kind permission, answered out of band, no options claimed (the vendor's TUI
// owns the choice surface), cause-linked to the call's tool.requested.
func kimiPermissionRequest(raw []byte, st *State, tool, call string) Draft {
	prompt := Str(raw, "display")
	if prompt == "" {
		prompt = "Permission requested: " + tool
	}
	d := Draft{
		Type:    "attention.requested",
		Subject: tool,
		Data: map[string]any{
			"kind":        "permission",
			"prompt":      prompt,
			"respond_via": []any{"oob"},
		},
	}
	if call != "" {
		d.Mark = "attn:" + call
		d.CauseRef = "tool:" + call
		st.Set(kimiPermission(call), currentRun(st))
	}
	return d
}

// kimiPermissionResult maps the vendor's decision on an observed prompt:
// approved/rejected are answers (decision verbatim, feedback as text);
// cancelled resolves dismissed without an answer; error is an internal gate
// failure and degrades to the fallback. When the request was observed in this
// session, the answer's companions follow: attention.resolved, and for a
// rejection the enforcement fact tool.denied by the runtime.
func kimiPermissionResult(raw []byte, st *State, tool, call string) []Draft {
	attn := "attn:" + call
	_, seen := st.Get(kimiPermission(call))
	if call == "" {
		seen = false
	}
	decision := Str(raw, "decision")
	switch decision {
	case "approved", "rejected":
		answer := Draft{
			Type:       "attention.answered",
			SubjectRef: attn,
			CauseRef:   attn,
			Mark:       attn + ":answer",
			Data: Data(
				"answer", Data("option", decision, "text", Str(raw, "feedback")),
				"via", "oob",
				"label", Str(raw, "selected_label"),
			),
		}
		ds := []Draft{answer}
		if !seen {
			return ds
		}
		st.Del(kimiPermission(call))
		if decision == "rejected" {
			ds = append(ds, Draft{
				Type:     "tool.denied",
				Subject:  tool,
				CauseRef: attn + ":answer",
				Data:     map[string]any{"tool": ToolRef(tool, call), "by": "runtime"},
			})
		}
		return append(ds, Draft{
			Type:       "attention.resolved",
			SubjectRef: attn,
			CauseRef:   attn + ":answer",
			Data:       map[string]any{"resolution": "answered"},
		})
	case "cancelled":
		st.Del(kimiPermission(call))
		return []Draft{{
			Type:       "attention.resolved",
			SubjectRef: attn,
			CauseRef:   attn,
			Data:       map[string]any{"resolution": "dismissed"},
		}}
	}
	return []Draft{fallback("kimi-code", "PermissionResult")}
}
