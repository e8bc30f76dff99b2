package mapping

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// ACP is the AEP-0002 Annex A.13 table for the Agent Client Protocol
// (editor↔agent newline-delimited JSON-RPC), observed read-only through the
// stdio tee (TransportACP). One moment is one JSON-RPC message in Raw; the
// tee's facts say its kind, method and id, the session it names (for a
// response, the session and method of the request it answers, joined by
// JSON-RPC id per direction) and the tee's own token (Facts.Instance), which
// qualifies run ids across tee restarts. The session/prompt turn is the run
// (its request id is the run id), stopReason picks the terminal,
// tool_call/tool_call_update statuses fork onto the tool trio, the editor's
// permission gate is observed read-only, plans stay in x.acp.* as counts,
// and message/thought chunks are suppressed unless the moment opts into
// deltas.
func ACP() Vendor {
	return Vendor{
		Name:      "acp",
		Summary:   "Agent Client Protocol stdio tee: prompt-turn runs, tool status forks, the read-only permission gate",
		Transport: TransportACP,
		Identify:  acpIdentify,
		Map:       acpMap,
	}
}

func acpIdentify(m Moment) (string, string) {
	hook := acpHook(m.Facts)
	if s := m.Facts.Session; s != "" {
		return hook, s
	}
	if s := Str(m.Raw, "result.sessionId"); s != "" {
		return hook, s
	}
	return hook, UnknownSession
}

// acpUpdateHook is the name of a session/update notification, most of
// what a busy connection carries: spelled once, not built per message.
const acpUpdateHook = "notification:session/update"

// ACPHook is the name the ACP table gives a moment with facts f (its kind
// and method), for a transport that names its moments itself
// (Moment.Hook) as the table would.
func ACPHook(f Facts) string { return acpHook(f) }

// acpHook is the moment's name: its kind and method.
func acpHook(f Facts) string {
	if f.Kind == KindNotification && f.Method == "session/update" {
		return acpUpdateHook
	}
	return f.Kind.String() + ":" + f.Method
}

// Table-state keys: the run a prompt request opened (by rpc id), the turn
// in progress, the names of open tool calls (by call id), calls the editor
// rejected, permission requests seen (by rpc id), runs the editor asked to
// cancel; the session's history being replayed by a load (acpReplay: the
// counts so far, set from the load request until the next prompt) and
// whether the session was started in this record.
const (
	acpCurRun  = "acp.cur"
	acpReplay  = "acp.replay"
	acpStarted = "acp.started"
)

func acpRunKey(id string) string     { return "acp.run:" + id }
func acpToolKey(id string) string    { return "acp.tool:" + id }
func acpDeniedKey(id string) string  { return "acp.denied:" + id }
func acpPermKey(id string) string    { return "acp.perm:" + id }
func acpCancelKey(run string) string { return "acp.cancel:" + run }

// acpAttnMark is the emitter reference of a permission request's event.
func acpAttnMark(id string) string { return "acp.attn:" + id }

// acpRunID is the run id of the prompt turn with rpc id id: the wire id,
// qualified by the tee's token when the tee gave one; the nonce when the
// moment has no id at all.
func acpRunID(m Moment, id string) string {
	if id == "" {
		return m.Nonce
	}
	if t := m.Facts.Instance; t != "" {
		return t + ":" + id
	}
	return id
}

func acpMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	method, id := m.Facts.Method, m.Facts.ID
	cur, _ := st.Get(acpCurRun)
	switch m.Facts.Kind {
	case KindEnd:
		return acpEnd(m, st), nil
	case KindResponse:
		return acpResponse(m, st, method, id), nil
	default:
		switch method {
		case "session/prompt":
			ds := acpReplayed(st, true)
			run := acpRunID(m, id)
			if id != "" {
				st.Set(acpRunKey(id), run)
			}
			st.Set(acpCurRun, run)
			d := Data("trigger", "user")
			if p := gjson.GetBytes(raw, "params.prompt"); p.Exists() {
				d["message_digest"] = redact.DigestJSON([]byte(p.Raw))
				d["prompt"] = acpPromptText(p)
			}
			return append(ds, Draft{Type: "run.started", Run: run, Data: d}), nil
		case "session/load":
			// What the agent sends of the session from here until the next
			// prompt is its history, replayed: counted, never recorded as
			// new work.
			st.Set(acpReplay, "{}")
		case "session/request_permission":
			return acpPermission(raw, st, id, cur), nil
		case "session/cancel":
			if cur != "" {
				st.Set(acpCancelKey(cur), "1")
			}
		case "session/update":
			if cur == "" && acpReplaying(m, st) {
				return nil, nil
			}
			return acpUpdate(m, st, cur), nil
		case "session/close", "session/delete":
			ds := acpReplayed(st, true)
			return append(ds, Draft{Type: "session.ended", Data: Data("reason", SnakeCase(method[len("session/"):]))}), nil
		}
		return []Draft{{Type: vendorEventType("acp", wireSegments(method)...), Run: cur, Severity: debug, Data: map[string]any{}}}, nil
	}
}

// acpTitledByTool are the agents (by their initialize agentInfo name)
// that title a call they announce pending by its tool.
var acpTitledByTool = map[string]bool{"OpenCode": true, "Kimi Code CLI": true}

// acpHistory counts what a load replayed of a session's history: the
// tool calls it announced and all its updates.
type acpHistory struct {
	ToolCalls int `json:"t,omitempty"`
	Updates   int `json:"u,omitempty"`
}

// acpHistoryKinds are the session updates a load replays of the history
// (the agents also send machinery, such as their commands, which is
// mapped as ever).
var acpHistoryKinds = map[string]bool{"tool_call": true, "tool_call_update": true, "user_message_chunk": true,
	"agent_message_chunk": true, "agent_thought_chunk": true, "plan": true}

// acpReplaying reports, and counts, an update of the history a load is
// replaying (from the load request until the next prompt, outside a turn).
func acpReplaying(m Moment, st *State) bool {
	v, loading := st.Get(acpReplay)
	if !loading {
		return false
	}
	kind := Str(m.Raw, "params.update.sessionUpdate")
	if !acpHistoryKinds[kind] {
		return false
	}
	var h acpHistory
	json.Unmarshal([]byte(v), &h)
	h.Updates++
	if kind == "tool_call" {
		h.ToolCalls++
	}
	b, _ := json.Marshal(h)
	st.Set(acpReplay, string(b))
	return true
}

// acpReplayed sums up the history replayed so far in one vendor-scoped
// event (none when nothing was replayed); done ends the replay.
func acpReplayed(st *State, done bool) []Draft {
	v, loading := st.Get(acpReplay)
	if !loading {
		return nil
	}
	if done {
		st.Del(acpReplay)
	} else {
		st.Set(acpReplay, "{}")
	}
	var h acpHistory
	json.Unmarshal([]byte(v), &h)
	if h.Updates == 0 {
		return nil
	}
	return []Draft{{Type: "x.acp.history.replayed", Data: Data("tool_calls", h.ToolCalls, "updates", h.Updates),
		Levels: extLevels(redact.Metadata, "tool_calls", "updates")}}
}

// acpPerm is what the table keeps of a permission request until its
// answer: the run and the call it is about, and each option's kind.
type acpPerm struct {
	Run   string            `json:"r,omitempty"`
	Call  string            `json:"c,omitempty"`
	Kinds map[string]string `json:"k,omitempty"`
}

// acpToolName is a tool call's name: the agent's own tool name where the
// wire states one (claude-agent-acp's _meta.claudeCode.toolName and name,
// Qwen Code's _meta.toolName), else the call's kind (read, edit, execute,
// ...: the protocol's name for what the tool does), else its title. A
// title is display text ("Terminal", "Read File", a path, the command
// itself) and tool names are metadata, so it comes last; but OpenCode
// (1.18.33) and Kimi Code (2.1.0) title a call they announce pending by
// its tool, and only later by what it does. titled says the call is such
// an agent's tool_call announcement.
func acpToolName(call gjson.Result, titled bool) string {
	if t := call.Get("title").String(); titled && t != "" && call.Get("status").String() == "pending" {
		return t
	}
	for _, p := range []string{"_meta.claudeCode.toolName", "_meta.toolName", "name", "kind", "title"} {
		if n := call.Get(p); n.Type == gjson.String && n.Str != "" {
			return n.Str
		}
	}
	return "unknown"
}

// acpPermission maps the editor's permission gate, observed read-only: no
// options claim and no respond_via, the option list as a count. A call the
// request announces in full (its input or status, as Qwen Code 0.15 sends
// for calls that need permission, with no tool_call update before) and no
// tool_call did is requested here first.
func acpPermission(raw []byte, st *State, id, run string) []Draft {
	call := gjson.GetBytes(raw, "params.toolCall")
	callID := call.Get("toolCallId").String()
	title := call.Get("title").String()
	prompt := "Permission requested"
	if title != "" {
		prompt += ": " + title
	}
	d := Data("kind", "permission", "prompt", prompt)
	perm := acpPerm{Run: run, Call: callID, Kinds: map[string]string{}}
	if opts := gjson.GetBytes(raw, "params.options"); opts.IsArray() {
		all := opts.Array()
		d["options_count"] = len(all)
		for _, o := range all {
			perm.Kinds[o.Get("optionId").String()] = o.Get("kind").String()
		}
	}
	var ds []Draft
	if callID != "" {
		_, open := st.Get(acpToolKey(callID))
		_, denied := st.Get(acpDeniedKey(callID))
		if !open && !denied && (call.Get("rawInput").Exists() || call.Get("status").Exists()) {
			ds = append(ds, acpToolRequested(call, st, run, callID, false))
		}
	}
	dr := Draft{Type: "attention.requested", Subject: callID, Run: run, Data: d}
	if id != "" {
		b, _ := json.Marshal(perm)
		st.Set(acpPermKey(id), string(b))
		dr.Mark = acpAttnMark(id)
	}
	return append(ds, dr)
}

// acpToolRequested opens a call announced by a tool_call update (of an
// agent that titles its calls by their tool: titled) or a permission
// request.
func acpToolRequested(call gjson.Result, st *State, run, callID string, titled bool) Draft {
	name := acpToolName(call, titled)
	if callID != "" {
		// A copy: the name is a piece of the call, which may be large
		// (its input), and the state outlives the message.
		st.Set(acpToolKey(callID), strings.Clone(name))
	}
	d := Data("tool", ToolRef(name, callID), "kind", StrOf(call.Get("kind")))
	if in := call.Get("rawInput"); in.Exists() && in.Type != gjson.Null {
		d["args_digest"] = redact.DigestJSON([]byte(in.Raw))
		d["args"] = in.Value()
	}
	return Draft{Type: "tool.requested", Subject: callID, Run: run, Data: d}
}

// acpPromptText is a prompt's text for run.started.prompt (a string): its
// text blocks, one after another; other blocks are counted in the digest
// only.
func acpPromptText(p gjson.Result) string {
	var parts []string
	for _, b := range p.Array() {
		if b.Get("type").String() == "text" {
			parts = append(parts, b.Get("text").String())
		}
	}
	return strings.Join(parts, "\n")
}

// acpEnd closes a prompt turn the transport saw end unanswered: cancelled
// by the user when the editor had asked to cancel it, by shutdown when the
// editor stopped the agent (its signal, or its stdin closed), else failed
// with the reason (the agent exited or died on its own).
func acpEnd(m Moment, st *State) []Draft {
	if m.Facts.Method != "session/prompt" {
		return nil
	}
	run, cancelled := acpCloseTurn(m, st, m.Facts.ID)
	switch {
	case cancelled:
		return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "user")}}
	case m.Facts.Reason == "agent_stopped" || m.Facts.Reason == "client_closed":
		return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "shutdown", "reason", m.Facts.Reason)}}
	}
	reason := m.Facts.Reason
	if reason == "" {
		reason = "agent_exited"
	}
	return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", reason,
		"error", Data("type", "agent_exited"))}}
}

// acpCloseTurn forgets the prompt turn with rpc id id and returns its run
// and whether the editor had asked to cancel it.
func acpCloseTurn(m Moment, st *State, id string) (run string, cancelled bool) {
	if id != "" {
		run, _ = st.Get(acpRunKey(id))
		st.Del(acpRunKey(id))
	}
	if run == "" {
		run = acpRunID(m, id)
	}
	if cur, _ := st.Get(acpCurRun); cur == run {
		st.Del(acpCurRun)
	}
	_, cancelled = st.Get(acpCancelKey(run))
	st.Del(acpCancelKey(run))
	return run, cancelled
}

// acpResponse maps a response by the method of the request it answers.
func acpResponse(m Moment, st *State, method, id string) []Draft {
	raw := m.Raw
	failed := gjson.GetBytes(raw, "error").Exists()
	switch method {
	case "session/new", "session/load":
		if failed {
			if method == "session/load" {
				st.Del(acpReplay)
			}
			return nil
		}
		// A load's replay sent before its result is summed up here; one
		// sent after it, at the next prompt.
		ds := acpReplayed(st, method == "session/new")
		if method == "session/load" {
			st.Set(acpReplay, "{}")
		}
		client := Data("name", "acp")
		if p := m.Facts.Peer; p.Name != "" {
			client = Data("name", p.Name, "version", p.Version)
		}
		if _, started := st.Get(acpStarted); started {
			// A session this record saw start, loaded again (the editor
			// reopened it): the same AEP session goes on.
			return append(ds, Draft{Type: "x.acp.session.loaded", Data: Data("client", client),
				Levels: extLevels(redact.Metadata, "client")})
		}
		st.Set(acpStarted, "1")
		return append(ds, Draft{Type: "session.started", Data: Data("client", client)})
	case "session/prompt":
		run, asked := acpCloseTurn(m, st, id)
		// A turn the agent cuts short (cancelled, or an error) after the
		// tee forwarded the editor's signal or the editor closed its
		// stdin, without the editor asking to cancel it, was cut by the
		// editor stopping the agent (claude-agent-acp answers a SIGTERM
		// "cancelled"), not by the user; after the agent died (its
		// worker answering), by the agent's death.
		if cut := failed || Str(raw, "result.stopReason") == "cancelled"; cut && !asked {
			switch m.Facts.Reason {
			case "agent_stopped", "client_closed":
				return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "shutdown", "reason", m.Facts.Reason)}}
			case "agent_exited":
				return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", m.Facts.Reason, "error", Data("type", "agent_exited"))}}
			}
		}
		if failed {
			return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", "error",
				"error", Data("type", "rpc_error", "message", Str(raw, "error.message")))}}
		}
		switch reason := Str(raw, "result.stopReason"); reason {
		case "cancelled":
			return []Draft{{Type: "run.cancelled", Run: run, Data: Data("by", "user")}}
		case "refusal":
			return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", "refusal")}}
		default:
			// end_turn, max_tokens, max_turn_requests and any later bounded
			// termination: completions with the reason as metadata.
			d := Data("stop_reason", reason)
			if u := acpUsage(gjson.GetBytes(raw, "result")); u != nil {
				d["usage"] = u
			}
			return []Draft{{Type: "run.finished", Run: run, Data: d}}
		}
	case "session/request_permission":
		return acpPermissionOutcome(raw, st, id, failed)
	case "":
		return []Draft{{Type: "x.acp.response.unmatched", Severity: debug, Data: map[string]any{}}}
	}
	// Machinery responses: the request was recorded; the answer adds nothing.
	return nil
}

// acpPermissionOutcome maps the editor's answer to the gate: the selected
// option verbatim via oob with the kind the request gave it (allow_once,
// allow_always, reject_once, reject_always), then resolved when the request
// was seen; a rejected call is denied. A cancelled outcome is a dismissal.
// Every follow-up carries the run of the request.
func acpPermissionOutcome(raw []byte, st *State, id string, failed bool) []Draft {
	mark := ""
	seen := false
	var perm acpPerm
	if id != "" {
		mark = acpAttnMark(id)
		var p string
		if p, seen = st.Get(acpPermKey(id)); seen {
			json.Unmarshal([]byte(p), &perm)
		}
		st.Del(acpPermKey(id))
	}
	resolved := func(res string) Draft {
		return Draft{Type: "attention.resolved", Run: perm.Run, SubjectRef: mark, CauseRef: mark, Data: Data("resolution", res)}
	}
	if failed || Str(raw, "result.outcome.outcome") != "selected" {
		return []Draft{resolved("dismissed")}
	}
	opt := Str(raw, "result.outcome.optionId")
	kind := perm.Kinds[opt]
	ds := []Draft{{Type: "attention.answered", Run: perm.Run, SubjectRef: mark, CauseRef: mark,
		Data: Data("answer", Data("option", opt, "kind", kind), "via", "oob")}}
	if seen {
		ds = append(ds, resolved("answered"))
	}
	if strings.HasPrefix(kind, "reject") && perm.Call != "" {
		if name, open := st.Get(acpToolKey(perm.Call)); open {
			st.Del(acpToolKey(perm.Call))
			st.Set(acpDeniedKey(perm.Call), "1")
			ds = append(ds, Draft{Type: "tool.denied", Subject: perm.Call, Run: perm.Run,
				Data: Data("tool", ToolRef(name, perm.Call), "by", "user_setting")})
		}
	}
	return ds
}

// acpUsage is a prompt result's token usage as AEP usage: the result's
// usage (the schema's, which claude-agent-acp sends), else the token count
// in its _meta quota (Gemini CLI, claude-agent-acp); nil when it has none.
func acpUsage(result gjson.Result) map[string]any {
	u := result.Get("usage")
	if !u.IsObject() {
		u = result.Get("_meta.quota.token_count")
	}
	if !u.IsObject() {
		return nil
	}
	raw := []byte(u.Raw)
	in, out := extInt(raw, "inputTokens"), extInt(raw, "outputTokens")
	if in == nil {
		in = extInt(raw, "input_tokens")
	}
	if out == nil {
		out = extInt(raw, "output_tokens")
	}
	d := Data("gen_ai.usage.input_tokens", in, "gen_ai.usage.output_tokens", out)
	if len(d) == 0 {
		return nil
	}
	return d
}

// acpCost is a usage update's cost {amount, currency} as AEP cost, nil
// without a currency (AEP never states a bare amount).
func acpCost(c gjson.Result) map[string]any {
	cur := c.Get("currency").String()
	if cur == "" || c.Get("amount").Type != gjson.Number {
		return nil
	}
	return Data("currency", cur, "total", c.Get("amount").Float())
}

// acpUpdate maps one session/update notification by its sessionUpdate.
func acpUpdate(m Moment, st *State, run string) []Draft {
	raw := m.Raw
	// The update is read in place from here on (u's members are pieces
	// of u.Raw): a burst's every line used to be copied three times more.
	u := gjson.GetBytes(raw, "params.update")
	kind := u.Get("sessionUpdate").String()
	switch kind {
	case "tool_call":
		callID := StrOf(u.Get("toolCallId"))
		if _, open := st.Get(acpToolKey(callID)); open && callID != "" {
			// Announced already (by a permission request): an update.
			return acpToolStatus(u, st, run, callID, true)
		}
		ds := []Draft{acpToolRequested(u, st, run, callID, acpTitledByTool[m.Facts.Peer.Name])}
		return append(ds, acpToolStatus(u, st, run, callID, false)...)
	case "tool_call_update":
		return acpToolStatus(u, st, run, StrOf(u.Get("toolCallId")), true)
	case "plan":
		counts := map[string]int{}
		entries := u.Get("entries")
		for _, e := range entries.Array() {
			counts[e.Get("status").String()]++
		}
		d := map[string]any{"entries_pending": counts["pending"], "entries_completed": counts["completed"]}
		if n := counts["in_progress"]; n > 0 {
			d["entries_in_progress"] = n
		}
		if entries.Exists() {
			d["entries"] = entries.Value()
		}
		return []Draft{{Type: "x.acp.plan.updated", Run: run, Severity: debug, Data: d,
			Levels: map[string]redact.Level{"entries_pending": redact.Metadata, "entries_completed": redact.Metadata,
				"entries_in_progress": redact.Metadata, "entries": redact.Redacted}}}
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		if !m.Deltas {
			return nil
		}
		d := Data("delta", StrOf(u.Get("content.text")))
		return []Draft{{Type: vendorEventType("acp", wireSegments(kind)...), Run: run, Severity: debug,
			Data: d, Levels: deltaLevels(redact.Metadata)}}
	case "usage_update":
		// The schema's update is the context window: used of size tokens,
		// and the session's cost so far (claude-agent-acp, kimi); the
		// earlier draft's token counts are kept where an agent sends them.
		ur := []byte(u.Raw)
		d := Data("gen_ai.usage.input_tokens", extInt(ur, "usedTokens"), "gen_ai.usage.output_tokens", extInt(ur, "outputTokens"),
			"used", extInt(ur, "used"), "size", extInt(ur, "size"))
		if c := acpCost(gjson.GetBytes(ur, "cost")); c != nil {
			d["cost"] = c
		}
		return []Draft{{Type: "x.acp.usage.updated", Run: run, Severity: debug, Data: d,
			Levels: extLevels(redact.Metadata, "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "used", "size", "cost")}}
	case "":
		return []Draft{{Type: "x.acp.session.update", Run: run, Severity: debug, Data: map[string]any{}}}
	}
	return []Draft{{Type: vendorEventType("acp", wireSegments(kind)...), Run: run, Severity: debug, Data: map[string]any{}}}
}

// acpToolStatus forks a tool call's status: completed and failed close the
// call; any other status is an intermediate update (only for updates: the
// first tool_call's own pending status is the request itself). A call the
// editor rejected is closed already: what the agent reports of it after is
// an update.
func acpToolStatus(u gjson.Result, st *State, run, callID string, update bool) []Draft {
	status := StrOf(u.Get("status"))
	name, open := st.Get(acpToolKey(callID))
	// The name only closing statuses need: an intermediate update, most
	// of a busy call's, does without reading it (five lookups).
	toolName := func() string {
		if !open {
			return acpToolName(u, false)
		}
		return name
	}
	if _, denied := st.Get(acpDeniedKey(callID)); denied && callID != "" {
		update = true
	} else {
		switch status {
		case "completed":
			st.Del(acpToolKey(callID))
			d := Data("tool", ToolRef(toolName(), callID))
			if out := u.Get("rawOutput"); out.Exists() && out.Type != gjson.Null {
				d["result_digest"] = redact.DigestJSON([]byte(out.Raw))
				d["result"] = out.Value()
			}
			return []Draft{{Type: "tool.completed", Subject: callID, Run: run, Data: d}}
		case "failed":
			st.Del(acpToolKey(callID))
			return []Draft{{Type: "tool.failed", Subject: callID, Run: run,
				Data: Data("tool", ToolRef(toolName(), callID), "error", Data("type", "tool_error"))}}
		}
	}
	if !update {
		return nil
	}
	return []Draft{{Type: "x.acp.tool_call.update", Subject: callID, Run: run, Severity: debug,
		Data: Data("status", status), Levels: acpStatusLevels}}
}

// acpStatusLevels declares a tool call update's status, once for every
// update: a draft's levels are only read (by the capture gate).
var acpStatusLevels = extLevels(redact.Metadata, "status")
