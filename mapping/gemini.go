package mapping

import (
	"github.com/aep-hook/aep-hook/redact"
)

// Gemini is the AEP-0002 Annex A.3 table for Gemini CLI hooks: eleven hooks,
// eight on core types and the three model-plane hooks in x.gemini-cli.*.
// Gemini exposes no turn id and no tool call id: runs are synthesized per
// BeforeAgent/AfterAgent pair and tool outcomes pair with their request by
// tool name and args digest. Gemini CLI 0.61.0 fires AfterAgent for an Esc
// interrupt too (prompt_response "[no response text]"), so a run with no
// AfterAgent was ended by an API failure or a crash: it keeps no terminal.
func Gemini() Vendor {
	const name = "gemini-cli"
	return Vendor{
		Name:     name,
		Summary:  "Gemini CLI command hooks (settings.json), observe-only",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      resumable("session_id", mapGemini),
		// Gemini CLI counts any JSON object a hook prints as that hook's
		// output: "{}" to BeforeToolSelection made it send the model
		// toolConfig {mode AUTO, allowedFunctionNames []} (0.61.0, seen in
		// the recorded tools scenario's model requests). An empty stdout
		// is no output at all, on every event.
		Reply: func(string) []byte { return nil },
	}
}

// geminiModelPlane lists the model-plane hooks: no core equivalent, so they
// stay in the vendor namespace with the model id at metadata.
var geminiModelPlane = map[string]bool{"BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true}

func mapGemini(m Moment, st *State) ([]Draft, error) {
	const vendor = "gemini-cli"
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	switch hook {
	case "SessionStart":
		return []Draft{{Type: "session.started", Data: Data(
			"client", map[string]any{"name": vendor},
			"trigger", Str(raw, "source"),
			"cwd", Str(raw, "cwd"),
		)}}, nil
	case "SessionEnd":
		// A run still open was not interrupted (Gemini's Esc fires
		// AfterAgent): an API failure or a crash ended it unreported.
		abandonRun(st)
		return sessionEnd(st, Str(raw, "reason")), nil
	case "BeforeAgent":
		abandonRun(st)
		return promptRun(m, st, Str(raw, "prompt")), nil
	case "AfterAgent":
		// The response text is message-stream territory (AEP-0007): it does
		// not ride on the run terminal.
		return endRun(m, st, "run.finished", map[string]any{}), nil
	case "BeforeTool":
		tool := Str(raw, "tool_name")
		d := toolRequested(raw, tool, "", "tool_input")
		d.Mark = pairOpen(m, st, tool, extDigest(raw, "tool_input"))
		return inRun(st, d), nil
	case "AfterTool":
		tool := Str(raw, "tool_name")
		var d Draft
		if e := Raw(raw, "tool_response.error"); e != nil && string(e) != "null" {
			errType, errMsg := Str(raw, "tool_response.error.type"), Str(raw, "tool_response.error.message")
			if s := Str(raw, "tool_response.error"); s != "" {
				errMsg = s
			}
			if errType == "" {
				errType = "tool_error"
			}
			d = toolFailed(tool, "", errType, errMsg)
		} else {
			d = toolCompleted(raw, tool, "", "tool_response")
		}
		d.CauseRef = pairClose(st, tool, extDigest(raw, "tool_input"))
		return inRun(st, d), nil
	case "PreCompress":
		// Gemini exposes only the pre moment, and fires it with trigger
		// auto before every model call, ahead of the threshold test that
		// usually compresses nothing. Only /compress (trigger manual) is
		// sure to compact; the automatic check rides in the vendor family.
		// (Disagrees with the Annex A pin gemini-cli.json PreCompress,
		// which reads trigger auto as a compaction.)
		trigger := Str(raw, "trigger")
		if trigger == "manual" {
			return inRun(st, Draft{Type: "session.compacted", Data: Data("trigger", trigger)}), nil
		}
		return inRun(st, Draft{Type: Fallback(vendor, "session", "pre_compress"), Severity: "debug",
			Data: Data("trigger", trigger), Levels: map[string]redact.Level{"trigger": redact.Metadata}}), nil
	case "Notification":
		// Observability-only: the hook can neither grant nor deny, so a
		// ToolPermission alert is status, never attention.requested.
		return inRun(st, Draft{
			Type:    "progress.status",
			Subject: Str(raw, "notification_type"),
			Data:    Data("message", Str(raw, "message")),
		}), nil
	}
	if geminiModelPlane[hook] {
		d := Draft{
			Type:   Fallback(vendor, "session", hook),
			Data:   Data("model", Str(raw, "llm_request.model")),
			Levels: map[string]redact.Level{"model": redact.Metadata},
		}
		if hook == "AfterModel" {
			d.Severity = "debug" // fires once per streamed chunk
		}
		return inRun(st, d), nil
	}
	return inRun(st, fallback(vendor, hook)), nil
}
