package mapping

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// KimiWeb is the Kimi web channel of AEP-0002 Annex A.6 (the kimi-code.json
// ws_modes block): the `kimi web` server's WebSocket event stream, followed
// by `aep-hook follow kimi-web` (TransportKimiWeb). One moment is one
// session event frame in Raw ({type, seq, session_id, timestamp, epoch,
// payload, volatile?}), its type in Facts.Name and session in
// Facts.Session. Its events carry the agent kimi-code: the hook adapter and
// this channel observe the same sessions.
//
// Companion mode (the default: the hook adapter is the core-type
// authority) emits only the channel-visible x.kimi-code.web.{type} family
// with empty data. Primary mode (no hooks registered) maps the wire: the
// vendor's own turn boundaries carry the run pair, tool.call.started and
// tool.result the tool pair (the result names no tool: the name recorded at
// the start is joined by call id; an unpairable result emits nothing),
// approvals and questions the attention lifecycle with no options and no
// respond_via (the channel is read-only; a follower's live control link
// holds them, and only then do they say respond_via control), turn steps the run steps, error
// frames error.raised, everything else x.kimi-code.web.{type}. No session
// lifecycle is fabricated: kap sessions outlive connections. In both modes
// volatile frames (the vendor's do-not-persist marker: deltas, status
// pulses) and the internal permission.approval.* bus echoes never emit;
// token deltas ride x.kimi-code.web.*.delta only behind the deltas opt-in.
func KimiWeb() Vendor {
	return Vendor{
		Name:      "kimi-web",
		Agent:     "kimi-code",
		Summary:   "Kimi web channel: the kimi web server's WebSocket event stream (aep-hook follow kimi-web)",
		Transport: TransportKimiWeb,
		Identify:  identifyFacts,
		Map:       mapKimiWeb,
		Seed:      seedKimiWeb,
		Hold:      kimiWebHold,
	}
}

// Table-state keys of the kimi-web table (prefixed: the hook table shares
// the session's state): the open run per agent, tool names by call id,
// question ids by question text.
const (
	kwRun    = "kw.run:"
	kwTool   = "kw.tool:"
	kwQ      = "kw.q:"
	kwDenied = "kw.denied:"
)

// kwAttn is the reference key of an approval or question.
func kwAttn(id string) string { return "kw.attn:" + id }

// seedKimiWeb prepares what the primary pins presume: the turn a turn.ended
// closes is open.
func seedKimiWeb(_ []byte, m Moment, st *State) {
	if m.Facts.Name == "turn.ended" {
		agent, turn := kwTurn(m.Raw)
		st.Set(kwRun+agent, kwRunID(agent, turn))
	}
}

// kwVendorType is x.kimi-code.web.{type}, each dotted segment of the wire
// type made a legal type token.
func kwVendorType(typ string, extra ...string) string {
	segs := []string{"x", "kimi-code", "web"}
	for _, s := range append(strings.Split(typ, "."), extra...) {
		if s != "" {
			segs = append(segs, SnakeCase(s))
		}
	}
	if len(segs) == 3 {
		segs = append(segs, "unknown", "event")
	}
	return strings.Join(segs, ".")
}

// kwTurn is the agent and turn a frame's payload names ("main" when the
// payload names no agent).
func kwTurn(raw []byte) (agent, turn string) {
	agent = Str(raw, "payload.agentId")
	if agent == "" {
		agent = "main"
	}
	return agent, extStep(raw, "payload.turnId")
}

// kwRunID names the run of one agent's turn.
func kwRunID(agent, turn string) string {
	if agent == "main" {
		return "turn-" + turn
	}
	return agent + "/turn-" + turn
}

// kwDeltaTypes are the stream updates kept behind the deltas opt-in.
var kwDeltaTypes = map[string]bool{"assistant.delta": true, "thinking.delta": true, "tool.call.delta": true}

func mapKimiWeb(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	typ := m.Facts.Name
	if strings.HasPrefix(typ, "permission.approval.") {
		return nil, nil // the bus echo of its event.approval.* wire twin
	}
	if gjson.GetBytes(raw, "volatile").Bool() {
		if !m.Deltas || !kwDeltaTypes[typ] {
			return nil, nil // the vendor's do-not-persist marker
		}
		agent, _ := kwTurn(raw)
		r, _ := st.Get(kwRun + agent)
		return []Draft{{
			Type: kwVendorType(typ), Run: r, Severity: debug,
			Data:   Data("delta", Value(raw, "payload.delta")),
			Levels: deltaLevels(redact.Redacted),
		}}, nil
	}
	if m.Mode != Primary {
		return []Draft{{Type: kwVendorType(typ), Severity: debug, Data: map[string]any{}}}, nil
	}
	return kwPrimary(m, st), nil
}

// kwPrimary maps one frame in primary mode.
func kwPrimary(m Moment, st *State) []Draft {
	raw := m.Raw
	typ := m.Facts.Name
	agent, turn := kwTurn(raw)
	run, _ := st.Get(kwRun + agent)
	in := func(ds ...Draft) []Draft {
		for i := range ds {
			if ds[i].Run == "" {
				ds[i].Run = run
			}
		}
		return ds
	}
	switch typ {
	case "turn.started":
		var ds []Draft
		if run != "" {
			// A turn left open (its end never came: the server went away
			// with it) ends before the next begins, with no claim of who.
			ds = append(ds, kwEndRun(st, agent, run, "run.cancelled", map[string]any{})...)
		}
		run = kwRunID(agent, turn)
		st.Set(kwRun+agent, run)
		if pid := Str(raw, "payload.promptId"); pid != "" {
			st.Set(kwPrompt+agent, clip(pid, maxKeyName))
		}
		trigger := "agent"
		switch Str(raw, "payload.origin.kind") {
		case "user", "skill_activation", "plugin_command":
			trigger = "user"
		case "cron":
			trigger = "schedule"
		}
		return append(ds, Draft{Type: "run.started", Run: run, Data: Data(
			"trigger", trigger, "prompt", Str(raw, "payload.prompt"),
		)})
	case "turn.ended":
		if run == "" {
			return nil // the turn's start was never seen: nothing to close
		}
		switch reason := Str(raw, "payload.reason"); reason {
		case "completed":
			return kwEndRun(st, agent, run, "run.finished", map[string]any{})
		case "cancelled":
			// The channel does not say who cancelled: no "by" claim.
			return kwEndRun(st, agent, run, "run.cancelled", map[string]any{})
		default:
			if reason == "" {
				reason = "unknown"
			}
			return kwEndRun(st, agent, run, "run.failed", Data(
				"reason", reason,
				"error", Data("type", firstNonEmpty(Str(raw, "payload.error.code"), reason), "message", Str(raw, "payload.error.message")),
			))
		}
	case "turn.step.started", "turn.step.completed", "turn.step.interrupted", "turn.step.retrying":
		// A retried step (the model API failed) ends as "retrying"; the
		// retry is the next step.
		d := Draft{Type: "run.step.started", Step: kwStep(raw), Data: map[string]any{}}
		if typ != "turn.step.started" {
			d.Type = "run.step.finished"
			d.Data = Data("status", strings.TrimPrefix(typ, "turn.step."))
		}
		return in(d)
	case "tool.call.started":
		name, call := Str(raw, "payload.name"), Str(raw, "payload.toolCallId")
		if call != "" {
			st.Set(kwTool+call, name)
		}
		return in(toolRequested(raw, name, call, "payload.args"))
	case "tool.result":
		call := Str(raw, "payload.toolCallId")
		name, ok := st.Get(kwTool + call)
		if !ok || call == "" {
			return nil // the result names no tool, and no start named it
		}
		st.Del(kwTool + call)
		if answer, denied := st.Get(kwDenied + call); denied {
			st.Del(kwDenied + call)
			return in(Draft{Type: "tool.denied", Subject: name, CauseRef: answer,
				Data: map[string]any{"tool": ToolRef(name, call), "by": "runtime"}})
		}
		if gjson.GetBytes(raw, "payload.isError").Bool() {
			return in(toolFailed(name, call, "tool_error", Str(raw, "payload.output")))
		}
		return in(toolCompleted(raw, name, call, "payload.output"))
	case "event.approval.requested":
		return in(kwApprovalRequested(raw, st, run, m.Control)...)
	case "event.approval.resolved":
		return in(kwApprovalResolved(raw, st)...)
	case "event.question.requested":
		return in(kwQuestionRequested(raw, st, run, m.Control)...)
	case "event.question.answered":
		if kwSettled(st, Str(raw, "payload.question_id")) {
			return nil
		}
		return in(kwQuestionAnswered(raw, st)...)
	case "event.question.dismissed":
		if kwSettled(st, Str(raw, "payload.question_id")) {
			return nil
		}
		return in(kwQuestionDismissed(raw, st)...)
	case "event.session.work_changed":
		return []Draft{{
			Type: kwVendorType(typ), Severity: debug,
			Data:   Data("busy", extBool(raw, "payload.busy"), "pending_interaction", Str(raw, "payload.pending_interaction")),
			Levels: extLevels(redact.Metadata, "busy", "pending_interaction"),
		}}
	case "error":
		return in(Draft{Type: "error.raised", Data: Data(
			"code", kwErrorCode(raw),
			"error", Data("type", kwErrorCode(raw), "message", Str(raw, "payload.message")),
		)})
	}
	return in(Draft{Type: kwVendorType(typ), Severity: debug, Data: map[string]any{}})
}

// kwStep is the step of a turn.step.* frame: the vendor's step number
// (turn.step.interrupted carries only that), else its step id.
func kwStep(raw []byte) string {
	for _, p := range []string{"payload.step", "payload.stepId"} {
		if s := extStep(raw, p); s != "" {
			return s
		}
	}
	return ""
}

// kwErrorCode is an error frame's code as text, "error" when it has none.
func kwErrorCode(raw []byte) string {
	for _, p := range []string{"payload.code", "payload.name", "payload.error.code"} {
		if s := extStep(raw, p); s != "" {
			return s
		}
	}
	return "error"
}

// kwEndRun closes the agent's open run: asks still pending in it are
// dismissed first (the turn is over), then the terminal.
func kwEndRun(st *State, agent, run, typ string, data map[string]any) []Draft {
	st.Del(kwRun + agent)
	st.Del(kwPrompt + agent)
	ds := kwDismissIn(st, run)
	d := Draft{Type: typ, Run: run, Data: data}
	if cmd, ok := st.Get(ctlCancel); ok && agent == "main" {
		// The turn a control.cancel aborted: its end is the cancel's
		// outcome.
		st.Del(ctlCancel)
		if typ == "run.cancelled" {
			d.Cause, d.Data = cmd, Data("by", "control")
		}
	}
	return append(ds, d)
}

// kwDismissIn dismisses the asks still pending in run.
func kwDismissIn(st *State, run string) []Draft {
	var keys []string
	for k, v := range st.Entries {
		if strings.HasPrefix(k, attnPendingPrefix+kwAttn("")) && v == run {
			keys = append(keys, k)
		}
	}
	sortByTouch(st, keys)
	var ds []Draft
	for _, k := range keys {
		key := strings.TrimPrefix(k, attnPendingPrefix)
		ds = append(ds, settleAttention(st, key, "dismissed", ""))
		st.Set(kwSettledPrefix+key, "1")
	}
	return ds
}

// kwSettledPrefix marks an ask its turn's end dismissed: the vendor's own
// resolution of it may still come (an approval pending when the turn was
// aborted is resolved afterwards), and must not be a second terminal, nor
// one whose subject names no request.
const kwSettledPrefix = "kw.settled:"

// kwSettled reports (and forgets) that the ask id was dismissed when its
// turn ended.
func kwSettled(st *State, id string) bool {
	if id == "" {
		return false
	}
	k := kwSettledPrefix + kwAttn(id)
	_, ok := st.Get(k)
	st.Del(k)
	return ok
}

// kwApprovalRequested observes the vendor's approval card: kind permission,
// the vendor's action text as the prompt, subject the approval id; no
// options and no respond_via (a read-only channel offers no way to
// answer) unless live: the bridge holds it over a live control link, and
// the card carries the vendor's decisions and respond_via control.
func kwApprovalRequested(raw []byte, st *State, run string, live bool) []Draft {
	id := Str(raw, "payload.approval_id")
	tool, call := Str(raw, "payload.tool_name"), Str(raw, "payload.tool_call_id")
	prompt := Str(raw, "payload.action")
	if prompt == "" {
		prompt = "Permission requested: " + tool
	}
	d := Draft{Type: "attention.requested", Subject: id, Data: map[string]any{"kind": "permission", "prompt": prompt}}
	if id == "" {
		return []Draft{d}
	}
	if live {
		d.Data["options"] = kimiWebOptionsData()
		d.Data["respond_via"] = respondVia(true)
	}
	key := kwAttn(id)
	ds := raiseAttention(st, key, run)
	d.Mark = key
	if call != "" {
		d.CauseRef = "tool:" + call
		st.Set(key+":call", call)
	}
	return append(ds, d)
}

// kwApprovalResolved maps the decision: an answer (decision verbatim,
// feedback as its text, out of band), and when the request was seen its
// resolution and, for a rejection, the call denied by the runtime; no
// decision is a dismissal.
func kwApprovalResolved(raw []byte, st *State) []Draft {
	id := Str(raw, "payload.approval_id")
	decision := Str(raw, "payload.decision")
	if kwSettled(st, id) {
		return nil
	}
	if decision == "" {
		return kwSettle(st, id, "dismissed", "")
	}
	key := kwAttn(id)
	answer := Draft{
		Type: "attention.answered", Subject: id, SubjectRef: key, CauseRef: key, Mark: key + ":answer",
		Data: Data("answer", Data("option", decision, "text", Str(raw, "payload.feedback")), "via", "oob"),
	}
	cmd, by, viaControl := controlNote(st, key, decision)
	if viaControl {
		// The decision a control command posted, as the server applied it.
		answer.CauseRef, answer.Cause = "", cmd
		answer.Data["via"] = "control"
		if by != "" {
			answer.Data["by"] = by
		}
	}
	ds := []Draft{answer}
	if _, seen := st.Get(attnPendingPrefix + key); !seen || id == "" {
		return ds
	}
	if call, _ := st.Get(key + ":call"); decision == "rejected" && call != "" {
		// The call's own events follow (2.1.0 starts the tool, then fails
		// it as "not run because the user rejected"): its outcome is a
		// denial by the runtime, recorded there, not twice.
		st.Set(kwDenied+call, key+":answer")
	}
	st.Del(key + ":call")
	resolved := settleAttention(st, key, "answered", key+":answer")
	if viaControl {
		resolved.CauseRef, resolved.Cause = "", cmd
	}
	return append(ds, resolved)
}

// kwSettle resolves the ask id with resolution, its subject the ask.
func kwSettle(st *State, id, resolution, cause string) []Draft {
	key := kwAttn(id)
	if _, seen := st.Get(attnPendingPrefix + key); seen && id != "" {
		st.Del(key + ":call")
		d := settleAttention(st, key, resolution, cause)
		d.Subject = id
		return []Draft{d}
	}
	return []Draft{{Type: "attention.resolved", Subject: id, Data: map[string]any{"resolution": resolution}}}
}

// kwQuestionRequested maps the vendor's question card onto an AEP-0006
// form (kwQuestionFields), the question itself as the prompt when there
// is one; held over a live control link it says respond_via control.
func kwQuestionRequested(raw []byte, st *State, run string, live bool) []Draft {
	id := Str(raw, "payload.question_id")
	qs := gjson.GetBytes(raw, "payload.questions").Array()
	fields := kwQuestionFields(qs)
	for i, q := range qs {
		if label := q.Get("question").String(); id != "" && label != "" {
			st.Set(kwQ+id+"\x00"+clip(label, maxKeyName), fields[i].(map[string]any)["id"].(string))
		}
	}
	prompt := fmt.Sprintf("kimi-code asks %d question%s", len(qs), plural(len(qs)))
	if len(qs) == 1 && qs[0].Get("question").String() != "" {
		prompt = qs[0].Get("question").String()
	}
	d := Draft{Type: "attention.requested", Subject: id, Data: map[string]any{"kind": "form", "prompt": prompt, "fields": fields}}
	if id == "" {
		return []Draft{d}
	}
	if live {
		d.Data["respond_via"] = respondVia(true)
	}
	key := kwAttn(id)
	ds := raiseAttention(st, key, run)
	d.Mark = key
	return append(ds, d)
}

// kwQuestionFields are a question card's form fields: one select field
// per question (its vendor id, the question as the label, the vendor's
// option ids and labels, allow_other as other).
func kwQuestionFields(qs []gjson.Result) []any {
	fields := make([]any, 0, len(qs))
	for i, q := range qs {
		fid := q.Get("id").String()
		if fid == "" {
			fid = fmt.Sprintf("q_%d", i)
		}
		f := map[string]any{"id": fid, "type": "select", "label": q.Get("question").String()}
		choices := []any{}
		for _, o := range q.Get("options").Array() {
			choices = append(choices, map[string]any{"id": o.Get("id").String(), "label": o.Get("label").String()})
		}
		f["choices"] = choices
		if q.Get("allow_other").Bool() {
			f["other"] = true
		}
		if q.Get("multi_select").Bool() || q.Get("multiSelect").Bool() {
			f["multi"] = true
		}
		fields = append(fields, f)
	}
	return fields
}

// kwQuestionAnswered maps the answers: values keyed by the field ids (2.1.0
// keys them by the question's text; they are re-keyed by the questions the
// request named), out of band, and the request's resolution when it was
// seen.
func kwQuestionAnswered(raw []byte, st *State) []Draft {
	id := Str(raw, "payload.question_id")
	key := kwAttn(id)
	values := map[string]any{}
	gjson.GetBytes(raw, "payload.answers").ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if fid, ok := st.Get(kwQ + id + "\x00" + clip(name, maxKeyName)); ok {
			name = fid
		}
		values[name] = v.Value()
		return true
	})
	for k := range st.Entries {
		if strings.HasPrefix(k, kwQ+id+"\x00") {
			st.Del(k)
		}
	}
	answer := Draft{
		Type: "attention.answered", Subject: id, SubjectRef: key, CauseRef: key, Mark: key + ":answer",
		Data: map[string]any{"answer": map[string]any{"values": values}, "via": "oob"},
	}
	return kwAnswered(st, id, answer, "")
}

// kwAnswered completes the answer to question id the server reported
// (option: the one it applied, "" for values): via control, by the
// sender and caused by the command when a command applying that option
// was noted on the request, else out of band; then the request's
// resolution when it was seen.
func kwAnswered(st *State, id string, answer Draft, option string) []Draft {
	key := kwAttn(id)
	cmd, by, viaControl := controlNote(st, key, option)
	if viaControl {
		answer.CauseRef, answer.Cause = "", cmd
		answer.Data["via"] = "control"
		if by != "" {
			answer.Data["by"] = by
		}
	}
	if _, seen := st.Get(attnPendingPrefix + key); !seen || id == "" {
		return []Draft{answer}
	}
	resolved := settleAttention(st, key, "answered", key+":answer")
	if viaControl {
		resolved.CauseRef, resolved.Cause = "", cmd
	}
	return []Draft{answer, resolved}
}

// kwQuestionDismissed settles a dismissed question: dismissed over control
// (a command noted the dismissal on it), the dismissal is the command's
// answer; dismissed in the web UI (or by the server), nothing was
// answered.
func kwQuestionDismissed(raw []byte, st *State) []Draft {
	id := Str(raw, "payload.question_id")
	key := kwAttn(id)
	if option := noteRefused(st, key, kwQuestionDismiss); option != "" {
		answer := Draft{
			Type: "attention.answered", Subject: id, SubjectRef: key, Mark: key + ":answer",
			Data: map[string]any{"answer": map[string]any{"option": option}},
		}
		return kwAnswered(st, id, answer, option)
	}
	st.Del(attnNotePrefix + key)
	return kwSettle(st, id, "dismissed", "")
}
