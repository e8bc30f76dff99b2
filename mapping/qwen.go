package mapping

// Qwen is the AEP-0002 Annex A.4 table for Qwen Code hooks: sixteen hooks,
// the Claude-Code-shaped sibling. Runs are synthesized per UserPromptSubmit
// (no turn id is documented) and tool_use_id pairs the tool events;
// PermissionRequest raises a card with the dialog's own choices, the permission_prompt
// notification suppressed against it; compaction is stated once, at the post
// moment; todo hooks emit once, at the persisted (postWrite) phase.
func Qwen() Vendor {
	return Vendor{
		Name:     "qwen-code",
		Summary:  "Qwen Code hooks (settings.json), the Claude Code family rules, observe-only",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      resumable("session_id", mapQwen),
		Reply:    replyEmptyObject,
		Hold:     qwenHold,
	}
}

func mapQwen(m Moment, st *State) ([]Draft, error) {
	const vendor = "qwen-code"
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	if ds, ok := claudeShapedTool(hook, raw, st); ok {
		return ds, nil
	}
	switch hook {
	case "SessionStart":
		if Str(raw, "source") == "compact" {
			// Compaction restarts the context, not the session.
			return nil, nil
		}
		// permission_mode is a fleet-relevant security posture (yolo!).
		return []Draft{sessionStarted(vendor, raw)}, nil
	case "SessionEnd":
		return append(dismissPending(st), sessionEnd(st, Str(raw, "reason"))...), nil
	case "UserPromptSubmit":
		// Qwen fires it before every model round of one turn, with the same
		// prompt_id and an empty prompt: only a new prompt_id is a new turn.
		return turnPrompt(m, st, vendor, Str(raw, "prompt_id"), Str(raw, "prompt")), nil
	case "PostToolBatch":
		return append(batchDenied(st, raw), childPlace(st, raw, fallback(vendor, hook))...), nil
	case "Stop":
		return append(dismissPending(st), endRun(m, st, "run.finished", Data(
			"gen_ai.usage.input_tokens", extInt(raw, "input_tokens"),
			"gen_ai.usage.output_tokens", extInt(raw, "output_tokens"),
		))...), nil
	case "StopFailure":
		reason := Str(raw, "error")
		if reason == "" {
			reason = "unknown"
		}
		// The reason token only: error.type is not pinned for this vendor.
		return append(dismissPending(st), endRun(m, st, "run.failed", Data(
			"reason", reason,
			"error", omitEmpty(Data("message", Str(raw, "error_details"))),
		))...), nil
	case "PermissionRequest":
		return permissionRequest(m, vendor, qwenMenu, currentRun(st), st), nil
	case "PreCompact":
		// The paired concept is stated once, at PostCompact.
		return nil, nil
	case "PostCompact":
		// compact_summary has no session.compacted field and does not ride.
		return inRun(st, Draft{Type: "session.compacted", Data: Data("trigger", Str(raw, "trigger"))}), nil
	case "Notification":
		// permission_prompt is suppressed: the first-class PermissionRequest
		// hook already carries the moment.
		return inRun(st, notificationStatus(raw)...), nil
	case "TodoCreated", "TodoCompleted":
		// Every todo hook fires twice per write; the validation phase is the
		// silent pre-moment. An absent or unknown phase emits (fail open).
		if Str(raw, "phase") == "validation" {
			return nil, nil
		}
		typ := "progress.task.planned"
		if hook == "TodoCompleted" {
			typ = "progress.task.completed"
		}
		// all_todos is deliberately not forwarded (payload minimalism).
		return inRun(st, Draft{Type: typ, Subject: Str(raw, "todo_id"),
			Data: Data("task", omitEmpty(Data("title", Str(raw, "todo_content"))))}), nil
	}
	return inRun(st, fallback(vendor, hook)), nil
}
