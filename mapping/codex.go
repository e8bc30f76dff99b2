package mapping

// codexAgent is the AEP agent name of the Codex table.
const codexAgent = "codex"

// Codex is the AEP-0002 Annex A.2 table for Codex hooks (ten hooks onto ten
// core types). The Codex thread (session_id) is the AEP session and its
// turn_id the AEP run. Older Codex fires no hook when the user interrupts a
// turn, so a run still open when a prompt of a different turn arrives drains
// as run.cancelled first (the interrupt-drain rule); newer Codex's Interrupt
// hook closes the turn as run.cancelled{by:user} directly. Codex has no tool-failure
// hook: non-zero exits land on tool.completed. Unknown hooks fall back to
// x.codex.session.{snake_case(hook)}.
func Codex() Vendor {
	return Vendor{
		Name:     codexAgent,
		Summary:  "Codex hooks (hooks.json / config.toml): the ten of Annex A.2 plus Interrupt, SessionEnd and PreModelRequest",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      resumable("session_id", mapCodex),
		Reply:    codexReply,
		Hold:     codexHold,
	}
}

// codexReply is Codex's neutral command-hook answer: Stop and SubagentStop
// parse stdout as JSON, so they get the empty object (continue, no
// decision); every other hook gets empty stdout, which Codex reads as
// success with nothing added (on SessionStart and UserPromptSubmit plain
// text would become model context, so nothing at all is written).
func codexReply(hook string) []byte {
	switch hook {
	case "Stop", "SubagentStop":
		return []byte("{}")
	}
	return nil
}

// codexReportsInterrupts is the table-state key saying this Codex has the
// Interrupt hook (it fired Interrupt or PreModelRequest, both new in the
// same versions): a turn it leaves open was not interrupted.
const codexReportsInterrupts = "codex.reports-interrupts"

func mapCodex(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	turn := Str(raw, "turn_id")
	run := turn
	if run == "" {
		run = currentRun(st)
	}
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_use_id")
	child := Str(raw, "agent_id")
	if child != "" && hook != "SubagentStart" && hook != "SubagentStop" {
		// A subagent's moment: the parent's session_id, the child's own
		// turn_id and agent_id. It belongs to the child run (run id =
		// agent_id, the delegation's subject), never to the parent's turn.
		run = child
	}
	switch hook {
	case "SessionStart":
		if Str(raw, "source") == "compact" {
			// Compaction restarts the context, not the thread (it follows
			// PostCompact, which recorded the compaction).
			return nil, nil
		}
		return []Draft{sessionStarted(codexAgent, raw)}, nil
	case "SessionEnd":
		// Codex 0.169 fires SessionEnd {reason} when the thread ends. A
		// Codex that has SessionEnd reports interrupts (Interrupt), so a
		// turn still open was ended by what its hooks do not report (an
		// API failure fires no Stop): it keeps no terminal.
		ds := dismissPending(st)
		abandonRun(st)
		return append(ds, sessionEnd(st, Str(raw, "reason"))...), nil
	case "UserPromptSubmit":
		if child != "" {
			// A subagent's turn opens its child run; the parent's turn goes on.
			if _, open := st.Get(childRunPrefix + child); open {
				return nil, nil
			}
			st.Set(childRunPrefix+child, turn)
			return []Draft{{Type: "run.started", Run: child, Data: Data("trigger", "agent", "prompt", Str(raw, "prompt"))}}, nil
		}
		if turn == "" {
			turn = m.Nonce
		}
		var ds []Draft
		if open := currentRun(st); open != "" && open != turn {
			if _, reports := st.Get(codexReportsInterrupts); reports {
				// This Codex reports interrupts: the stale turn failed
				// unreported (an API failure fires no Stop).
				ds = dismissPending(st)
				abandonRun(st)
			} else {
				// Interrupt drain: the stale turn never reached Stop.
				ds = drainTurn(st)
			}
		}
		if turn != "" {
			st.Set(stateRun, turn)
		}
		return append(ds, Draft{Type: "run.started", Run: turn,
			Data: Data("trigger", "user", "prompt", Str(raw, "prompt"))}), nil
	case "Stop":
		if child != "" {
			// A subagent's turn ended; its run closes at SubagentStop.
			return nil, nil
		}
		ds := dismissPending(st)
		if currentRun(st) == run {
			st.Del(stateRun)
		}
		return append(ds, Draft{Type: "run.finished", Run: run, Data: map[string]any{}}), nil
	case "PreToolUse":
		d := toolRequested(raw, tool, call, "tool_input")
		d.Run = run
		return []Draft{d}, nil
	case "PostToolUse":
		// No failure hook exists: a non-zero exit still lands here.
		d := toolCompleted(raw, tool, call, "tool_response")
		d.Run = run
		return append(toolRan(raw, st), d), nil
	case "PermissionRequest":
		return permissionRequest(m, codexAgent, codexMenu, run, st), nil
	case "SubagentStart":
		// The payload's turn_id is the child's; the delegation belongs to
		// the parent's open turn.
		return subagentStarted(st, raw, firstNonEmpty(currentRun(st), run)), nil
	case "SubagentStop":
		var ds []Draft
		if _, ok := st.Get(childRunPrefix + child); ok && child != "" {
			st.Del(childRunPrefix + child)
			ds = append(ds, Draft{Type: "run.finished", Run: child, Data: map[string]any{}})
		}
		parent, ok := st.Get(subParentPrefix + child)
		if !ok {
			parent = firstNonEmpty(currentRun(st), run)
		}
		st.Del(subParentPrefix + child)
		d := subagent("delegation.subagent.stopped", raw)
		d.Run = parent
		return append(ds, d), nil
	case "PreModelRequest":
		// Codex 0.169's hook set: this Codex reports interrupts.
		st.Set(codexReportsInterrupts, "1")
		return []Draft{fallback(codexAgent, hook)}, nil
	case "Interrupt":
		// Beyond Annex A.2's ten: newer Codex fires Interrupt when the user
		// interrupts an active turn. It closes that turn as the user's
		// cancellation (as Kimi Code's Interrupt does) instead of leaving it
		// to the drain at the next prompt; pending requests are dismissed
		// first (AEP-0002 §7 rule 2).
		st.Set(codexReportsInterrupts, "1")
		ds := dismissPending(st)
		if currentRun(st) == run {
			st.Del(stateRun)
		}
		return append(ds, Draft{Type: "run.cancelled", Run: run, Data: map[string]any{"by": "user"}}), nil
	case "PreCompact":
		// Documented deviation: session.compacted fires once, at PostCompact.
		return nil, nil
	case "PostCompact":
		// Inside the open turn, when one is open, like the fleet's tables.
		return []Draft{{Type: "session.compacted", Run: currentRun(st), Data: Data("trigger", Str(raw, "trigger"))}}, nil
	}
	return []Draft{fallback(codexAgent, hook)}, nil
}
