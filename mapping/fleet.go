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

// stateRun is the table-state key of the synthesized run that is open;
// stateLastRun keeps the one closed last, for late terminals.
const (
	stateRun     = "run"
	stateLastRun = "run.last"
)

// maxPending bounds one tool's queue of unanswered requests in the pairing
// without a call id; the oldest falls off first.
const maxPending = 16

// emptyObject is the neutral reply of the fleet's JSON hook contracts: an
// empty JSON object states no decision and blocks nothing.
var emptyObject = []byte("{}")

// replyEmptyObject is a Vendor.Reply writing "{}" for every moment.
func replyEmptyObject(string) []byte { return emptyObject }

// identifyBy returns a Vendor.Identify reading the moment name from
// hookField and the session from sessionField, with a missing session sent to
// the UnknownSession lane.
func identifyBy(hookField, sessionField string) func(Moment) (string, string) {
	return func(m Moment) (string, string) {
		s := Str(m.Raw, sessionField)
		if s == "" {
			s = UnknownSession
		}
		return HookField(m, hookField), s
	}
}

// currentRun returns the synthesized run that is open, "" when none is.
func currentRun(st *State) string {
	r, _ := st.Get(stateRun)
	return r
}

// drainRun closes a run left open (its terminal hook never fired: an
// interrupt the vendor does not report, a crash) as run.cancelled with no
// claim of who cancelled it. It returns nothing when no run is open.
func drainRun(st *State) []Draft {
	r := currentRun(st)
	if r == "" {
		return nil
	}
	st.Del(stateRun)
	st.Set(stateLastRun, r)
	return []Draft{{Type: "run.cancelled", Run: r, Data: map[string]any{}}}
}

// openRun drains a stale run, then opens a new one whose id is the moment's
// nonce, and returns the drained terminals and the new run id.
func openRun(m Moment, st *State) ([]Draft, string) {
	drained := drainRun(st)
	if m.Nonce != "" {
		st.Set(stateRun, m.Nonce)
	}
	return drained, m.Nonce
}

// closeRun ends the open run and returns its id. A terminal that finds no
// open run is a late second terminal of the run closed last (a Stop after
// the Interrupt, a re-fired stop hook): it names that run, and the emitter's
// terminal exclusivity suppresses it. With no run seen at all (the prompt was
// never observed), the terminal gets a fresh run of its own from the nonce.
func closeRun(m Moment, st *State) string {
	r := currentRun(st)
	if r == "" {
		if last, ok := st.Get(stateLastRun); ok {
			return last
		}
		return m.Nonce
	}
	st.Del(stateRun)
	st.Set(stateLastRun, r)
	return r
}

// inRun sets the open run on drafts that carry none.
func inRun(st *State, ds ...Draft) []Draft {
	r := currentRun(st)
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
	return append(drainRun(st), Draft{Type: "session.ended", Data: Data("reason", sessionEndReason(reason))})
}

// toolRequested is tool.requested for the call: the args digest always, the
// args themselves for the gate to keep only at full.
func toolRequested(raw []byte, name, callID, argsPath string) Draft {
	return Draft{Type: "tool.requested", Subject: name, Data: Data(
		"tool", ToolRef(name, callID),
		"args_digest", extDigest(raw, argsPath),
		"args", extValue(raw, argsPath),
	)}
}

// toolCompleted is tool.completed for the call: the result digest always,
// the result itself for the gate to keep only at full.
func toolCompleted(raw []byte, name, callID, resultPath string) Draft {
	return Draft{Type: "tool.completed", Subject: name, Data: Data(
		"tool", ToolRef(name, callID),
		"result_digest", extDigest(raw, resultPath),
		"result", extValue(raw, resultPath),
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

// fallback is the vendor's mechanical extension event for a moment with no
// core mapping: x.{vendor}.session.{snake_case(hook)} with an empty payload
// (nothing of an unknown payload is known to be metadata-safe).
func fallback(vendor, hook string) Draft {
	return Draft{Type: Fallback(vendor, "session", hook), Data: map[string]any{}}
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
// payload: subject agent_id, agent_type at metadata.
func subagent(typ string, raw []byte) Draft {
	return Draft{Type: typ, Subject: Str(raw, "agent_id"), Data: Data("agent_type", Str(raw, "agent_type"))}
}

// omitEmpty returns m, or nil when it has no fields, so an optional object
// with nothing to say is omitted by Data rather than sent as {}.
func omitEmpty(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
