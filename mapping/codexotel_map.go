package mapping

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/aep-hook/aep-hook/redact"
)

// What Codex 0.171's OTel export needs beyond the flat per-record rule
// (otelProfile.mapRecord), kept in the conversation's table state:
//
//   - Codex runs threads of its own as conversations: the automatic
//     reviewer's assessment of an escalation and the TUI's title generator.
//     Only their first prompt tells them from a user's conversation, so a
//     conversation's start (conversation_starts and the startup_phase
//     records after it) is held until its first other record. A reviewer's
//     thread names the conversation it reviews in its prompt; its records
//     then go to that conversation's AEP session as x.codex.otel.* events
//     naming the thread (thread_id, thread_kind), never as core types, and
//     its prompt, which quotes the reviewed conversation's transcript and
//     tool arguments, counts as full. A title generator's thread names no
//     conversation and is left out of the record.
//   - A resume (a second conversation_starts of one conversation) starts a
//     new AEP session, named and introduced as the hook channel names it
//     (see resumable): in companion mode the hook channel has already named
//     it in the shared state, in primary mode the table names it.
//   - A call's terminal: a decision that denied it is its terminal, so the
//     tool_result Codex sends after it stays a channel event; a failed
//     tool_result whose output says a policy rejected the command (0.171
//     sends no decision then) is a denial by policy; an approval before
//     execution is the call's tool.requested.
//   - Two sse_event response.completed records per response (one with the
//     duration, one with the tokens) are merged into one event.

// Table-state keys of the Codex OTel channel.
const (
	otelStarted    = "otel.started"      // the conversation's start was recorded
	otelHeld       = "otel.held"         // JSON array of records held before the start is decided
	otelThread     = "otel.thread"       // the internal thread's kind: guardian, title
	otelParent     = "otel.parent"       // the conversation a guardian thread reviews
	otelCompleted  = "otel.sse.complete" // a held duration-only response.completed record
	otelApproval   = "otel.approval_policy"
	otelSandbox    = "otel.sandbox_policy"
	otelDeniedCall = "otel.denied." // + call_id: a decision denied this call
	maxOtelHeld    = 8              // held start records beyond this are let through
)

// Codex's internal threads, as their first prompt shows them.
var (
	guardianPrompt = "The following is the Codex agent history whose request action you are assessing"
	titlePrompt    = "Generate a concise, single-line task title"
	// Compiled on first use: every hook process links this table, and a
	// regexp compiled at init costs each of them more than its whole hook.
	reviewedID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`Reviewed Codex session id: ([0-9A-Za-z_-]+)`)
	})
)

// codexOtelMap is the Codex OTel channel's Map.
func codexOtelMap(p *otelProfile, m Moment, st *State) ([]Draft, error) {
	r, err := otelRecord(m)
	if err != nil {
		return nil, err
	}
	c := codexConv{p: p, m: m, st: st}
	return c.route(c.record(r)), nil
}

// codexConv maps the records of one conversation on its table state.
type codexConv struct {
	p  *otelProfile
	m  Moment
	st *State
}

// record maps one record, deciding held starts on the way.
func (c codexConv) record(r *OTelRecord) []Draft {
	name := r.name()
	if kind, _ := c.st.getOwn(otelThread); kind != "" {
		return c.internal(r, kind)
	}
	_, started := c.st.getOwn(otelStarted)
	if name == "codex.conversation_starts" && started {
		return c.resume(r)
	}
	if !started {
		held := c.held()
		if (name == "codex.conversation_starts" || name == "codex.startup_phase") && len(held) < maxOtelHeld {
			c.hold(append(held, r))
			return nil
		}
		if name == "codex.user_prompt" {
			if kind, parent := codexThread(r.attrs().str("prompt")); kind != "" {
				c.st.Set(otelThread, kind)
				c.st.Set(otelParent, parent)
				c.st.Del(otelHeld)
				var ds []Draft
				for _, h := range held {
					ds = append(ds, c.internal(h, kind)...)
				}
				return append(ds, c.internal(r, kind)...)
			}
		}
		c.st.Del(otelHeld)
		c.st.Set(otelStarted, "1")
		var ds []Draft
		for _, h := range held {
			ds = append(ds, c.draft(h)...)
		}
		return append(ds, c.draft(r)...)
	}
	return c.draft(r)
}

// route addresses the drafts to the AEP session the conversation's
// moments go to after a resume, unless a draft names its own.
func (c codexConv) route(ds []Draft) []Draft {
	if session := aepSession(c.st); session != "" {
		for i := range ds {
			if ds[i].Session == "" {
				ds[i].Session = session
			}
		}
	}
	return ds
}

// held returns the records held before the conversation's start is decided.
func (c codexConv) held() []*OTelRecord {
	s, ok := c.st.getOwn(otelHeld)
	if !ok {
		return nil
	}
	var rs []*OTelRecord
	if json.Unmarshal([]byte(s), &rs) != nil {
		return nil
	}
	for _, r := range rs {
		r.Attributes, _ = numbers(r.Attributes).(map[string]any)
		r.Resource, _ = numbers(r.Resource).(map[string]any)
		if r.Attributes == nil {
			r.Attributes = map[string]any{}
		}
	}
	return rs
}

// hold stores the held records, each cut to what a state file may keep.
func (c codexConv) hold(rs []*OTelRecord) {
	kept := make([]*OTelRecord, len(rs))
	for i, r := range rs {
		kept[i] = c.storable(r)
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return
	}
	c.st.Set(otelHeld, string(b))
}

// storable is r as the table state may hold it: the state file sits below
// every ceiling, so only identity and metadata-grade attributes, and of the
// resource only the service's name and version, are kept (a held start
// loses its host name and any content above metadata).
func (c codexConv) storable(r *OTelRecord) *OTelRecord {
	out := *r
	out.Body = nil
	a := r.attrs()
	out.Attributes, out.Flat = make(map[string]any, a.len()), nil
	a.each(func(k string, v any) {
		if c.p.identity[k] || c.p.levels[k] == redact.Metadata {
			out.Attributes[k] = v
		}
	})
	out.Resource = Data("service.name", attrStr(r.Resource, "service.name"), "service.version", attrStr(r.Resource, "service.version"))
	return &out
}

// numbers turns the json.Number values a held record decodes to back into
// the int64 / float64 the receiver decoded.
func numbers(v any) any {
	switch x := v.(type) {
	case float64:
		if n, ok := attrNumber(x); ok {
			return n
		}
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// codexThread tells Codex's internal threads by their first prompt: the
// kind ("guardian", "title"; "" for a user's conversation) and, for a
// guardian, the conversation it reviews.
func codexThread(prompt string) (kind, parent string) {
	switch {
	case strings.HasPrefix(prompt, guardianPrompt):
		if m := reviewedID().FindStringSubmatch(prompt); m != nil {
			return "guardian", m[1]
		}
		return "guardian", ""
	case strings.HasPrefix(prompt, titlePrompt):
		return "title", ""
	}
	return "", ""
}

// internal maps a record of an internal thread: a guardian's into the
// reviewed conversation's session, as channel events naming the thread;
// anything else (a title generator, a guardian naming no conversation)
// nothing.
func (c codexConv) internal(r *OTelRecord, kind string) []Draft {
	parent, _ := c.st.Get(otelParent)
	if kind != "guardian" || parent == "" {
		return nil
	}
	d := c.companion(r)
	levels := make(map[string]redact.Level, len(d.Levels)+1)
	for k, l := range d.Levels {
		levels[k] = l
	}
	levels["prompt"] = redact.Full // it quotes the reviewed transcript and tool arguments
	d.Levels = levels
	if d.Fields != nil {
		for i := range d.Fields {
			d.Fields[i].Level = levelOf(levels, d.Fields[i].Key)
		}
		d.Fields = setField(d.Fields, "thread_id", r.attrs().str("conversation.id"), levelOf(levels, "thread_id"))
		d.Fields = setField(d.Fields, "thread_kind", kind, levelOf(levels, "thread_kind"))
	} else {
		d.Data["thread_id"] = r.attrs().str("conversation.id")
		d.Data["thread_kind"] = kind
	}
	d.Session = parent
	return []Draft{d}
}

// companion is the record's channel event, timed by the record.
func (c codexConv) companion(r *OTelRecord) Draft {
	name := r.name()
	var d Draft
	if suffix, ok := c.p.known[name]; ok {
		d = c.p.companion(r, suffix, c.m.Arena)
	} else {
		d = c.p.unknown(r, name)
	}
	d.Time = r.recordTime()
	return d
}

// resume starts the new AEP session of a resumed conversation. In
// companion mode the hook channel names it (its SessionStart{resume}
// arrives first and resets the shared state, so this record then reads as
// a first start); in primary mode the table names it the same way.
func (c codexConv) resume(r *OTelRecord) []Draft {
	conv := r.attrs().str("conversation.id")
	from := firstNonEmpty(aepSession(c.st), conv)
	suffix := c.m.Nonce
	if suffix == "" {
		suffix = "1"
	}
	*c.st = State{}
	c.st.SetOwn(stateAEPSession, conv+"~r"+suffix)
	c.st.Set(otelStarted, "1")
	ds := c.draft(r)
	for i := range ds {
		if ds[i].Type == "session.started" {
			ds[i] = withData(ds[i], "trigger", "resume", "resumed_from", from)
		}
	}
	return ds
}

// draft maps one record of a user's conversation.
func (c codexConv) draft(r *OTelRecord) []Draft {
	name := r.name()
	a := r.attrs()
	if name == "codex.conversation_starts" {
		c.st.Set(otelApproval, a.str("approval_policy"))
		c.st.Set(otelSandbox, a.str("sandbox_policy"))
	}
	if name == "codex.sse_event" && a.str("event.kind") == "response.completed" {
		return c.completed(r)
	}
	var ds []Draft
	if held := c.heldCompleted(); held != nil && name != "codex.turn_ttft" {
		// Its pair never came (turn_ttft, which Codex sends between the
		// two, does not say so): it stands alone.
		c.st.Del(otelCompleted)
		ds = append(ds, c.companion(held))
	}
	mapped := []Draft(nil)
	if c.m.Mode == Primary {
		mapped = c.primary(r, name)
	}
	if mapped == nil {
		mapped = c.m.Arena.one(c.companion(r))
	}
	at := r.recordTime()
	for i := range mapped {
		if mapped[i].Time.IsZero() {
			mapped[i].Time = at
		}
	}
	if ds == nil {
		return mapped
	}
	return append(ds, mapped...)
}

// completed merges Codex's two response.completed records of one response:
// the one without token counts is held, and the next one with them is
// emitted with its duration; any other record but the turn_ttft Codex
// sends between them lets a held one through first.
func (c codexConv) completed(r *OTelRecord) []Draft {
	held := c.heldCompleted()
	if !hasTokens(r.attrs()) {
		var out []Draft
		if held != nil {
			out = append(out, c.companion(held))
		}
		c.keepCompleted(r)
		return out
	}
	c.st.Del(otelCompleted)
	if held != nil {
		if !r.attrs().has("duration_ms") {
			if d, ok := held.attrs().get("duration_ms"); ok {
				merged := *r
				a := r.attrs()
				merged.Attributes, merged.Flat = make(map[string]any, a.len()+1), nil
				a.each(func(k string, v any) { merged.Attributes[k] = v })
				merged.Attributes["duration_ms"] = d
				r = &merged
			}
		}
	}
	return []Draft{c.companion(r)}
}

// hasTokens reports whether an sse_event record carries token counts.
func hasTokens(a attrView) bool {
	for _, k := range []string{"input_token_count", "output_token_count"} {
		if _, ok := attrNumber(a.val(k)); ok {
			return true
		}
	}
	return false
}

func (c codexConv) heldCompleted() *OTelRecord {
	s, ok := c.st.getOwn(otelCompleted)
	if !ok {
		return nil
	}
	var r OTelRecord
	if json.Unmarshal([]byte(s), &r) != nil {
		return nil
	}
	r.Attributes, _ = numbers(r.Attributes).(map[string]any)
	r.Resource, _ = numbers(r.Resource).(map[string]any)
	if r.Attributes == nil {
		return nil
	}
	return &r
}

func (c codexConv) keepCompleted(r *OTelRecord) {
	if b, err := json.Marshal(c.storable(r)); err == nil {
		c.st.Set(otelCompleted, string(b))
	}
}

// primary is the primary-mode core subset of a user's conversation's
// record; nil keeps its channel event.
func (c codexConv) primary(r *OTelRecord, name string) []Draft {
	a := r.attrs()
	tool := otelToolRef(r, "tool_name", "call_id")
	subject := a.str("tool_name")
	call := a.str("call_id")
	switch name {
	case "codex.conversation_starts":
		// session.started has no member for the policies: the channel
		// event beside it keeps them (and a policy denial names them).
		return []Draft{codexSessionStarted(r), c.companion(r)}
	case "codex.tool_result":
		if call != "" {
			if _, denied := c.st.Get(otelDeniedCall + call); denied {
				c.st.Del(otelDeniedCall + call)
				return nil // the denial was the call's terminal
			}
		}
		if !otelFailed(a, "success", "error") {
			d := Data("tool", tool)
			if n, ok := attrNumber(a.val("duration_ms")); ok {
				d["duration_ms"] = n
			}
			if out, ok := a.get("output"); ok && out != nil {
				d["result"] = out
				d["result_digest"] = redact.Digest(out)
			}
			return []Draft{{Type: "tool.completed", Subject: subject, Data: d}}
		}
		out := a.str("output")
		if rule := c.policyRule(out); rule != "" {
			return []Draft{{Type: "tool.denied", Subject: subject, Data: Data("tool", tool, "by", "policy", "rule", rule)}}
		}
		d := Data("tool", tool, "error", Data("type", "tool_error", "message", firstNonEmpty(a.str("error"), out)))
		if n, ok := attrNumber(a.val("duration_ms")); ok {
			d["duration_ms"] = n
		}
		return []Draft{{Type: "tool.failed", Subject: subject, Data: d}}
	case "codex.tool_decision":
		decision := strings.ToLower(a.str("decision"))
		if !codexDeny(decision) {
			if !strings.HasPrefix(decision, "approved") {
				return nil
			}
			// The decision comes before the call runs: its request, and
			// the channel event that says who approved it.
			return []Draft{{Type: "tool.requested", Subject: subject, Data: Data("tool", tool)}, c.companion(r)}
		}
		var by string
		switch src := strings.ToLower(a.str("source")); {
		case src == "config":
			by = "policy"
		case strings.HasPrefix(src, "auto"):
			// automation, automated and Codex's AutomatedReviewer (the
			// automatic review --approve-for-me runs): no human decided.
			by = "runtime"
		default:
			return []Draft{} // a user deny is a human decision, not a block
		}
		if call != "" {
			c.st.Set(otelDeniedCall+call, "1")
		}
		return []Draft{{Type: "tool.denied", Subject: subject, Data: Data("tool", tool, "by", by)}}
	}
	return nil
}

// policyRule names the policy that refused a call, from the failed
// tool_result's output (Codex 0.171 sends no decision for these), "" when
// the output tells no refusal: the approval policy refusing an escalation,
// or an execpolicy rule (the command was Rejected before it ran).
func (c codexConv) policyRule(out string) string {
	switch {
	case strings.HasPrefix(out, "approval policy is ") && strings.Contains(out, "reject command"):
		rule := "approval_policy"
		if v, _ := c.st.Get(otelApproval); v != "" {
			rule += "=" + v
		}
		if v, _ := c.st.Get(otelSandbox); v != "" {
			rule += ", sandbox_policy=" + v
		}
		return rule
	case strings.Contains(out, `message: "Rejected(`):
		return "execpolicy"
	}
	return ""
}

// codexSessionStarted is the primary session.started of a conversation:
// the client with its version (the resource's service.version, else the
// record's app.version) and the model.
func codexSessionStarted(r *OTelRecord) Draft {
	version := firstNonEmpty(attrStr(r.Resource, "service.version"), r.attrs().str("app.version"))
	return Draft{Type: "session.started", Data: Data(
		"client", Data("name", "codex", "version", version),
		"gen_ai.request.model", r.attrs().str("model"),
	)}
}

// codexDeny reports whether a tool_decision value is a deny.
func codexDeny(decision string) bool {
	switch strings.ToLower(decision) {
	case "deny", "denied", "reject", "rejected", "abort":
		return true
	}
	return false
}
