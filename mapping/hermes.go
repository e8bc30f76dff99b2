package mapping

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// Hermes is the AEP-0002 Annex A.10 table for Hermes Agent's shell hooks:
// session_id is the session and the vendor's REAL per-turn turn_id is the
// run, verbatim. on_session_end fires per turn and closes RUNS; only
// on_session_finalize ends the session; on_session_reset carries the
// successor's id and rides x.hermes.session.reset. post_tool_call splits
// three ways on status, the vendor's own approval gate is observed read-only
// (its four-way menu as options, respond_via ["oob"]), and the clarify tool
// adds an observed form card beside its tool events. Observe-only: the reply
// is "{}" for every hook.
func Hermes() Vendor {
	return Vendor{
		Name:     "hermes",
		Summary:  "Hermes Agent shell hooks: per-turn runs, three-way tool split, observed approval and clarify cards",
		Identify: hermesIdentify,
		Map:      hermesMap,
		Reply:    replyEmptyObject,
	}
}

// hermesSentinel is the telemetry_schema_version the table was verified
// against (tag v2026.7.7.2); any other value is the re-verify trigger.
const hermesSentinel = "hermes.observer.v1"

// hermesIdentify reads session_id. The approval hooks carry session_id ""
// and only extra.session_key: on the CLI surface that key IS the session
// id; a gateway key is platform-scoped and must never mint a lane, so it
// goes to the unknown lane. Subagent hooks fall back to the parent session.
func hermesIdentify(m Moment) (string, string) {
	hook := HookField(m, "hook_event_name")
	s := Str(m.Raw, "session_id")
	if s == "" {
		s = Str(m.Raw, "extra.parent_session_id")
	}
	if s == "" && Str(m.Raw, "extra.surface") == "cli" {
		s = Str(m.Raw, "extra.session_key")
	}
	if s == "" {
		s = UnknownSession
	}
	return hook, s
}

// The table-state keys: pending attention cards (drained dismissed at the
// session's end) and the drift notices already given.
const (
	hermesPendingPrefix = "hermes.pending:"
	hermesDriftPrefix   = "hermes.drift:"
)

// hermesApprovalMark and hermesClarifyMark name the reference an observed
// card's request is remembered under, for its lifecycle's subject and cause.
func hermesApprovalMark(patternKey string) string { return "hermes.attn:approval:" + patternKey }
func hermesClarifyMark(callID string) string      { return "hermes.attn:clarify:" + callID }

func hermesMap(m Moment, st *State) ([]Draft, error) {
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	ds := hermesDrift(raw, st)
	run := Str(raw, "extra.turn_id")

	switch hook {
	case "on_session_start":
		return append(ds, Draft{Type: "session.started", Data: Data(
			"client", Data("name", "hermes"),
			"cwd", Str(raw, "cwd"),
		)}), nil

	case "pre_llm_call":
		msg := gjson.GetBytes(raw, "extra.user_message")
		d := Draft{Type: "run.started", Run: run, Data: Data("trigger", "user")}
		if msg.Type == gjson.String {
			d.Data["prompt"] = msg.Str
			d.Data["message_digest"] = redact.Digest(msg.Str)
		}
		return append(ds, d), nil

	case "on_session_end":
		// Fires per TURN: it closes the run, never the session.
		d := Draft{Run: run}
		switch {
		case gjson.GetBytes(raw, "extra.interrupted").Bool():
			d.Type, d.Data = "run.cancelled", Data("by", "user")
		case gjson.GetBytes(raw, "extra.completed").Bool():
			d.Type, d.Data = "run.finished", map[string]any{}
		default:
			// Neither completed nor interrupted: the turn ended short.
			d.Type, d.Data = "run.failed", Data("reason", "incomplete")
		}
		return append(ds, d), nil

	case "on_session_finalize":
		// THE session end: a session never ends with a card still pending
		// (AEP-0002 §7.2), so open cards are dismissed first.
		ds = append(ds, hermesDrainCards(st)...)
		return append(ds, Draft{Type: "session.ended", Data: Data("reason", "normal")}), nil

	case "on_session_reset":
		return append(ds, Draft{
			Type: "x.hermes.session.reset", Data: Data("reason", Str(raw, "extra.reason")),
			Levels: extLevels(redact.Metadata, "reason"),
		}), nil

	case "pre_tool_call":
		return append(ds, hermesPreTool(raw, run, st)...), nil

	case "post_tool_call":
		return append(ds, hermesPostTool(raw, run, st)...), nil

	case "pre_approval_request":
		return append(ds, hermesApprovalRequest(raw, run, st)), nil

	case "post_approval_response":
		return append(ds, hermesApprovalResponse(raw, run, st)...), nil

	case "subagent_start", "subagent_stop":
		child := Str(raw, "extra.child_session_id")
		prun := Str(raw, "extra.parent_turn_id")
		if hook == "subagent_start" {
			return append(ds, Draft{
				Type: "delegation.subagent.started", Subject: child, Run: prun,
				Data: Data("child", omitEmpty(Data("session", child)), "role", Str(raw, "extra.child_role")),
			}), nil
		}
		return append(ds, Draft{
			Type: "delegation.subagent.stopped", Subject: child, Run: prun,
			Data: Data(
				"child", omitEmpty(Data("session", child)),
				"status", Str(raw, "extra.child_status"),
				"duration_ms", extInt(raw, "extra.duration_ms"),
			),
		}), nil

	case "api_request_error":
		return append(ds, Draft{
			Type: "x.hermes.api.error", Run: run, Severity: "error",
			Data: Data(
				"status_code", extInt(raw, "extra.status_code"),
				"retry_count", extInt(raw, "extra.retry_count"),
				"reason", Str(raw, "extra.reason"),
				"error", Data("type", Str(raw, "extra.error.type"), "message", Str(raw, "extra.error.message")),
			),
			Levels: map[string]redact.Level{
				"status_code": redact.Metadata, "retry_count": redact.Metadata,
				"reason": redact.Metadata, "error": redact.Redacted,
			},
		}), nil
	}
	return append(ds, Draft{Type: extDottedType("hermes", hook), Run: run, Data: map[string]any{}}), nil
}

// hermesDrift emits x.hermes.schema.drift once per session and observed
// value when a payload's telemetry_schema_version is not the verified one:
// the mapping still runs, and the notice says it needs re-verifying.
func hermesDrift(raw []byte, st *State) []Draft {
	v := Str(raw, "extra.telemetry_schema_version")
	if v == hermesSentinel {
		return nil
	}
	key := hermesDriftPrefix + v
	if _, seen := st.Get(key); seen {
		return nil
	}
	st.Set(key, "1")
	return []Draft{{
		Type: "x.hermes.schema.drift", Severity: "warning",
		Data:   Data("expected", hermesSentinel, "observed", v),
		Levels: extLevels(redact.Metadata, "expected", "observed"),
	}}
}

// hermesDrainCards dismisses every observed card still pending, oldest key
// first in a stable order.
func hermesDrainCards(st *State) []Draft {
	var marks []string
	for k := range st.Entries {
		if strings.HasPrefix(k, hermesPendingPrefix) {
			marks = append(marks, strings.TrimPrefix(k, hermesPendingPrefix))
		}
	}
	sort.Strings(marks)
	ds := make([]Draft, 0, len(marks))
	for _, mk := range marks {
		subject, _ := st.Get(hermesPendingPrefix + mk)
		st.Del(hermesPendingPrefix + mk)
		ds = append(ds, Draft{
			Type: "attention.resolved", Subject: subject, SubjectRef: mk, CauseRef: mk,
			Data: Data("resolution", "dismissed"),
		})
	}
	return ds
}

// hermesOpenCard remembers a card as pending under its mark, with the
// subject its lifecycle falls back to.
func hermesOpenCard(st *State, mark, subject string) {
	st.Set(hermesPendingPrefix+mark, subject)
}

// hermesCloseCard forgets a card and says whether it was pending.
func hermesCloseCard(st *State, mark string) bool {
	_, ok := st.Get(hermesPendingPrefix + mark)
	st.Del(hermesPendingPrefix + mark)
	return ok
}

// hermesAnswered is attention.answered via oob, followed by the resolution
// when the request was observed (the pairing is this table's state).
// meta, when set, is the answer's structural stand-in at a metadata ceiling.
func hermesAnswered(st *State, mark, subject string, answer, meta map[string]any) []Draft {
	ds := []Draft{{
		Type: "attention.answered", Subject: subject, SubjectRef: mark, CauseRef: mark,
		Mark: mark + ":answer",
		Data: Data("answer", answer, "via", "oob"),
	}}
	if meta != nil {
		ds[0].Meta = map[string]any{"answer": meta}
	}
	if hermesCloseCard(st, mark) {
		ds = append(ds, Draft{
			Type: "attention.resolved", Subject: subject, SubjectRef: mark, CauseRef: mark + ":answer",
			Data: Data("resolution", "answered"),
		})
	}
	return ds
}

// hermesTerminal is a card's terminal other than an answer: attention.timeout
// or attention.resolved(dismissed).
func hermesTerminal(st *State, mark, subject string, timeout bool) Draft {
	hermesCloseCard(st, mark)
	if timeout {
		return Draft{Type: "attention.timeout", Subject: subject, SubjectRef: mark, CauseRef: mark, Data: map[string]any{}}
	}
	return Draft{
		Type: "attention.resolved", Subject: subject, SubjectRef: mark, CauseRef: mark,
		Data: Data("resolution", "dismissed"),
	}
}

// hermesApprovalOptions is the vendor's approval return contract, in its
// menu's order and wording ("Show full command" never returns a choice).
var hermesApprovalOptions = [][2]string{
	{"once", "Allow once"},
	{"session", "Allow for this session"},
	{"always", "Add to permanent allowlist"},
	{"deny", "Deny"},
}

func hermesApprovalRequest(raw []byte, run string, st *State) Draft {
	key := Str(raw, "extra.pattern_key")
	opts := make([]any, 0, len(hermesApprovalOptions))
	for _, o := range hermesApprovalOptions {
		opts = append(opts, map[string]any{"id": o[0], "label": o[1]})
	}
	mark := hermesApprovalMark(key)
	hermesOpenCard(st, mark, key)
	prompt := "Approval requested"
	if c := Str(raw, "extra.command"); c != "" {
		prompt += ": " + c
	}
	return Draft{
		Type: "attention.requested", Subject: key, Run: run, Mark: mark,
		Data: Data(
			"kind", "permission",
			"prompt", prompt,
			"options", opts,
			"respond_via", []any{"oob"},
		),
	}
}

func hermesApprovalResponse(raw []byte, run string, st *State) []Draft {
	key := Str(raw, "extra.pattern_key")
	mark := hermesApprovalMark(key)
	choice := Str(raw, "extra.choice")
	var ds []Draft
	switch choice {
	case "timeout":
		ds = []Draft{hermesTerminal(st, mark, key, true)}
	case "":
		ds = []Draft{hermesTerminal(st, mark, key, false)}
	default:
		ds = hermesAnswered(st, mark, key, map[string]any{"option": choice}, nil)
	}
	for i := range ds {
		ds[i].Run = run
	}
	return ds
}

// hermesPreTool is tool.requested, plus the observed form card when the
// tool is clarify with a real question.
func hermesPreTool(raw []byte, run string, st *State) []Draft {
	name := Str(raw, "tool_name")
	callID := Str(raw, "extra.tool_call_id")
	ds := []Draft{{
		Type: "tool.requested", Subject: name, Run: run,
		Data: Data(
			"tool", ToolRef(name, callID),
			"args_digest", redact.DigestJSON(hermesRawOrNull(raw, "tool_input")),
			"args", Value(raw, "tool_input"),
		),
	}}
	if name != "clarify" {
		return ds
	}
	q := gjson.GetBytes(raw, "tool_input.question")
	if q.Type != gjson.String || strings.TrimSpace(q.Str) == "" || callID == "" {
		return ds // a question-less clarify mints no card
	}
	field := map[string]any{"id": "1", "type": "string", "label": q.Str, "required": true}
	if choices := hermesClarifyChoices(gjson.GetBytes(raw, "tool_input.choices")); len(choices) > 0 {
		cs := make([]any, len(choices))
		for i, c := range choices {
			cs[i] = map[string]any{"id": strconv.Itoa(i + 1), "label": c}
		}
		field["type"], field["other"], field["choices"] = "select", true, cs
	}
	mark := hermesClarifyMark(callID)
	hermesOpenCard(st, mark, callID)
	const prompt = "hermes asks a question" // structural at every ceiling
	return append(ds, Draft{
		Type: "attention.requested", Subject: callID, Run: run, Mark: mark,
		Data: Data(
			"kind", "form",
			"prompt", prompt,
			"fields", []any{field},
			"respond_via", []any{"oob"},
		),
		Meta: map[string]any{"prompt": prompt},
	})
}

// hermesRawOrNull is the raw JSON at path, "null" when absent.
func hermesRawOrNull(raw []byte, path string) []byte {
	if r := Raw(raw, path); r != nil {
		return r
	}
	return []byte("null")
}

// hermesMaxChoices is clarify's MAX_CHOICES; the UI appends "Other".
const hermesMaxChoices = 4

// hermesClarifyChoices applies the vendor's entry-point normalization
// (_flatten_choice): a dict unwraps label/description/text/title, a list
// joins, every choice is trimmed, empties drop, at most four remain. The
// card shows what the user is shown, never the raw model arguments.
func hermesClarifyChoices(r gjson.Result) []string {
	if !r.IsArray() {
		return nil
	}
	var out []string
	r.ForEach(func(_, c gjson.Result) bool {
		if s := hermesFlattenChoice(c); s != "" {
			out = append(out, s)
		}
		return len(out) < hermesMaxChoices
	})
	return out
}

func hermesFlattenChoice(c gjson.Result) string {
	switch {
	case c.IsObject():
		for _, k := range []string{"label", "description", "text", "title"} {
			if v := c.Get(k); v.Exists() && v.Type != gjson.Null {
				if s := hermesFlattenChoice(v); s != "" {
					return s
				}
			}
		}
		return ""
	case c.IsArray():
		var parts []string
		c.ForEach(func(_, v gjson.Result) bool {
			if s := hermesFlattenChoice(v); s != "" {
				parts = append(parts, s)
			}
			return true
		})
		return strings.Join(parts, ", ")
	case c.Type == gjson.Null:
		return ""
	}
	return strings.TrimSpace(c.String())
}

// The clarify return contract's sentinels at the pinned tag.
const (
	hermesCLITimeout  = "The user did not provide a response within the time limit. Use your best judgement to make the choice and proceed."
	hermesCLICancel   = "The user cancelled. Use your best judgement to proceed."
	hermesUndelivered = "[clarify prompt could not be delivered]"
	// The gateway's timeout is "[user did not respond within {N}m]".
	hermesGatewayPrefix = "[user did not respond within "
	hermesGatewaySuffix = "m]"
)

// hermesGatewayTimedOut reports whether s is the gateway's timeout
// sentinel, ^\[user did not respond within \d+m\]$ read by hand: compiling
// the pattern cost a Hermes hook process more than the rest of its
// mapping.
func hermesGatewayTimedOut(s string) bool {
	n, ok := strings.CutPrefix(s, hermesGatewayPrefix)
	if !ok {
		return false
	}
	if n, ok = strings.CutSuffix(n, hermesGatewaySuffix); !ok || n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// hermesPostTool is the three-way split on status, plus the clarify card's
// terminal classified from the result.
func hermesPostTool(raw []byte, run string, st *State) []Draft {
	name := Str(raw, "tool_name")
	callID := Str(raw, "extra.tool_call_id")
	ref := ToolRef(name, callID)
	dur := extInt(raw, "extra.duration_ms")
	status := Str(raw, "extra.status")
	var d Draft
	switch status {
	case "error":
		d = withData(toolFailed(name, callID, firstNonEmpty(Str(raw, "extra.error_type"), "tool_error"),
			Str(raw, "extra.error_message")), "duration_ms", dur)
	case "blocked":
		// A blocking policy hook, no human loop. The design record carries
		// the block message as rule at redacted+, but the registry annotates
		// rule at metadata and the pin leaves it out there: a free-text
		// message is not carried.
		d = Draft{Type: "tool.denied", Data: Data("tool", ref, "duration_ms", dur, "by", "policy")}
	default:
		d = withData(toolCompleted(raw, name, callID, "extra.result"), "duration_ms", dur)
		if status != "" && status != "ok" {
			d.Data["status"] = status // a future status, stated rather than guessed
		}
	}
	d.Subject, d.Run = name, run
	ds := []Draft{d}
	if name != "clarify" || callID == "" {
		return ds
	}
	mark := hermesClarifyMark(callID)
	if status == "error" || status == "blocked" {
		t := hermesTerminal(st, mark, callID, false)
		t.Run = run
		return append(ds, t)
	}
	if status != "ok" && status != "" {
		return ds
	}
	for _, c := range hermesClarifyOutcome(raw, st, mark, callID) {
		c.Run = run
		ds = append(ds, c)
	}
	return ds
}

// hermesClarifyOutcome classifies an ok clarify result: the timeout
// sentinels time out, cancel/undeliverable/empty dismiss, a picked choice is
// its structural 1-based id, anything else is free text. An unparseable
// result or an error result makes no lifecycle claim.
func hermesClarifyOutcome(raw []byte, st *State, mark, callID string) []Draft {
	res := gjson.GetBytes(raw, "extra.result")
	body := res.Raw
	if res.Type == gjson.String {
		body = res.Str
	}
	if !res.Exists() || !gjson.Valid(body) {
		return nil
	}
	out, ok := hermesClarifyResult(body)
	if !ok || out.response == nil {
		return nil
	}
	resp := strings.TrimSpace(*out.response)
	switch {
	case resp == hermesCLITimeout || hermesGatewayTimedOut(resp):
		return []Draft{hermesTerminal(st, mark, callID, true)}
	case resp == "" || resp == hermesCLICancel || resp == hermesUndelivered:
		return []Draft{hermesTerminal(st, mark, callID, false)}
	}
	// A picked choice is its structural 1-based id, legal at metadata;
	// Other is free text, which the gate keeps at redacted+ only.
	for i, c := range out.offered {
		if c.Type == gjson.String && strings.TrimSpace(jsonText(c.Str)) == resp {
			values := map[string]any{"1": strconv.Itoa(i + 1)}
			return hermesAnswered(st, mark, callID, map[string]any{"values": values}, map[string]any{"values": values})
		}
	}
	return hermesAnswered(st, mark, callID, map[string]any{"values": map[string]any{"1": *out.response}}, nil)
}

// clarifyResult is what a clarify result says: the choices offered and
// the user's response (nil when absent or null).
type clarifyResult struct {
	offered  []gjson.Result
	response *string
}

// hermesClarifyResult reads a clarify result (valid JSON) as
// encoding/json decoding it into {error, choices_offered, user_response}
// would, without the reflection that cost a Hermes hook process a tenth
// of its firing: keys match ignoring case, the last of a repeated key
// wins, and ok is false for a result that is not an object, that has an
// error member, or whose members are of another type.
func hermesClarifyResult(body string) (out clarifyResult, ok bool) {
	obj := gjson.Parse(body)
	if obj.Type == gjson.Null {
		return out, true // decodes to nothing
	}
	if !obj.IsObject() {
		return out, false
	}
	ok = true
	obj.ForEach(func(k, v gjson.Result) bool {
		key := jsonText(k.String())
		switch {
		case strings.EqualFold(key, "error"):
			ok = false
		case strings.EqualFold(key, "choices_offered"):
			switch {
			case v.IsArray():
				out.offered = v.Array()
			case v.Type == gjson.Null:
				out.offered = nil
			default:
				ok = false
			}
		case strings.EqualFold(key, "user_response"):
			switch v.Type {
			case gjson.String:
				s := jsonText(v.Str)
				out.response = &s
			case gjson.Null:
				out.response = nil
			default:
				ok = false
			}
		}
		return true
	})
	return out, ok
}

// jsonText is s as encoding/json decodes a string: each byte that is not
// part of valid UTF-8 becomes U+FFFD.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
