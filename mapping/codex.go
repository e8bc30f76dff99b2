package mapping

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

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
	tool, call := codexToolName(Str(raw, "tool_name")), Str(raw, "tool_use_id")
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
		ds = append(ds, codexUnfinished(st)...)
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
				// This Codex reports interrupts: the stale turn ended
				// without a Stop (its model requests failed).
				ds = append(dismissPending(st), codexUnfinished(st)...)
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
		return append(ds, Draft{Type: "run.finished", Run: run, Data: codexUsage(st, run)}), nil
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
		// The child run opens at the subagent's own UserPromptSubmit.
		return subagentStarted(st, raw, firstNonEmpty(currentRun(st), run), false), nil
	case "SubagentStop":
		var ds []Draft
		if _, ok := st.Get(childRunPrefix + child); ok && child != "" {
			st.Del(childRunPrefix + child)
			ds = append(ds, Draft{Type: "run.finished", Run: child, Data: codexUsage(st, child)})
		}
		parent, ok := st.Get(subParentPrefix + child)
		if !ok {
			parent = firstNonEmpty(currentRun(st), run)
		}
		st.Del(subParentPrefix + child)
		// The child is its run when the subagent's prompt opened one.
		key := "agent"
		if len(ds) > 0 {
			key = "run"
		}
		d := subagent("delegation.subagent.stopped", raw, key)
		d.Run = parent
		return append(ds, d), nil
	case "PreModelRequest":
		// Codex 0.169's hook set: this Codex reports interrupts.
		st.Set(codexReportsInterrupts, "1")
		d := extensionEvent(codexAgent, hook, raw, codexModelRequestFields...)
		d.Run = run
		return []Draft{d}, nil
	case "PostModelRequest":
		st.Set(codexReportsInterrupts, "1")
		return []Draft{codexModelAttempt(raw, st, run)}, nil
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
	d := fallback(codexAgent, hook)
	d.Run = Str(raw, "turn_id")
	return []Draft{d}, nil
}

// codexModelRequestFields are the structural fields of Codex's model
// request hooks (0.171): which request, which attempt of it, what kind
// (sampling or foreground_compaction), the thread, the subagent.
var codexModelRequestFields = []extField{
	{"kind", redact.Metadata}, {"request_id", redact.Metadata}, {"attempt_number", redact.Metadata},
	{"thread_id", redact.Metadata}, {"agent_id", redact.Metadata}, {"agent_type", redact.Metadata},
	{"model", redact.Metadata},
}

// Table-state keys of the Codex model attempts: the outcome of a run's
// last attempt (the error class when it failed, "" when it completed) and
// the tokens its completed attempts used ("input output").
const (
	codexLastAttempt = "codex.attempt:"
	codexTokens      = "codex.tokens:"
)

// codexModelAttempt is PostModelRequest (Codex 0.171): one model attempt's
// outcome, x.codex.session.post_model_request with its structural fields,
// the token counts at metadata and the error text gated redacted. A failed
// attempt may be retried, so it ends nothing; the run's last attempt is
// remembered (its error class only: the text never enters the state) for
// the turn's end, and a completed attempt's tokens add up on the run.
func codexModelAttempt(raw []byte, st *State, run string) Draft {
	d := extensionEvent(codexAgent, "PostModelRequest", raw, append(codexModelRequestFields,
		extField{"status", redact.Metadata}, extField{"response_id", redact.Metadata},
		extField{"error", redact.Redacted})...)
	d.Run = run
	if u := gjson.GetBytes(raw, "token_usage"); u.IsObject() {
		usage := map[string]any{}
		u.ForEach(func(k, v gjson.Result) bool {
			if v.Type == gjson.Number {
				usage[k.String()] = extInt([]byte(v.Raw), "@this")
			}
			return true
		})
		d.Data["token_usage"] = usage
		if d.Levels == nil {
			d.Levels = map[string]redact.Level{}
		}
		d.Levels["token_usage"] = redact.Metadata
	}
	if run == "" {
		return d
	}
	d.Mark = codexLastAttempt + run
	if Str(raw, "status") == "failed" {
		st.Set(codexLastAttempt+run, codexErrorClass(Str(raw, "error")))
		return d
	}
	st.Set(codexLastAttempt+run, "")
	in, out := codexTokenCounts(st, run)
	in += gjson.GetBytes(raw, "token_usage.input_tokens").Int()
	out += gjson.GetBytes(raw, "token_usage.output_tokens").Int()
	st.Set(codexTokens+run, strconv.FormatInt(in, 10)+" "+strconv.FormatInt(out, 10))
	return d
}

// codexTokenCounts returns the tokens run's completed attempts used.
func codexTokenCounts(st *State, run string) (in, out int64) {
	v, _ := st.Get(codexTokens + run)
	if f := strings.Fields(v); len(f) == 2 {
		in, _ = strconv.ParseInt(f[0], 10, 64)
		out, _ = strconv.ParseInt(f[1], 10, 64)
	}
	return in, out
}

// codexUsage is the payload of run's run.finished: the tokens its model
// attempts used, when Codex reported them; it forgets the run's attempts.
func codexUsage(st *State, run string) map[string]any {
	d := map[string]any{}
	if _, ok := st.Get(codexTokens + run); ok {
		in, out := codexTokenCounts(st, run)
		d["gen_ai.usage.input_tokens"], d["gen_ai.usage.output_tokens"] = in, out
	}
	st.Del(codexTokens + run)
	st.Del(codexLastAttempt + run)
	return d
}

// codexUnfinished closes the session's open turn that ended without a
// Stop (a Codex that reports interrupts fires Interrupt for the user's):
// when its last model attempt failed, every retry was spent and the turn
// failed, run.failed caused by that attempt's event; otherwise nothing
// says how it ended and it keeps no terminal.
func codexUnfinished(st *State) []Draft {
	run := currentRun(st)
	abandonRun(st)
	if run == "" {
		return nil
	}
	class, ok := st.Get(codexLastAttempt + run)
	codexUsage(st, run)
	if !ok || class == "" {
		return nil
	}
	return []Draft{{Type: "run.failed", Run: run, CauseRef: codexLastAttempt + run,
		Data: map[string]any{"reason": "model_request_failed", "error": map[string]any{"type": class}}}}
}

// codexErrorClass is the class token of a failed attempt's error text: the
// API's error type (or code) when the text is its JSON error body, a
// disconnected stream as such, else model_request_failed.
func codexErrorClass(text string) string {
	if gjson.Valid(text) {
		if t := firstNonEmpty(Str([]byte(text), "error.type"), Str([]byte(text), "error.code")); t != "" {
			return clip(SnakeCase(t), maxKeyName)
		}
	}
	if strings.HasPrefix(text, "stream disconnected") {
		return "stream_disconnected"
	}
	return "model_request_failed"
}

// codexNamespaced matches a tool name Codex glued to its namespace in the
// hook payload (multi_agent_v1wait_agent): the namespace, then the tool.
// Compiled on first use: every hook process links this table.
var codexNamespaced = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^multi_agent_v[0-9]+(.+)$`) })

// codexToolName is the tool's own name, as the model called it: Codex
// glues a namespaced tool's namespace to its name in the hook payloads.
func codexToolName(name string) string {
	if !strings.HasPrefix(name, "multi_agent_v") {
		return name
	}
	if m := codexNamespaced().FindStringSubmatch(name); m != nil {
		return strings.TrimLeft(m[1], "_.")
	}
	return name
}
