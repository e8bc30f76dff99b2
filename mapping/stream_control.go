package mapping

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The stream bridges' side of the control loop (OpenCode and Kilo Code in
// primary mode, Kimi web in primary mode): which moments are held, the
// body of the server's own reply call for an answer, and the state a
// control.cancel reads and notes. The servers report every reply they
// apply on their stream, so these holds are Observed: the table's mapping
// of that report is the outcome (ControlAnswered).
//
// The reply calls, from the servers' route definitions (opencode-ai
// 1.18.33 and @kilocode/cli 7.7.7, identical; kimi-code 2.1.0's kap
// server) and exercised by make real:
//
//   - OpenCode / Kilo: POST /permission/{id}/reply {reply: once|always|
//     reject, message?} (the message reaches the model with a rejection),
//     POST /question/{id}/reply {answers: [[label, ...], ...]} (one list
//     of chosen labels, or the typed text, per question), POST
//     /question/{id}/reject (no body: the question dismissed, the tool
//     call fails with the server's "dismissed" error), POST
//     /session/{id}/abort;
//   - Kimi web: POST /api/v1/sessions/{sid}/approvals/{approval_id}
//     {decision: approved|rejected, feedback?}, POST
//     /api/v1/sessions/{sid}/questions/{question_id} {answers: {question
//     id: {kind: single|other|multi|multi_with_other|skipped, ...}}} and
//     POST .../questions/{question_id}:dismiss (no body), as its web UI
//     calls them, POST /api/v1/sessions/{sid}/prompts/{prompt_id}:abort.

// ctlCancel notes the control.cancel a session's open run was aborted by:
// the run's close is caused by it.
const ctlCancel = "ctl.cancel"

// OpenRun is the session's open run as the bus tables track it ("" when
// none): what a control.cancel aborts.
func OpenRun(st *State) string { return currentRun(st) }

// NoteCancel remembers that command cmdID aborted the open run: its
// terminal, when the server reports the turn's end, is caused by it.
func NoteCancel(st *State, cmdID string) { st.Set(ctlCancel, cmdID) }

// busHold holds a permission or question ask of the OpenCode / Kilo stream
// in primary mode. A permission is answered in the server's own reply
// vocabulary (once, always, reject; free text is a rejection whose text
// the model reads); a question form's values become the chosen labels,
// and its option reject (or decline) refuses it through the server's
// reject call.
func (p busProfile) busHold(m Moment, _ Gate) *Hold {
	if !p.stream || m.Mode == Companion {
		return nil
	}
	var raw []byte
	kind := ""
	switch busName(m) {
	case "permission.asked":
		raw, kind = Raw(m.Raw, "properties"), "permission"
	case "record:permission":
		raw, kind = m.Raw, "permission"
	case "question.asked":
		raw, kind = Raw(m.Raw, "properties"), "question"
	case "record:question":
		raw, kind = m.Raw, "question"
	default:
		return nil
	}
	id := Str(raw, "id")
	if id == "" {
		return nil
	}
	if kind == "permission" {
		return &Hold{
			Key: busAttnKey(id), Kind: "permission", Options: optionsOf(replyOptions()),
			Allow: "once", Refuse: "reject", Observed: true,
			Reply: func(a Answer) ([]byte, error) {
				body := map[string]any{"reply": a.Option}
				if a.Option == "reject" && strings.TrimSpace(a.Text) != "" {
					body["message"] = a.Text
				}
				return json.Marshal(body)
			},
		}
	}
	qs := []byte(gjson.GetBytes(raw, "questions").Raw)
	data, _, _ := questionForm(p.agent, qs)
	fields, _ := data["fields"].([]any)
	questions := gjson.ParseBytes(qs).Array()
	return &Hold{
		Key: busAttnKey(id), Kind: "form", Fields: fieldsOf(fields, nil), Observed: true,
		Actions: []string{busQuestionReject, formDecline},
		Reply: func(a Answer) ([]byte, error) {
			if a.Values == nil && refusesForm(a.Option, busQuestionReject) {
				return BusQuestionRejected, nil
			}
			answers := make([][]string, len(questions))
			for i, q := range questions {
				answers[i] = []string{}
				v, ok := a.Values[strconv.Itoa(i+1)]
				if !ok || v == nil {
					continue
				}
				answers[i] = chosenLabels(q, v)
			}
			return json.Marshal(map[string]any{"answers": answers})
		},
	}
}

// busQuestionReject is the option that refuses a question form: the
// servers' own word for the dismissal their TUI offers.
const busQuestionReject = "reject"

// formDecline is MCP's word for refusing a form, which senders use for
// any form (`aep-hook answer --deny`): the stream servers' question holds
// take it as their own refusal.
const formDecline = "decline"

// refusesForm says whether option refuses a form whose own refusal is
// word.
func refusesForm(option, word string) bool { return option == word || option == formDecline }

// noteRefused is the refusing option (word, or formDecline) of the
// command noted on request key, "" when none refused it: the server's
// report of the refusal is then that command's outcome.
func noteRefused(st *State, key, word string) string {
	note, ok := st.Get(attnNotePrefix + key)
	parts := strings.SplitN(note, "\x00", 3)
	if ok && len(parts) == 3 && refusesForm(parts[2], word) {
		return parts[2]
	}
	return ""
}

// BusQuestionRejected is a question hold's reply for a refusal. It is no
// body for the reply route: the adapter delivers it as the servers' own
// reject call (POST /question/{id}/reject, which takes no body), whose
// report (question.rejected) settles the request.
var BusQuestionRejected = []byte(`{"reject":true}`)

// chosenLabels are a question's chosen labels (1-based choice ids) or the
// typed text, one entry per pick.
func chosenLabels(q gjson.Result, v any) []string {
	opts := q.Get("options").Array()
	one := func(x any) string {
		s, _ := x.(string)
		if n, err := strconv.Atoi(s); err == nil && strconv.Itoa(n) == s && n >= 1 && n <= len(opts) {
			return opts[n-1].Get("label").String()
		}
		return s
	}
	if arr, ok := v.([]any); ok {
		out := make([]string, 0, len(arr))
		for _, x := range arr {
			out = append(out, one(x))
		}
		return out
	}
	return []string{one(v)}
}

// Kimi web's approval decisions, its own vocabulary.
var kimiWebOptions = []Option{{ID: "approved", Label: "Approve"}, {ID: "rejected", Label: "Reject"}}

// kimiWebHold holds an approval of the Kimi web stream in primary mode:
// approved, or rejected with the answer's text as the vendor's feedback
// (AEP-0008: other text is a rejection carrying it); and a question card,
// answered with the form's values or dismissed (kimiWebQuestionHold).
func kimiWebHold(m Moment, _ Gate) *Hold {
	if m.Mode != Primary {
		return nil
	}
	if m.Facts.Name == "event.question.requested" {
		return kimiWebQuestionHold(m)
	}
	if m.Facts.Name != "event.approval.requested" {
		return nil
	}
	id := Str(m.Raw, "payload.approval_id")
	if id == "" || Str(m.Raw, "session_id") == "" {
		return nil
	}
	return &Hold{
		Key: kwAttn(id), Kind: "permission", Options: kimiWebOptions,
		Allow: "approved", Refuse: "rejected", Observed: true,
		Reply: func(a Answer) ([]byte, error) {
			body := map[string]any{"decision": a.Option}
			if a.Option == "rejected" && strings.TrimSpace(a.Text) != "" {
				body["feedback"] = a.Text
			}
			return json.Marshal(body)
		},
	}
}

// kwQuestionDismiss is the option that dismisses a Kimi web question
// card, as its web UI's dismiss button does.
const kwQuestionDismiss = "dismiss"

// KimiWebQuestionDismissed is a question hold's reply for a dismissal. It
// is no body for the answer route: the adapter delivers it as the
// server's own dismiss call (POST .../questions/{id}:dismiss, which takes
// no body), whose report (event.question.dismissed) settles the request.
var KimiWebQuestionDismissed = []byte(`{"dismiss":true}`)

// kimiWebQuestionHold holds a Kimi web question card: the form's values
// become the server's answers, one per question keyed by its id (a
// choice id is kind single, typed text kind other, several choices kind
// multi, with typed text kind multi_with_other; a question left without
// a value is skipped), as the web UI posts them; the option dismiss (or
// decline) dismisses the card.
func kimiWebQuestionHold(m Moment) *Hold {
	id := Str(m.Raw, "payload.question_id")
	if id == "" || Str(m.Raw, "session_id") == "" {
		return nil
	}
	fields := fieldsOf(kwQuestionFields(gjson.GetBytes(m.Raw, "payload.questions").Array()), nil)
	return &Hold{
		Key: kwAttn(id), Kind: "form", Fields: fields, Observed: true,
		Actions: []string{kwQuestionDismiss, formDecline},
		Reply: func(a Answer) ([]byte, error) {
			if a.Values == nil && refusesForm(a.Option, kwQuestionDismiss) {
				return KimiWebQuestionDismissed, nil
			}
			answers := map[string]any{}
			for _, f := range fields {
				answers[f.ID] = kwAnswerOf(f, a.Values[f.ID])
			}
			return json.Marshal(map[string]any{"answers": answers})
		},
	}
}

// kwAnswerOf is one question's answer in the server's wire shape for the
// field's value v (checked against the field already).
func kwAnswerOf(f Field, v any) map[string]any {
	switch x := v.(type) {
	case string:
		if f.isChoice(x) {
			return map[string]any{"kind": "single", "option_id": x}
		}
		return map[string]any{"kind": "other", "text": x}
	case []any:
		ids, other := []string{}, []string{}
		for _, y := range x {
			s, _ := y.(string)
			if f.isChoice(s) {
				ids = append(ids, s)
			} else {
				other = append(other, s)
			}
		}
		if len(other) == 0 {
			return map[string]any{"kind": "multi", "option_ids": ids}
		}
		return map[string]any{"kind": "multi_with_other", "option_ids": ids, "other_text": strings.Join(other, ", ")}
	}
	return map[string]any{"kind": "skipped"}
}

// kimiWebOptionsData is the approval card's options as data.
func kimiWebOptionsData() []any {
	out := make([]any, 0, len(kimiWebOptions))
	for _, o := range kimiWebOptions {
		out = append(out, map[string]any{"id": o.ID, "label": o.Label})
	}
	return out
}

// kwPrompt keys the prompt id of an agent's open turn (what an abort
// names).
const kwPrompt = "kw.prompt:"

// KimiWebOpenTurn is the Kimi web session's open turn of its main agent:
// the run and the prompt an abort names ("" when none).
func KimiWebOpenTurn(st *State) (run, prompt string) {
	run, _ = st.Get(kwRun + "main")
	prompt, _ = st.Get(kwPrompt + "main")
	if run == "" {
		return "", ""
	}
	return run, prompt
}

// CancelCheck says whether a control.cancel of scope (and run, when the
// command names one) can abort open: only the open run; a session's end
// is not the servers' to command (deleting a session is destruction, not
// a cancel).
func CancelCheck(open, scope, run string) (reason, detail string) {
	switch {
	case scope != "run":
		return "unsupported", fmt.Sprintf("this target cancels a run (scope run), not scope %q", clip(scope, 40))
	case open == "":
		return "invalid", "no run is open in this session"
	case run != "" && run != open:
		return "invalid", "the command names a run that is not the open one"
	}
	return "", ""
}
