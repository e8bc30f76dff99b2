package mapping

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// This file holds the machinery the Claude-Code-shaped hook tables share on
// top of fleet.go's runs and tool events: the attention lifecycle (permission
// cards, AskUserQuestion and MCP-elicitation forms, their honest settlement
// when a later hook or the session's end makes them moot), the Notification
// split, and SessionEnd reason normalization.
//
// Pending attention requests live in the table state under
// attnPendingPrefix+key (value: the run the request was raised in), the key
// being the emitter reference the request event is marked with, so every
// later lifecycle event sets SubjectRef (and CauseRef) to it.

const (
	// attnPendingPrefix marks an attention request still awaiting its
	// terminal; the value is the run it was raised in.
	attnPendingPrefix = "attn-pending:"
	// attnFormPrefix holds a pending form's structural field specs (for the
	// metadata stand-in of answer.values).
	attnFormPrefix = "attn-form:"
	// attnAllowPrefix marks a pending permission request about one tool
	// call whose running proves it was allowed; the value is the request's
	// permissive option id ("" when it offers none).
	attnAllowPrefix = "attn-allow:"
	// maxFormSpec bounds the stored field specs of one form.
	maxFormSpec = 8 << 10
	// maxPromptDetail bounds the tool detail quoted in a permission prompt.
	maxPromptDetail = 2048
	// maxKeyName bounds vendor names folded into reference keys.
	maxKeyName = 128
)

// permissionOptions is the allow/deny status vocabulary of OpenCode's
// plugin permission.ask hook as a card's options; the labels are fixed
// structural strings.
func permissionOptions() []any {
	return []any{
		map[string]any{"id": "allow", "label": "Allow"},
		map[string]any{"id": "deny", "label": "Deny"},
	}
}

// permissiveOption is the id of permissionOptions' allowing choice.
const permissiveOption = "allow"

// respondVia is a request's respond_via (AEP-0008): control only when the
// control loop holds this very moment live (Moment.Control), else the
// agent's own UI (oob), where every answer then arrives.
func respondVia(live bool) []any {
	if live {
		return []any{"control"}
	}
	return []any{"oob"}
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// toolAttentionKey is the reference key of an attention request about one
// tool call when the request names no call id (Claude-Code-shaped
// PermissionRequest payloads carry no tool_use_id): the call is named by
// tool name and args digest, which the later PostToolUse /
// PostToolUseFailure / PermissionDenied of the same call reproduce. A top-level "description" is left out of the digest: Codex
// adds one to the PermissionRequest's tool_input that its tool hooks lack.
// Neither are the "answers" and "annotations" Claude Code writes into an
// answered AskUserQuestion's tool_input by its PostToolUse, nor the trailing
// line breaks of a command.
func toolAttentionKey(name string, input []byte) string {
	var digest string
	if m, ok := gjson.ParseBytes(input).Value().(map[string]any); !ok {
		// Digested as given; an object is digested once, with the
		// members above left out (digesting it as given first too cost a
		// Claude Code permission request a tenth of its firing).
		digest = redact.DigestJSON(input)
	} else {
		delete(m, "description")
		if cmd, ok := m["command"].(string); ok {
			// Codex's apply_patch PermissionRequest drops the patch's
			// trailing newline its tool hooks keep.
			m["command"] = strings.TrimRight(cmd, "\r\n")
		}
		if name == "AskUserQuestion" {
			delete(m, "answers")
			delete(m, "annotations")
		}
		digest = redact.Digest(m)
	}
	return "attn:tool:" + clip(name, maxKeyName) + ":" + digest
}

// elicitationKey is the reference key of an MCP elicitation request: the
// server name plus the elicitation id when the vendor gives one.
func elicitationKey(raw []byte) string {
	return "attn:elicit:" + clip(Str(raw, "mcp_server_name"), maxKeyName) + ":" +
		clip(Str(raw, "elicitation_id"), maxKeyName)
}

// permissionPrompt is the human-readable card text of a permission request:
// "Permission requested: {tool} — {command or target} ({description})".
// It is real content; the gate redacts it at the attention ceiling and
// synthesizes "{agent} requests permission: {tool}" at metadata.
func permissionPrompt(tool string, input []byte) string {
	p := "Permission requested: " + tool
	detail := ""
	cmd := gjson.GetBytes(input, "command")
	switch {
	case cmd.Type == gjson.String:
		detail = cmd.Str
	case cmd.IsArray():
		var parts []string
		for _, a := range cmd.Array() {
			parts = append(parts, a.String())
		}
		detail = strings.Join(parts, " ")
	}
	for _, f := range []string{"file_path", "path", "notebook_path", "url", "pattern", "query"} {
		if detail != "" {
			break
		}
		detail = Str(input, f)
	}
	if detail != "" {
		p += " — " + clip(detail, maxPromptDetail)
	}
	if desc := Str(input, "description"); desc != "" {
		if detail == "" {
			p += " — " + clip(desc, maxPromptDetail)
		} else {
			p += " (" + clip(desc, maxPromptDetail) + ")"
		}
	}
	return p
}

// raiseAttention records key as pending in run and returns the drafts that
// settle an earlier request still pending under the same key (a re-raised
// identical request), so no request is ever left without a terminal.
func raiseAttention(st *State, key, run string) []Draft {
	var ds []Draft
	if _, ok := st.Get(attnPendingPrefix + key); ok {
		ds = append(ds, settleAttention(st, key, "dismissed", ""))
	}
	st.Set(attnPendingPrefix+key, run)
	return ds
}

// settleAttention closes the pending request key with attention.resolved
// and forgets it. cause is the reference key of the settling event, "" to
// cause-link the request itself.
func settleAttention(st *State, key, resolution, cause string) Draft {
	run, _ := st.Get(attnPendingPrefix + key)
	st.Del(attnPendingPrefix + key)
	st.Del(attnFormPrefix + key)
	st.Del(attnAllowPrefix + key)
	st.Del(attnNotePrefix + key)
	if cause == "" {
		cause = key
	}
	return Draft{
		Type:       "attention.resolved",
		Run:        run,
		SubjectRef: key,
		CauseRef:   cause,
		Data:       map[string]any{"resolution": resolution},
	}
}

// expireAttention ends the open request key as expired unanswered
// (attention.timeout): what an opt-in gate's request becomes when it failed
// open (its budget passed, the relay went away) and the call went on
// without anyone answering it.
func expireAttention(st *State, key string) Draft {
	d := settleAttention(st, key, "", "")
	d.Type, d.Data = "attention.timeout", map[string]any{}
	return d
}

// permissionRequest is a Claude-Code-shaped PermissionRequest: an
// attention.requested card (kind permission, the vendor's menu as options,
// respond_via by whether the loop holds the moment live) marked for its
// later settlement, or the AskUserQuestion form when the tool is the agent
// asking the human (AEP-0006, the Annex A deviation). A request that names
// its call (tool_use_id) is keyed and cause-linked by it; otherwise by
// toolAttentionKey.
func permissionRequest(m Moment, agent string, menu func(raw []byte) permissionMenu, run string, st *State) []Draft {
	raw := m.Raw
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_use_id")
	input := Raw(raw, "tool_input")
	key := toolAttentionKey(tool, input)
	if call != "" {
		key = callAttentionKey(call)
	}
	ds := raiseAttention(st, key, run)
	if tool == "AskUserQuestion" {
		data, meta := askUserQuestionForm(agent, input)
		data["respond_via"] = respondVia(m.Control)
		return append(ds, Draft{Type: "attention.requested", Subject: tool, Run: run,
			Mark: key, Data: data, Meta: meta})
	}
	mn := menu(raw)
	st.Set(attnAllowPrefix+key, mn.ran)
	d := Draft{
		Type: "attention.requested", Subject: tool, Run: run, Mark: key,
		Data: map[string]any{
			"kind":        "permission",
			"prompt":      permissionPrompt(tool, input),
			"options":     mn.options,
			"respond_via": respondVia(m.Control),
		},
	}
	if call != "" {
		d.CauseRef = "tool:" + call
	}
	return append(ds, d)
}

// callAttentionKey is the reference key of an attention request that names
// the tool call it is about.
func callAttentionKey(call string) string { return "attn:call:" + clip(call, maxKeyName) }

// pendingToolAttention finds the request pending for the tool call a
// PostToolUse, PostToolUseFailure or PermissionDenied reports: by the
// call's id where the request named it, else by toolAttentionKey.
func pendingToolAttention(raw []byte, st *State) (string, bool) {
	if call := Str(raw, "tool_use_id"); call != "" {
		if _, ok := st.Get(attnPendingPrefix + callAttentionKey(call)); ok {
			return callAttentionKey(call), true
		}
	}
	key := toolAttentionKey(Str(raw, "tool_name"), Raw(raw, "tool_input"))
	_, ok := st.Get(attnPendingPrefix + key)
	return key, ok
}

// settleToolAttention dismisses the request pending for the tool call a
// PermissionDenied reports: the call was refused with no answer on record
// (the auto-mode classifier's deny), so the request's one terminal is
// resolved{dismissed}.
func settleToolAttention(raw []byte, st *State) []Draft {
	key, ok := pendingToolAttention(raw, st)
	if !ok {
		return nil
	}
	return []Draft{settleAttention(st, key, "dismissed", "")}
}

// toolRan settles the request pending for a tool call that then ran (its
// PostToolUse or PostToolUseFailure, an interrupted run included). A
// permission card was answered: the call could only run once allowed, in
// the agent's own dialog or by a hook of the user's, and nobody says who,
// so attention.answered carries the allowing option (only when the menu has
// one: with several, the record cannot tell which was chosen), via oob and
// no by, then resolved{answered}. Any other request (a form the call's outcome
// does not answer) is dismissed, as before.
func toolRan(raw []byte, st *State) []Draft {
	key, ok := pendingToolAttention(raw, st)
	if !ok {
		return nil
	}
	option, permission := st.Get(attnAllowPrefix + key)
	if !permission {
		return []Draft{settleAttention(st, key, "dismissed", "")}
	}
	answer := map[string]any{}
	if option != "" {
		answer["option"] = option
	}
	return answeredOOB(st, key, answer, nil)
}

// answeredOOB answers the pending request key out of band (in the agent's
// own UI): attention.answered{answer, via oob}, in the run the request was
// raised in and marked for the resolution's cause, then resolved{answered}.
// meta, when set, is the answer's structural stand-in (redact.Content.Meta).
func answeredOOB(st *State, key string, answer, meta map[string]any) []Draft {
	run, _ := st.Get(attnPendingPrefix + key)
	ansKey := key + ":answered"
	answered := Draft{Type: "attention.answered", Run: run, SubjectRef: key, CauseRef: key, Mark: ansKey,
		Data: map[string]any{"answer": answer, "via": "oob"}}
	if meta != nil {
		answered.Meta = map[string]any{"answer": meta}
	}
	return []Draft{answered, settleAttention(st, key, "answered", ansKey)}
}

// dismissPending closes every request still pending with
// resolved{dismissed}, oldest first: at a run's end (the turn is over, so
// its requests were settled in the agent's own UI or abandoned) and before
// session.ended (AEP-0002 §7 rule 2).
func dismissPending(st *State) []Draft {
	type pend struct {
		key   string
		stamp uint64
	}
	var ps []pend
	for k := range st.Entries {
		if strings.HasPrefix(k, attnPendingPrefix) {
			ps = append(ps, pend{k, st.Touch[k]})
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].stamp != ps[j].stamp {
			return ps[i].stamp < ps[j].stamp
		}
		return ps[i].key < ps[j].key
	})
	ds := make([]Draft, 0, len(ps))
	for _, p := range ps {
		ds = append(ds, settleAttention(st, strings.TrimPrefix(p.key, attnPendingPrefix), "dismissed", ""))
	}
	return ds
}

// drainTurn closes what a turn left open when its terminal hook never
// fired: pending requests dismissed, then the run cancelled with no claim of
// who cancelled it (fleet.go's drainRun).
func drainTurn(st *State) []Draft {
	if currentRun(st) == "" {
		return nil
	}
	return append(dismissPending(st), drainRun(st)...)
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// askUserQuestionForm is AEP-0006's form for Claude Code's AskUserQuestion
// tool input: one field per question (select, required, other:true always,
// multi mirroring multiSelect), field and choice ids 1-based indexes, label
// "{header}: {question}". The prompt is structural at every ceiling
// ("{agent} asks N questions"). meta is the metadata stand-in: labels
// degraded to the ids.
func askUserQuestionForm(agent string, input []byte) (data, meta map[string]any) {
	data, meta, _ = questionsForm(agent, gjson.GetBytes(input, "questions").Array(), "multiSelect", "")
	return data, meta
}

// questionsForm builds the AskUserQuestion-shaped form of a list of
// questions: multiField names the member that makes a question multi-select,
// customField (when set) the member whose false value withholds the free
// "other" answer (absent means allowed). labels are each question's choice
// labels, for matching a vendor's answer back to choice ids.
func questionsForm(agent string, qs []gjson.Result, multiField, customField string) (data, meta map[string]any, labels [][]string) {
	prompt := fmt.Sprintf("%s asks %d question%s", agent, len(qs), plural(len(qs)))
	fields := make([]any, 0, len(qs))
	metaFields := make([]any, 0, len(qs))
	for i, q := range qs {
		id := strconv.Itoa(i + 1)
		label := q.Get("question").String()
		if h := q.Get("header").String(); h != "" {
			label = h + ": " + label
		}
		opts := q.Get("options").Array()
		f := map[string]any{"id": id, "label": label, "required": true}
		mf := map[string]any{"id": id, "label": id, "required": true}
		var ls []string
		if len(opts) == 0 {
			f["type"], mf["type"] = "string", "string"
		} else {
			choices := make([]any, 0, len(opts))
			metaChoices := make([]any, 0, len(opts))
			for j, o := range opts {
				cid := strconv.Itoa(j + 1)
				choices = append(choices, map[string]any{"id": cid, "label": o.Get("label").String()})
				metaChoices = append(metaChoices, map[string]any{"id": cid, "label": cid})
				ls = append(ls, o.Get("label").String())
			}
			f["type"], mf["type"] = "select", "select"
			other := customField == "" || q.Get(customField).Type != gjson.False
			if other {
				f["other"], mf["other"] = true, true
			}
			f["choices"], mf["choices"] = choices, metaChoices
			if q.Get(multiField).Bool() {
				f["multi"], mf["multi"] = true, true
			}
		}
		fields = append(fields, f)
		metaFields = append(metaFields, mf)
		labels = append(labels, ls)
	}
	data = map[string]any{"kind": "form", "prompt": prompt, "fields": fields}
	meta = map[string]any{"prompt": prompt, "fields": metaFields}
	return data, meta, labels
}

// formSpec is the structural part of one form field, kept in the table
// state so the answer's metadata stand-in can tell structural values (ids,
// numbers, booleans) from free text, and the gate which answers are
// secrets (redact.SecretFields judged the request's schema and words).
type formSpec struct {
	ID      string   `json:"i"`
	Type    string   `json:"t"`
	Multi   bool     `json:"m,omitempty"`
	Choices []string `json:"c,omitempty"`
	Secret  bool     `json:"s,omitempty"`
}

// elicitationSchema returns the requested schema of an Elicitation payload
// (the vendor's snake_case field or MCP's own camelCase spelling).
func elicitationSchema(raw []byte) gjson.Result {
	if s := gjson.GetBytes(raw, "requested_schema"); s.Exists() {
		return s
	}
	return gjson.GetBytes(raw, "requestedSchema")
}

// enumChoices reads an enum's choices: values as ids, display names
// (enumNames, or oneOf/anyOf const+title) as labels.
func enumChoices(p gjson.Result) (ids, labels []string) {
	if e := p.Get("enum"); e.IsArray() {
		names := p.Get("enumNames").Array()
		for i, v := range e.Array() {
			ids = append(ids, v.String())
			if i < len(names) && names[i].String() != "" {
				labels = append(labels, names[i].String())
			} else {
				labels = append(labels, v.String())
			}
		}
		return ids, labels
	}
	for _, alt := range []string{"oneOf", "anyOf"} {
		for _, o := range p.Get(alt).Array() {
			c := o.Get("const")
			if !c.Exists() {
				continue
			}
			ids = append(ids, c.String())
			if t := o.Get("title").String(); t != "" {
				labels = append(labels, t)
			} else {
				labels = append(labels, c.String())
			}
		}
	}
	return ids, labels
}

// elicitationForm is AEP-0006's form for an MCP elicitation/create request
// (the Elicitation hook's message + restricted flat schema): field ids are
// the property keys, enum choice ids the enum values (both structural),
// labels the titles / enum names (content), enums closed (no other). meta is
// the metadata stand-in: prompt "{agent} requests input (N fields)", labels
// degraded to the ids. spec is the structural spec for the answer's gate.
func elicitationForm(agent string, raw []byte) (data, meta map[string]any, spec []formSpec) {
	schema := elicitationSchema(raw)
	required := map[string]bool{}
	for _, r := range schema.Get("required").Array() {
		required[r.String()] = true
	}
	var fields, metaFields []any
	var judged []redact.FormField
	schema.Get("properties").ForEach(func(k, p gjson.Result) bool {
		id := k.String()
		label := p.Get("title").String()
		if label == "" {
			label = id
		}
		f := map[string]any{"id": id, "label": label, "required": required[id]}
		mf := map[string]any{"id": id, "label": id, "required": required[id]}
		fs := formSpec{ID: id}
		src, multi := p, false
		if p.Get("type").String() == "array" {
			src, multi = p.Get("items"), true
		}
		if ids, labels := enumChoices(src); len(ids) > 0 {
			choices := make([]any, len(ids))
			metaChoices := make([]any, len(ids))
			for i := range ids {
				choices[i] = map[string]any{"id": ids[i], "label": labels[i]}
				metaChoices[i] = map[string]any{"id": ids[i], "label": ids[i]}
			}
			fs.Type, fs.Choices, fs.Multi = "select", ids, multi
			f["choices"], mf["choices"] = choices, metaChoices
			if multi {
				f["multi"], mf["multi"] = true, true
			}
		} else {
			switch p.Get("type").String() {
			case "number", "integer":
				fs.Type = "number"
				for from, to := range map[string]string{"minimum": "min", "maximum": "max"} {
					if v := p.Get(from); v.Type == gjson.Number {
						f[to], mf[to] = v.Num, v.Num
					}
				}
			case "boolean":
				fs.Type = "boolean"
			default:
				fs.Type = "string"
			}
		}
		f["type"], mf["type"] = fs.Type, fs.Type
		fields = append(fields, f)
		metaFields = append(metaFields, mf)
		spec = append(spec, fs)
		judged = append(judged, redact.FormField{ID: id, Type: fs.Type, Title: p.Get("title").String(),
			Description: p.Get("description").String(), Format: p.Get("format").String(), WriteOnly: p.Get("writeOnly").Bool()})
		return true
	})
	for _, id := range redact.SecretFields(Str(raw, "message"), judged) {
		for i := range spec {
			spec[i].Secret = spec[i].Secret || spec[i].ID == id
		}
	}
	if fields == nil {
		fields, metaFields = []any{}, []any{}
	}
	synth := fmt.Sprintf("%s requests input (%d field%s)", agent, len(fields), plural(len(fields)))
	prompt := Str(raw, "message")
	if prompt == "" {
		prompt = synth
	}
	data = map[string]any{"kind": "form", "prompt": prompt, "fields": fields}
	meta = map[string]any{"prompt": synth, "fields": metaFields}
	return data, meta, spec
}

// elicitationRequest is a Claude-Code-shaped Elicitation hook: one
// attention.requested(kind form) marked for the ElicitationResult that
// settles it. A URL-mode elicitation (the human completes it in a browser)
// has no fields: kind other, answered out of band.
func elicitationRequest(m Moment, agent string, run string, st *State) []Draft {
	raw := m.Raw
	key := elicitationKey(raw)
	server := Str(raw, "mcp_server_name")
	ds := raiseAttention(st, key, run)
	if Str(raw, "mode") == "url" {
		synth := agent + " requests input: " + server
		return append(ds, Draft{Type: "attention.requested", Subject: server, Run: run, Mark: key,
			Data: Data("kind", "other", "prompt", firstNonEmpty(Str(raw, "message"), synth),
				"respond_via", []any{"oob"}),
			Meta: map[string]any{"prompt": synth}})
	}
	data, meta, spec := elicitationForm(agent, raw)
	data["respond_via"] = respondVia(m.Control)
	if b, err := json.Marshal(spec); err == nil && len(b) <= maxFormSpec {
		st.Set(attnFormPrefix+key, string(b))
	}
	return append(ds, Draft{Type: "attention.requested", Subject: server, Run: run,
		Mark: key, Data: data, Meta: meta})
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// elicitationResult settles a pending elicitation from the agent's own
// dialog: accept → attention.answered{values, via oob} then
// resolved{answered}; decline or cancel → resolved{dismissed} (nothing was
// answered). An orphan result (no request pending) emits nothing: one
// terminal per request.
func elicitationResult(raw []byte, st *State) []Draft {
	key := elicitationKey(raw)
	if _, ok := st.Get(attnPendingPrefix + key); !ok {
		return nil
	}
	if Str(raw, "action") != "accept" {
		return []Draft{settleAttention(st, key, "dismissed", "")}
	}
	values, _ := Value(raw, "content").(map[string]any)
	if values == nil {
		values = map[string]any{}
	}
	specJSON, _ := st.Get(attnFormPrefix + key)
	ds := answeredOOB(st, key, map[string]any{"values": values},
		map[string]any{"values": structuralValues(values, specJSON)})
	ds[0].Secrets = secretFields(specJSON)
	return ds
}

// secretFields returns the ids of the stored spec's secret fields.
func secretFields(specJSON string) []string {
	var spec []formSpec
	if json.Unmarshal([]byte(specJSON), &spec) != nil {
		return nil
	}
	var out []string
	for _, f := range spec {
		if f.Secret {
			out = append(out, f.ID)
		}
	}
	return out
}

// structuralValues keeps the answer values that are structural at every
// ceiling (AEP-0006): numbers and booleans of number/boolean fields, choice
// ids of closed selects. String fields, free text and anything the stored
// spec does not vouch for are dropped.
func structuralValues(values map[string]any, specJSON string) map[string]any {
	out := map[string]any{}
	var spec []formSpec
	if specJSON == "" || json.Unmarshal([]byte(specJSON), &spec) != nil {
		return out
	}
	for _, f := range spec {
		v, ok := values[f.ID]
		if !ok || f.Secret {
			continue
		}
		switch f.Type {
		case "number":
			if _, isNum := v.(float64); isNum {
				out[f.ID] = v
			}
		case "boolean":
			if _, isBool := v.(bool); isBool {
				out[f.ID] = v
			}
		case "select":
			if keep, ok := choiceValue(v, f); ok {
				out[f.ID] = keep
			}
		}
	}
	return out
}

// choiceValue returns v when it is a choice id of f (or, for a multi
// select, an array of choice ids).
func choiceValue(v any, f formSpec) (any, bool) {
	isChoice := func(x any) bool {
		s, ok := x.(string)
		if !ok {
			return false
		}
		for _, c := range f.Choices {
			if c == s {
				return true
			}
		}
		return false
	}
	if arr, ok := v.([]any); ok && f.Multi {
		for _, x := range arr {
			if !isChoice(x) {
				return nil, false
			}
		}
		return arr, true
	}
	return v, isChoice(v)
}

// claudeShapedTool maps the moments the Claude-Code-shaped tables (Claude
// Code, Qwen Code) share verbatim: the tool trio paired by tool_use_id,
// whose outcome also settles a permission card pending for the call
// (is_interrupt on a failure types it "interrupt"), and the subagent pair.
// ok is false for any other hook.
func claudeShapedTool(hook string, raw []byte, st *State) (ds []Draft, ok bool) {
	tool, call := Str(raw, "tool_name"), Str(raw, "tool_use_id")
	switch hook {
	case "PreToolUse":
		callOpened(st, call)
		return childPlace(st, raw, toolRequested(raw, tool, call, "tool_input")), true
	case "PostToolUse":
		callSettled(st, call)
		settle := askAnswered(raw, st)
		if settle == nil {
			settle = toolRan(raw, st)
		}
		d := withData(toolCompleted(raw, tool, call, "tool_response"), "duration_ms", extInt(raw, "duration_ms"))
		return childPlace(st, raw, append(settle, d)...), true
	case "PostToolUseFailure":
		callSettled(st, call)
		errType := "tool_error"
		if gjson.GetBytes(raw, "is_interrupt").Bool() {
			errType = "interrupt"
		}
		d := withData(toolFailed(tool, call, errType, errorText(raw, "error")), "duration_ms", extInt(raw, "duration_ms"))
		return childPlace(st, raw, append(toolRan(raw, st), d)...), true
	case "SubagentStart":
		return subagentStarted(st, raw, currentRun(st), true), true
	case "SubagentStop":
		return subagentStopped(st, raw, currentRun(st)), true
	}
	return nil, false
}

// errorText returns the error at path as text: a string verbatim, any other
// JSON as its raw spelling.
func errorText(raw []byte, path string) string {
	r := gjson.GetBytes(raw, path)
	if r.Type == gjson.String {
		return r.Str
	}
	if r.Exists() && r.Type != gjson.Null {
		return r.Raw
	}
	return ""
}

// notificationStatus is the Claude-Code-shaped Notification split: the
// permission_prompt and elicitation_dialog notifications repeat what the
// first-class PermissionRequest / Elicitation hooks already raised as
// attention.requested (deduplicated: nothing), every other subtype is a
// progress.status whose subject is the subtype token and whose message is
// gated redacted.
func notificationStatus(raw []byte) []Draft {
	kind := Str(raw, "notification_type")
	switch kind {
	case "permission_prompt", "elicitation_dialog":
		return nil
	}
	return []Draft{{Type: "progress.status", Subject: kind, Data: Data("message", Str(raw, "message"))}}
}

// sessionEndReason collapses a Claude-Code-shaped SessionEnd reason onto the
// session.ended enum: the ordinary exits are "normal", the permission-mode
// kill switch "killed"; an unknown reason is omitted rather than guessed.
func sessionEndReason(reason string) string {
	switch reason {
	case "clear", "logout", "prompt_input_exit", "resume", "other", "exit":
		return "normal"
	case "bypass_permissions_disabled":
		return "killed"
	case "normal", "error", "timeout", "killed", "compaction":
		return reason
	}
	return ""
}

// Turns and subagents of the Claude-Code-shaped tables, as the real agents
// send them: every payload of one user turn carries the vendor's turn id
// (prompt_id), a queued prompt or a per-round re-fire of UserPromptSubmit
// reuses it, and a subagent's moments carry its agent_id.
const (
	// subParentPrefix keys the run a subagent was started in.
	subParentPrefix = "sub.parent:"
	// childRunPrefix keys a subagent's open child run.
	childRunPrefix = "sub.run:"
	// openCallPrefix keys a tool call requested and not yet settled (the
	// value is its run), so PostToolBatch can close the denied ones.
	openCallPrefix = "call:"
	// taskNotification opens the synthetic prompt Claude Code submits when
	// a background task or an async subagent finishes.
	taskNotification = "<task-notification>"
)

// promptTrigger is the run.started trigger of a prompt: "agent" for the
// agent's own synthetic task notifications, "user" otherwise.
func promptTrigger(prompt string) string {
	if strings.HasPrefix(strings.TrimSpace(prompt), taskNotification) {
		return "agent"
	}
	return "user"
}

// turnPrompt maps a UserPromptSubmit that may carry the vendor's turn id.
// The same id as the open run is the same turn (a prompt queued into it, or
// Qwen Code's re-fire before every model round): it opens nothing, and a
// non-empty queued prompt rides as x.{agent}.run.prompt_queued. A new turn
// first closes what a turn left open (the interrupt-drain rule), then opens
// a run named by the turn id (a nonce when the vendor gives none).
func turnPrompt(m Moment, st *State, agent, turn, prompt string) []Draft {
	if open := currentRun(st); turn != "" && open == turn {
		if strings.TrimSpace(prompt) == "" {
			return nil
		}
		return []Draft{{Type: "x." + agent + ".run.prompt_queued", Run: open, Severity: "debug",
			Data: Data("prompt", prompt), Levels: map[string]redact.Level{"prompt": redact.Redacted}}}
	}
	ds := drainTurn(st)
	id := firstNonEmpty(turn, m.Nonce)
	if id == "" {
		// A bare Map call without a nonce: a deterministic stand-in.
		id = "run-" + strconv.FormatUint(st.Clock+1, 10)
	}
	sessionRuns.begin(st, id)
	return append(ds, Draft{Type: "run.started", Run: id,
		Data: Data("trigger", promptTrigger(prompt), "prompt", prompt)})
}

// childPlace puts a subagent's moment in the subagent's own child run (run
// id = agent_id, opened with run.started{trigger:agent} at its first
// moment), never in the parent's; a moment without agent_id goes into the
// session's open run. The child run pairs with delegation.subagent.started
// by the shared agent_id (its subject).
func childPlace(st *State, raw []byte, ds ...Draft) []Draft {
	id := Str(raw, "agent_id")
	if id == "" {
		return inRun(st, ds...)
	}
	var out []Draft
	if _, open := st.Get(childRunPrefix + id); !open {
		st.Set(childRunPrefix+id, "1")
		out = append(out, Draft{Type: "run.started", Run: id, Data: Data("trigger", "agent")})
	}
	for _, d := range ds {
		if d.Run == "" {
			d.Run = id
		}
		out = append(out, d)
	}
	return out
}

// subagentStarted is delegation.subagent.started in the parent's open run,
// remembering that run for the stop. Its child is the run the subagent's
// moments go to (named by agent_id); openChild opens that run here, for a
// vendor whose subagent may finish without a moment of its own (Claude
// Code's and Qwen Code's subagents that call no tool), so the lineage
// never names a run that is not in the record.
func subagentStarted(st *State, raw []byte, run string, openChild bool) []Draft {
	id := Str(raw, "agent_id")
	if id != "" {
		st.Set(subParentPrefix+id, run)
	}
	d := subagent("delegation.subagent.started", raw, "run")
	d.Run = run
	ds := []Draft{d}
	if _, open := st.Get(childRunPrefix + id); openChild && id != "" && !open {
		st.Set(childRunPrefix+id, "1")
		ds = append(ds, Draft{Type: "run.started", Run: id, Data: Data("trigger", "agent")})
	}
	return ds
}

// subagentStopped closes the subagent's child run (run.finished: the vendor
// reports the stop) and states delegation.subagent.stopped in the run it
// was started in. A stop of a subagent never seen starting and with no
// type is the vendor's own internal agent (Claude Code's /compact fires
// SubagentStop with an empty agent_type and no SubagentStart): nothing.
func subagentStopped(st *State, raw []byte, fallbackRun string) []Draft {
	id := Str(raw, "agent_id")
	parent, started := st.Get(subParentPrefix + id)
	if !started {
		if Str(raw, "agent_type") == "" {
			return nil
		}
		parent = fallbackRun
	}
	var ds []Draft
	_, open := st.Get(childRunPrefix + id)
	if open && id != "" {
		ds = append(ds, Draft{Type: "run.finished", Run: id, Data: map[string]any{}})
	}
	st.Del(subParentPrefix + id)
	st.Del(childRunPrefix + id)
	// A subagent seen only stopping has no run in the record: it is named
	// as the agent it is.
	child := "run"
	if !started && !open {
		child = "agent"
	}
	d := subagent("delegation.subagent.stopped", raw, child)
	d.Run = parent
	return append(ds, d)
}

// callOpened remembers a requested call until its outcome.
func callOpened(st *State, call string) {
	if call != "" {
		st.Set(openCallPrefix+call, "1")
	}
}

// callSettled forgets a call that reached an outcome.
func callSettled(st *State, call string) {
	if call != "" {
		st.Del(openCallPrefix + call)
	}
}

// batchDenied closes the calls a PostToolBatch lists that never reached an
// outcome hook: Claude Code fires no PostToolUse for a call its permission
// system refused (a denied dialog, a headless run nobody can approve), and
// PostToolBatch is the only moment that says the call is over. It is
// tool.denied{by:user_setting}: blocked before running by the user's
// permission settings, the refusal text gated as the rule.
func batchDenied(st *State, raw []byte) []Draft {
	var ds []Draft
	for _, c := range gjson.GetBytes(raw, "tool_calls").Array() {
		call := c.Get("tool_use_id").String()
		if _, open := st.Get(openCallPrefix + call); !open {
			continue
		}
		callSettled(st, call)
		tool := c.Get("tool_name").String()
		ds = append(ds, Draft{Type: "tool.denied", Subject: tool,
			Data: map[string]any{"tool": ToolRef(tool, call), "by": "user_setting"}})
	}
	return childPlace(st, raw, ds...)
}

// askAnswered settles the AskUserQuestion form pending for the call whose
// PostToolUse carries the human's answers: attention.answered (values by
// field id: the choice id when the answer is one of the question's option
// labels, else the free text) then resolved{answered}. It returns nil when
// the call has no answers or no form is pending.
func askAnswered(raw []byte, st *State) []Draft {
	if Str(raw, "tool_name") != "AskUserQuestion" {
		return nil
	}
	// Claude Code 2.1.328 writes the answers (question text → label)
	// into tool_input and tool_response.
	var answers gjson.Result
	for _, p := range []string{"tool_input.answers", "tool_response.answers", "answers"} {
		if answers = gjson.GetBytes(raw, p); answers.IsObject() {
			break
		}
	}
	if !answers.IsObject() {
		return nil
	}
	key := toolAttentionKey("AskUserQuestion", Raw(raw, "tool_input"))
	if _, pending := st.Get(attnPendingPrefix + key); !pending {
		return nil
	}
	values, meta := map[string]any{}, map[string]any{}
	for i, q := range gjson.GetBytes(raw, "tool_input.questions").Array() {
		id := strconv.Itoa(i + 1)
		a := answers.Get(gjson.Escape(q.Get("question").String()))
		if !a.Exists() {
			continue
		}
		text := a.String()
		values[id] = text
		for j, o := range q.Get("options").Array() {
			if o.Get("label").String() == text {
				values[id] = strconv.Itoa(j + 1)
				meta[id] = values[id]
			}
		}
	}
	return answeredOOB(st, key, map[string]any{"values": values}, map[string]any{"values": meta})
}
