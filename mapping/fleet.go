package mapping

import (
	"strings"
)

// This file holds the machinery the hook-fleet tables (Gemini CLI, Qwen Code,
// VS Code agent hooks, Kimi Code CLI) share beyond the Claude Code family's:
// the unknown-session lane, runs synthesized per prompt, tool pairing where
// the vendor gives no call id, and the neutral JSON reply.

// UnknownSession is the documented lane for a hook payload without a session
// id (VS Code's optional session_id, Kimi's subagent hooks).
const UnknownSession = "unknown"

// runLane names the two table-state keys of one lane of synthesized runs:
// the run that is open, and the one closed last (for late terminals). A
// session has one lane (sessionRuns); Cline keeps one per agent, since a
// child agent runs inside its parent's task.
type runLane struct{ open, last string }

// sessionRuns is the session's own run lane.
var sessionRuns = runLane{open: stateRun, last: stateLastRun}

// stateRun is the table-state key of the session's open synthesized run;
// stateLastRun keeps the one closed last.
const (
	stateRun     = "run"
	stateLastRun = "run.last"
)

// current returns the lane's open run, "" when none is.
func (l runLane) current(st *State) string {
	r, _ := st.Get(l.open)
	return r
}

// begin opens id as the lane's run ("" opens nothing).
func (l runLane) begin(st *State, id string) {
	if id == "" {
		return
	}
	st.Del(l.last)
	st.Set(l.open, id)
}

// end closes the lane's open run and returns its id. A terminal that finds
// no open run is a late second terminal of the run closed last (a Stop
// after the Interrupt, a re-fired stop hook): it names that run, and the
// emitter's terminal exclusivity suppresses it. With no run seen at all (the
// opener was never observed: attach mid-run), the terminal closes a run of
// its own, named by nonce.
func (l runLane) end(st *State, nonce string) string {
	r := l.current(st)
	if r == "" {
		if r, _ = st.Get(l.last); r == "" {
			r = nonce
		}
	}
	st.Del(l.open)
	st.Set(l.last, r)
	return r
}

// maxPending bounds one tool's queue of unanswered requests in the pairing
// without a call id; the oldest falls off first.
const maxPending = 16

// emptyObject is the neutral reply of the fleet's JSON hook contracts: an
// empty JSON object states no decision and blocks nothing.
var emptyObject = []byte("{}")

// replyEmptyObject is a Vendor.Reply writing "{}" for every moment.
func replyEmptyObject(string) []byte { return emptyObject }

// identifyBy returns a Vendor.Identify reading the moment name from
// hookField (or the argv name the transport gave) and the session from
// sessionField, with a missing session sent to the UnknownSession lane.
func identifyBy(hookField, sessionField string) func(Moment) (string, string) {
	return func(m Moment) (string, string) {
		s := Str(m.Raw, sessionField)
		if s == "" {
			s = UnknownSession
		}
		return HookField(m, hookField), s
	}
}

// currentRun returns the session's open synthesized run, "" when none is.
func currentRun(st *State) string { return sessionRuns.current(st) }

// drainRun closes a run left open (its terminal hook never fired: an
// interrupt the vendor does not report, a crash) as run.cancelled with no
// claim of who cancelled it. It returns nothing when no run is open.
func drainRun(st *State) []Draft {
	if currentRun(st) == "" {
		return nil
	}
	return []Draft{{Type: "run.cancelled", Run: sessionRuns.end(st, ""), Data: map[string]any{}}}
}

// abandonRun forgets the session's open run without a terminal, for a
// vendor whose interrupts close the run themselves, so a run still open at
// the next prompt or the session's end was ended by something it does not
// report. No terminal is the honest record: zero terminals is legal (AEP-0002 §2
// convention 5), a guessed cancellation or failure is not.
func abandonRun(st *State) { st.Del(stateRun) }

// openRun drains a stale run, then opens a new one whose id is the moment's
// nonce, and returns the drained terminals and the new run id.
func openRun(m Moment, st *State) ([]Draft, string) {
	drained := drainRun(st)
	sessionRuns.begin(st, m.Nonce)
	return drained, m.Nonce
}

// closeRun ends the session's open run and returns its id (runLane.end).
func closeRun(m Moment, st *State) string { return sessionRuns.end(st, m.Nonce) }

// inRun sets the open run on drafts that carry none.
func inRun(st *State, ds ...Draft) []Draft { return withRun(currentRun(st), ds) }

// withRun gives run r to every draft of ds that names none.
func withRun(r string, ds []Draft) []Draft {
	for i := range ds {
		if ds[i].Run == "" {
			ds[i].Run = r
		}
	}
	return ds
}

// sessionEnd drains an open run, then states the session's end with the
// vendor reason normalized onto the schema enum (exit, clear, logout, ...
// are "normal"; hooks.go's sessionEndReason).
func sessionEnd(st *State, reason string) []Draft {
	ds := append(dismissPending(st), drainRun(st)...)
	return append(ds, Draft{Type: "session.ended", Data: Data("reason", sessionEndReason(reason))})
}

// sessionStarted is session.started for a Claude-Code-shaped SessionStart:
// the client name, the vendor's source as the trigger, the model and the
// permission mode (a fleet-relevant security posture) at metadata, the cwd
// for the gate to drop or redact; extra appends vendor-specific pairs.
func sessionStarted(agent string, raw []byte, extra ...any) Draft {
	kv := append([]any{
		"client", map[string]any{"name": agent},
		"trigger", Str(raw, "source"),
		"gen_ai.request.model", Str(raw, "model"),
		"permission_mode", Str(raw, "permission_mode"),
		"cwd", Str(raw, "cwd"),
	}, extra...)
	return Draft{Type: "session.started", Data: Data(kv...)}
}

// toolRequested is tool.requested for the call: the args digest always, the
// args themselves for the gate to keep only at full.
func toolRequested(raw []byte, name, callID, argsPath string) Draft {
	return Draft{Type: "tool.requested", Subject: name, Data: Data(
		"tool", ToolRef(name, callID),
		"args_digest", extDigest(raw, argsPath),
		"args", Value(raw, argsPath),
	)}
}

// toolCompleted is tool.completed for the call: the result digest always,
// the result itself for the gate to keep only at full.
func toolCompleted(raw []byte, name, callID, resultPath string) Draft {
	return Draft{Type: "tool.completed", Subject: name, Data: Data(
		"tool", ToolRef(name, callID),
		"result_digest", extDigest(raw, resultPath),
		"result", Value(raw, resultPath),
	)}
}

// toolFailed is tool.failed for the call with its error_info (type at
// metadata, message gated redacted).
func toolFailed(name, callID, errType, errMsg string) Draft {
	return Draft{Type: "tool.failed", Subject: name, Data: Data(
		"tool", ToolRef(name, callID),
		"error", Data("type", errType, "message", errMsg),
	)}
}

// withData adds the key/value pairs to d's payload the way Data builds one
// (nil values and empty strings omitted): a vendor's extra facts on a shared
// draft, e.g. duration_ms on a tool outcome.
func withData(d Draft, kv ...any) Draft {
	if d.Data == nil {
		d.Data = map[string]any{}
	}
	for k, v := range Data(kv...) {
		d.Data[k] = v
	}
	return d
}

// pendingKey is the table-state key of the queue of requests of one tool
// call, identified by tool name and args digest, that await their outcome.
func pendingKey(name, argsDigest string) string {
	return "pending:" + name + "\x00" + argsDigest
}

// pairOpen records a tool request of a vendor that gives no call id and
// returns the reference key to Mark it with. Requests queue per (tool name,
// args digest), first in first out, so parallel calls of one tool with
// different arguments still pair exactly.
func pairOpen(m Moment, st *State, name, argsDigest string) string {
	if m.Nonce == "" {
		return ""
	}
	mark := "pair:" + m.Nonce
	k := pendingKey(name, argsDigest)
	q, _ := st.Get(k)
	items := strings.Fields(q)
	items = append(items, mark)
	if len(items) > maxPending {
		items = items[len(items)-maxPending:]
	}
	st.Set(k, strings.Join(items, " "))
	return mark
}

// pairClose takes the oldest open request of (name, argsDigest) and returns
// its reference key, "" when none is pending.
func pairClose(st *State, name, argsDigest string) string {
	k := pendingKey(name, argsDigest)
	q, ok := st.Get(k)
	if !ok {
		return ""
	}
	items := strings.Fields(q)
	if len(items) <= 1 {
		st.Del(k)
	} else {
		st.Set(k, strings.Join(items[1:], " "))
	}
	if len(items) == 0 {
		return ""
	}
	return items[0]
}

// pairForget drops mark from the open requests of (name, argsDigest): a
// request closed without its outcome hook (its turn ended) must not pair
// with a later call's outcome.
func pairForget(st *State, name, argsDigest, mark string) {
	k := pendingKey(name, argsDigest)
	q, ok := st.Get(k)
	if !ok {
		return
	}
	var keep []string
	for _, it := range strings.Fields(q) {
		if it != mark {
			keep = append(keep, it)
		}
	}
	if len(keep) == 0 {
		st.Del(k)
		return
	}
	st.Set(k, strings.Join(keep, " "))
}

// promptRun opens a synthesized run at a prompt boundary (draining a stale
// one first) and states it: run.started, trigger user, the prompt gated.
func promptRun(m Moment, st *State, prompt string) []Draft {
	drained, run := openRun(m, st)
	return append(drained, Draft{Type: "run.started", Run: run, Data: Data(
		"trigger", "user",
		"prompt", prompt,
	)})
}

// endRun closes the synthesized run with the terminal typ and payload data.
func endRun(m Moment, st *State, typ string, data map[string]any) []Draft {
	return []Draft{{Type: typ, Run: closeRun(m, st), Data: data}}
}

// subagent is delegation.subagent.started or .stopped for a Claude-Code-shaped
// payload: subject agent_id, agent_type at metadata, and the child's
// lineage handle (AEP-0002 §5.4): agent_id under child.{key}, "run" where
// the subagent's moments go to a child run of that id, "agent" where the
// vendor gives it none.
func subagent(typ string, raw []byte, key string) Draft {
	id := Str(raw, "agent_id")
	return Draft{Type: typ, Subject: id, Data: Data("agent_type", Str(raw, "agent_type"),
		"child", omitEmpty(Data(key, id)))}
}

// omitEmpty returns m, or nil when it has no fields, so an optional object
// with nothing to say is omitted by Data rather than sent as {}.
func omitEmpty(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
