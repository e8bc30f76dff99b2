package mapping

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// KimiCode is the AEP-0002 Annex A.6 table for the Kimi Code CLI external
// hooks (sixteen events; 2.1.0 adds TurnStarted, UserPromptQueued,
// SessionHeartbeat and TaskStarted). Runs are synthesized per
// UserPromptSubmit, or per TurnStarted when no prompt hook opened the turn (a
// queued prompt, a turn a finished background task starts), and closed by
// Stop, StopFailure or the vendor's own Interrupt; a run left open drains as
// run.cancelled at the next boundary. A subagent fires Stop, StopFailure and
// Interrupt with its parent's session id and nothing naming it: between
// SubagentStart and SubagentStop such a moment is the subagent's when the
// parent is blocked in a foreground Agent call or has no open run, and then
// closes nothing. tool_call_id pairs the tool trio and the out-of-band
// permission pair; turn_id never becomes the run id, and cwd never rides.
func KimiCode() Vendor {
	return Vendor{
		Name:     "kimi-code",
		Summary:  "Kimi Code CLI external hooks (global config.toml); PreToolUse an opt-in control gate",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      resumable("session_id", kimiGated(mapKimiCode)),
		Hold:     kimiHold,
		// Kimi Code adds a hook's stdout to the model's input whenever it
		// is not JSON with a "message": even "{}" becomes a
		// <hook_result> user message. Only an empty stdout (exit 0) is
		// neutral on every event.
		Reply: func(string) []byte { return nil },
	}
}

// kimiSeverity reports whether a vendor notification severity is also an
// AEP severity (AEP-0001 §8.1) and so may set the envelope's.
func kimiSeverity(sev string) bool {
	switch sev {
	case "debug", "info", "notice", "warning", "error", "critical":
		return true
	}
	return false
}

// The table-state keys of the Kimi table: the synthesized run whose turn
// was announced (by TurnStarted), the open subagents and how many of them
// have ended their turn, the foreground Agent calls in flight, and the calls
// a rejected approval already settled.
const (
	kimiTurned     = "kimi.turned"
	kimiSubOpen    = "kimi.sub.open"
	kimiSubEnded   = "kimi.sub.ended"
	kimiForeground = "kimi.fg"
	kimiDenied     = "kimi.denied:"
	kimiCallRun    = "kimi.call:"
	kimiSubRun     = "kimi.sub.run"
	kimiTurnRun    = "kimi.turn:"
)

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
		kimiParkTurn(st)
		return promptRun(m, st, prompt), nil
	case "TurnStarted":
		return kimiTurnStarted(m, st), nil
	case "UserPromptQueued":
		// Waits for the running turn; its own TurnStarted opens its run.
		return inRun(st, Draft{
			Type:   "x.kimi-code.run.prompt_queued",
			Data:   Data("prompt", kimiPromptText(raw), "queue_length", extInt(raw, "queue_length")),
			Levels: map[string]redact.Level{"prompt": redact.Redacted, "queue_length": redact.Metadata},
		}), nil
	case "Stop", "StopFailure", "Interrupt":
		if hook == "Interrupt" {
			if ds, ok := kimiInterruptTurn(m, st); ok {
				return ds, nil
			}
		}
		if kimiSubagentTurnEnd(st) {
			// The subagent's own turn ended: its SubagentStop follows,
			// and the parent's run goes on.
			return nil, nil
		}
		st.Del(kimiTurned)
		switch hook {
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
		}
		// Fired only for the user's own cancellation (reason "cancelled").
		return endRun(m, st, "run.cancelled", map[string]any{"by": "user"}), nil
	case "PreToolUse":
		if kimiForegroundAgent(raw, tool) {
			kimiCalls(st, kimiForeground, call, true)
		}
		d := toolRequested(raw, tool, call, "tool_input")
		d.Run = kimiRun(st)
		if d.Run != "" && call != "" {
			st.Set(kimiCallRun+call, d.Run)
		}
		if m.Control {
			return append([]Draft{d}, kimiGateRequest(raw, st, tool, call, d.Run)...), nil
		}
		return []Draft{d}, nil
	case "PostToolUse":
		d := toolCompleted(raw, tool, call, "tool_output")
		d.Run = kimiCallDone(st, call)
		return kimiInRun(st, d), nil
	case "PostToolUseFailure":
		run := kimiCallDone(st, call)
		if _, denied := st.Get(kimiDenied + call); denied && call != "" {
			// The rejected approval already ended the call (tool.denied).
			st.Del(kimiDenied + call)
			return nil, nil
		}
		errType := firstNonEmpty(Str(raw, "error.code"), Str(raw, "error.name"), "tool_error")
		msg := firstNonEmpty(Str(raw, "error"), Str(raw, "error.message"))
		d := toolFailed(tool, call, errType, msg)
		d.Run = run
		return kimiInRun(st, d), nil
	case "PermissionRequest":
		return kimiInRun(st, kimiPermissionRequest(raw, st, tool, call)), nil
	case "PermissionResult":
		return kimiInRun(st, kimiPermissionResult(raw, st, tool, call)...), nil
	case "SubagentStart":
		// The subagent's prompt has no field on delegation.* and does not
		// ride; 2.1.0 sends the parent's session id (older versions none:
		// the unknown lane).
		kimiCount(st, kimiSubOpen, 1)
		if run := currentRun(st); run != "" {
			st.Set(kimiSubRun, run) // the delegating run, for kimiRun
		}
		return inRun(st, kimiDelegation("delegation.subagent.started", raw)), nil
	case "SubagentStop":
		open := kimiCount(st, kimiSubOpen, -1)
		if open < kimiCount(st, kimiSubEnded, 0) {
			kimiCount(st, kimiSubEnded, -1)
		}
		if open == 0 {
			st.Del(kimiSubRun)
		}
		return inRun(st, kimiDelegation("delegation.subagent.stopped", raw)), nil
	case "TaskStarted":
		return inRun(st, extensionEvent(vendor, hook, raw,
			extField{"task_id", redact.Metadata}, extField{"kind", redact.Metadata},
			extField{"detached", redact.Metadata}, extField{"description", redact.Redacted})), nil
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
		if sev := Str(raw, "severity"); kimiSeverity(sev) {
			d.Severity = sev
		}
		return inRun(st, d), nil
	}
	return inRun(st, fallback(vendor, hook)), nil
}

// kimiDelegation is a Kimi subagent's delegation event: its moments carry
// nothing naming it and go to the delegating run, so the lineage handle
// (AEP-0002 §5.4) is the subagent's agent name.
func kimiDelegation(typ string, raw []byte) Draft {
	name := Str(raw, "agent_name")
	return Draft{Type: typ, Subject: name, Data: Data("child", omitEmpty(Data("agent", name)))}
}

// kimiTurnStarted handles the vendor's turn boundary. A subagent's turn is
// inside its parent's run. A turn whose run a UserPromptSubmit already
// opened is announced, nothing more; any other turn (a queued prompt sent
// without the prompt hook, a turn a finished background task or a goal
// starts) opens its own run.
func kimiTurnStarted(m Moment, st *State) []Draft {
	origin := Str(m.Raw, "origin_kind")
	if origin == "system_trigger" && Str(m.Raw, "origin_name") == "subagent" {
		return nil
	}
	turn := extStep(m.Raw, "turn_id")
	if run := currentRun(st); run != "" {
		if turned, _ := st.Get(kimiTurned); turned != run {
			st.Set(kimiTurned, run)
			kimiNameTurn(st, turn, run)
			return nil
		}
	}
	kimiParkTurn(st)
	drained, run := openRun(m, st)
	st.Set(kimiTurned, run)
	kimiNameTurn(st, turn, run)
	trigger, prompt := "agent", ""
	switch origin {
	case "user", "skill_activation", "plugin_command":
		trigger, prompt = "user", Str(m.Raw, "prompt")
	case "cron":
		trigger = "schedule"
	}
	return append(drained, Draft{Type: "run.started", Run: run, Data: Data("trigger", trigger, "prompt", prompt)})
}

// kimiParkTurn sets aside, rather than drains, an open run whose turn the
// vendor announced (TurnStarted named its turn id) when a new turn begins:
// its Interrupt{turn_id} or Stop may still come after the next turn's
// start, and closes it with its real cause. The next boundary's drain
// would have called it cancelled by nobody.
func kimiParkTurn(st *State) {
	run := currentRun(st)
	if turned, _ := st.Get(kimiTurned); run == "" || turned != run {
		return
	}
	for k, v := range st.Entries {
		if strings.HasPrefix(k, kimiTurnRun) && v == run {
			abandonRun(st)
			st.Del(kimiTurned)
			return
		}
	}
}

// kimiNameTurn remembers the run of the vendor's turn id, for the
// Interrupt that names it.
func kimiNameTurn(st *State, turn, run string) {
	if turn != "" && run != "" {
		st.Set(kimiTurnRun+turn, run)
	}
}

// kimiInterruptTurn closes the run an Interrupt's turn_id names: the
// queued turn's TurnStarted can come before the Interrupt of the turn it
// follows, so the open run is not always the interrupted one (it was set
// aside by kimiParkTurn); the queued turn's run goes on. ok is false when
// the turn id names no run (the open run is closed, as before).
func kimiInterruptTurn(m Moment, st *State) ([]Draft, bool) {
	turn := extStep(m.Raw, "turn_id")
	run, ok := st.Get(kimiTurnRun + turn)
	if turn == "" || !ok {
		return nil, false
	}
	st.Del(kimiTurnRun + turn)
	if run == currentRun(st) {
		st.Del(kimiTurned)
		return endRun(m, st, "run.cancelled", map[string]any{"by": "user"}), true
	}
	return []Draft{{Type: "run.cancelled", Run: run, Data: map[string]any{"by": "user"}}}, true
}

// kimiSubagentTurnEnd reports whether a Stop, StopFailure or Interrupt
// belongs to an open subagent rather than the main agent: some subagent has
// not ended its turn yet, and the main agent cannot be ending one (it waits
// in a foreground Agent call, or has no open run). A background subagent
// that ends while its parent's turn still runs cannot be told apart: its
// moment closes the parent's run (a "Cannot" of the README).
func kimiSubagentTurnEnd(st *State) bool {
	if kimiCount(st, kimiSubOpen, 0) <= kimiCount(st, kimiSubEnded, 0) {
		return false
	}
	if fg, _ := st.Get(kimiForeground); fg == "" && currentRun(st) != "" {
		return false
	}
	kimiCount(st, kimiSubEnded, 1)
	return true
}

// kimiRun is the run a tool or approval moment belongs to: the open run,
// else, while a subagent runs, the run that delegated to it (a background
// subagent goes on acting after its parent's turn ended, and its moments
// carry nothing naming it).
func kimiRun(st *State) string {
	if run := currentRun(st); run != "" {
		return run
	}
	if kimiCount(st, kimiSubOpen, 0) == 0 {
		return ""
	}
	run, _ := st.Get(kimiSubRun)
	return run
}

// kimiInRun is inRun with kimiRun's run.
func kimiInRun(st *State, ds ...Draft) []Draft { return withRun(kimiRun(st), ds) }

// kimiCallDone forgets a finished call and returns the run its request was
// in: a background subagent's call can end after its parent's turn did.
func kimiCallDone(st *State, call string) string {
	kimiCalls(st, kimiForeground, call, false)
	if call == "" {
		return ""
	}
	run, _ := st.Get(kimiCallRun + call)
	st.Del(kimiCallRun + call)
	return run
}

// kimiForegroundAgent reports whether a PreToolUse starts a subagent the
// caller waits for: the Agent or AgentSwarm tool, not run in background.
func kimiForegroundAgent(raw []byte, tool string) bool {
	return (tool == "Agent" || tool == "AgentSwarm") && !gjson.GetBytes(raw, "tool_input.run_in_background").Bool()
}

// kimiCount adds delta to the non-negative counter under key and returns
// its new value.
func kimiCount(st *State, key string, delta int) int {
	v, _ := st.Get(key)
	n, _ := strconv.Atoi(v)
	if n += delta; n <= 0 {
		st.Del(key)
		return 0
	}
	st.Set(key, strconv.Itoa(n))
	return n
}

// kimiCalls adds call to (or removes it from) the bounded set of call ids
// under key.
func kimiCalls(st *State, key, call string, add bool) {
	if call == "" {
		return
	}
	v, _ := st.Get(key)
	var out []string
	for _, c := range strings.Fields(v) {
		if c != call {
			out = append(out, c)
		}
	}
	if add {
		out = append(out, call)
	}
	if len(out) > maxPending {
		out = out[len(out)-maxPending:]
	}
	if len(out) == 0 {
		st.Del(key)
		return
	}
	st.Set(key, strings.Join(out, " "))
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
	// Older versions sent "display" as the card's text (and "action" as a
	// token); 2.1.0 makes "display" a structured object and states the
	// readable text in "action" ("Running: ls").
	prompt := Str(raw, "display")
	if gjson.GetBytes(raw, "display").IsObject() {
		prompt = Str(raw, "action")
	}
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
			// The PostToolUseFailure that follows ("not run because the
			// user rejected") repeats this terminal: it is dropped.
			st.Set(kimiDenied+call, "1")
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

// The opt-in PreToolUse gate. Kimi Code's PreToolUse hook can only object:
// exit 0 with {"hookSpecificOutput": {"permissionDecision": "deny",
// "permissionDecisionReason": ...}} blocks the call with the reason, and
// anything else lets it go on to the vendor's own permission policy, which
// may still ask in its approval panel. The gate's options are therefore the
// adapter's, not a vendor menu: allow (no objection) and deny.

// kimiGateKey is the reference key of the gate's request for one call.
func kimiGateKey(raw []byte, tool, call string) string {
	if call != "" {
		return "attn:gate:" + clip(call, maxKeyName)
	}
	return "attn:gate:" + toolAttentionKey(tool, Raw(raw, "tool_input"))
}

// kimiGateOptions are the gate's two answers, labelled as the adapter's.
func kimiGateOptions() []any {
	return []any{
		map[string]any{"id": "allow", "label": "No objection (Kimi Code's own approval may still ask)"},
		map[string]any{"id": "deny", "label": "Deny"},
	}
}

// kimiHold holds a PreToolUse whose tool the gate lists.
func kimiHold(m Moment, g Gate) *Hold {
	if HookField(m, "hook_event_name") != "PreToolUse" {
		return nil
	}
	tool, call := Str(m.Raw, "tool_name"), Str(m.Raw, "tool_call_id")
	if !g.Gates(tool) {
		return nil
	}
	return &Hold{
		Key: kimiGateKey(m.Raw, tool, call), Kind: "permission", Options: optionsOf(kimiGateOptions()),
		Allow: "allow", Refuse: "deny",
		// A refused call never runs and Kimi fires nothing more for it:
		// the refusal is its outcome (by policy: the operator's answer).
		Enforced: func(st *State, a Answer, cmdID string) []Draft {
			if a.Option != "deny" {
				return nil
			}
			if call != "" {
				// A PostToolUseFailure for it, should one come, repeats it.
				st.Set(kimiDenied+call, "1")
			}
			return []Draft{{Type: "tool.denied", Subject: tool, Run: kimiCallDone(st, call), Cause: cmdID,
				Data: map[string]any{"tool": ToolRef(tool, call), "by": "policy"}}}
		},
		// Inside the 60 s install --control gives the hook.
		Reply: func(a Answer) ([]byte, error) {
			if a.Option == "allow" {
				return []byte{}, nil // no objection: the vendor's own reply
			}
			msg := strings.TrimSpace(a.Text)
			if msg == "" {
				msg = deniedMessage
			}
			return json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": msg,
			}})
		},
	}
}

// kimiGateRequest is the gate's attention.requested, raised only when the
// loop holds this very PreToolUse live (without a relay nothing is asked).
func kimiGateRequest(raw []byte, st *State, tool, call, run string) []Draft {
	return gateRequest(st, kimiGateKey(raw, tool, call), tool, call, run, Raw(raw, "tool_input"), kimiGateOptions())
}

// gateRequest is an opt-in gate's attention.requested for the call of
// tool (its id call, its input) that the loop holds live under key: a
// permission with the gate's own options, answerable over control, caused
// by the call when its id is known.
func gateRequest(st *State, key, tool, call, run string, input []byte, options []any) []Draft {
	ds := raiseAttention(st, key, run)
	d := Draft{Type: "attention.requested", Subject: tool, Run: run, Mark: key,
		Data: map[string]any{
			"kind":        "permission",
			"prompt":      permissionPrompt(tool, input),
			"options":     options,
			"respond_via": respondVia(true),
		}}
	if call != "" {
		d.CauseRef = "tool:" + call
	}
	return append(ds, d)
}

// kimiGated settles a gate request left open before the call's next
// moment (its approval prompt, its outcome) is mapped.
func kimiGated(mapFn func(Moment, *State) ([]Draft, error)) func(Moment, *State) ([]Draft, error) {
	return func(m Moment, st *State) ([]Draft, error) {
		var settled []Draft
		switch HookField(m, "hook_event_name") {
		case "PermissionRequest", "PostToolUse", "PostToolUseFailure":
			settled = kimiGateSettle(m.Raw, st, Str(m.Raw, "tool_name"), Str(m.Raw, "tool_call_id"))
		}
		ds, err := mapFn(m, st)
		return append(settled, ds...), err
	}
}

// kimiGateSettle closes a gate request nobody answered over the loop (the
// budget passed, the relay went away) at the call's next moment: it
// expired unanswered, and the call went on to the vendor's own policy
// (which may still ask in its own panel, a request of its own).
func kimiGateSettle(raw []byte, st *State, tool, call string) []Draft {
	key := kimiGateKey(raw, tool, call)
	if !Pending(st, key) {
		return nil
	}
	return []Draft{expireAttention(st, key)}
}
