package mapping

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// This file is the tables' side of the control loop (AEP-0004): what a
// held moment's request accepts as an answer (Hold), how an answer is
// checked and mapped (AEP-0006 form values, AEP-0008 text), and the drafts
// that record the loop in the session: the acknowledgement and the
// answer's outcome. The loop itself (the relay connection, the wait, the
// dedupe) is the shim's; a table only says which moments it holds and how
// an applied answer becomes its vendor's reply.

// Answer is a control.attention.respond answer (AEP-0004 §5): an option,
// text, or a form's values.
type Answer struct {
	Option string         `json:"option,omitempty"`
	Text   string         `json:"text,omitempty"`
	Values map[string]any `json:"values,omitempty"`
}

// Field is one field of a form request as the answer check needs it
// (AEP-0006 field_spec, structural part).
type Field struct {
	ID       string
	Type     string // string, number, boolean, select
	Required bool
	Multi    bool
	Other    bool
	Choices  []string // choice ids, for a select
	Labels   []string // choice labels, same order (text answers)
	Min, Max *float64
	Secret   bool // the request said this answer is a secret
}

// Gate is the adapter's control configuration a table's Hold may read: the
// opt-in gates scoped by a tool list (Kimi Code's PreToolUse, pi's
// tool_call) hold only the tools listed ("*" for every one).
type Gate struct {
	Tools []string
}

// Gates reports whether the gate holds tool.
func (g Gate) Gates(tool string) bool {
	for _, t := range g.Tools {
		if t == "*" || strings.EqualFold(t, tool) {
			return true
		}
	}
	return false
}

// DefaultBudget is how long a hook holds a moment for an answer unless its
// table says otherwise: inside the 60 s the hook vendors give a hook by
// default (Claude Code, Qwen Code), with room for the reply.
const DefaultBudget = 55 * time.Second

// Hold is how the control loop may answer one held moment: the request the
// table raises for it and how an applied answer becomes the vendor's
// reply. Everything here is pure: the loop (shim/control) validates
// answers with it and records the outcome through OutcomeDrafts.
type Hold struct {
	// Key is the reference key the request's attention.requested is marked
	// with (its Draft.Mark): the outcome drafts settle it.
	Key string
	// Kind is the request's kind: permission or form.
	Kind string
	// Options are the request's options, {id, label} as on the card.
	Options []Option
	// Allow and Refuse name the permissive-once and the refusing option:
	// the words allow, yes, deny, no map to them when no option's own id
	// or label matches, and a permission's unmatched free text applies
	// Refuse with the text as its reason (AEP-0008); "" refuses such text
	// as invalid.
	Allow, Refuse string
	// Fields are a form request's fields (AEP-0006).
	Fields []Field
	// Actions are option words a form takes besides its values (an MCP
	// elicitation's decline and cancel).
	Actions []string
	// Budget is how long the hook may hold the moment, inside the vendor's
	// hook timeout; 0 means DefaultBudget.
	Budget time.Duration
	// Reply is the vendor's reply for an applied answer (the hook's stdout,
	// or the body the adapter sends the vendor); an error says the vendor
	// cannot apply it (the loop refuses the command with the error's
	// text).
	Reply func(a Answer) ([]byte, error)
	// Enforced, when set, records what an applied answer made the vendor
	// do that no later moment reports (a gate's refusal: the call never
	// runs and nothing says so), cause-linked to the command cmdID.
	Enforced func(st *State, a Answer, cmdID string) []Draft
	// Observed says the vendor reports the reply it applied (a stream
	// bridge's server broadcasts it): the loop acknowledges the command
	// and notes it on the request (NoteDrafts), and the table's mapping of
	// the vendor's report records the outcome, via control and caused by
	// the command (ControlAnswered). The outcome then has one source, the
	// vendor's own fact, and an answer the agent's own UI gave first is
	// never recorded as the command's.
	Observed bool
}

// Option is one {id, label} of a request's options.
type Option struct {
	ID, Label string
}

// ErrInvalid marks an answer that does not fit the request
// (control.rejected{invalid}, the request stays pending).
var ErrInvalid = errors.New("invalid answer")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// Resolve checks a against the request and returns the answer to apply
// and record: an option word sent as text becomes that option (AEP-0008),
// a permission's other text applies the refusing option with the text as
// its reason, a single-question form takes text or an option as its one
// field's value. The error wraps ErrInvalid.
func (h *Hold) Resolve(a Answer) (Answer, error) {
	switch h.Kind {
	case "form":
		return h.resolveForm(a)
	default:
		return h.resolveChoice(a)
	}
}

// optionWords are the words that name a request's permissive-once and
// refusing option whatever the vendor calls them.
var (
	allowWords  = []string{"allow", "yes", "y", "approve", "approved"}
	refuseWords = []string{"deny", "no", "n", "reject", "refuse"}
)

func (h *Hold) hasOption(id string) bool {
	for _, o := range h.Options {
		if o.ID == id {
			return true
		}
	}
	return false
}

// matchWord finds the option text names: an id (any case, trimmed), exactly
// one label, else the allow or refuse words.
func (h *Hold) matchWord(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, o := range h.Options {
		if strings.EqualFold(o.ID, t) {
			return o.ID, true
		}
	}
	found := ""
	n := 0
	for _, o := range h.Options {
		if strings.EqualFold(strings.TrimSpace(o.Label), t) {
			found, n = o.ID, n+1
		}
	}
	if n == 1 {
		return found, true
	}
	for _, w := range allowWords {
		if h.Allow != "" && strings.EqualFold(t, w) {
			return h.Allow, true
		}
	}
	for _, w := range refuseWords {
		if h.Refuse != "" && strings.EqualFold(t, w) {
			return h.Refuse, true
		}
	}
	return "", false
}

func (h *Hold) resolveChoice(a Answer) (Answer, error) {
	if a.Values != nil {
		return Answer{}, invalid("this request takes an option or text, not values")
	}
	if a.Option != "" {
		if !h.hasOption(a.Option) {
			return Answer{}, invalid("option %q is not one of this request's options", a.Option)
		}
		out := Answer{Option: a.Option}
		if a.Option == h.Refuse {
			out.Text = a.Text // the stated reason rides a refusal
		}
		return out, nil
	}
	if strings.TrimSpace(a.Text) == "" {
		return Answer{}, invalid("the answer names no option and carries no text")
	}
	if id, ok := h.matchWord(a.Text); ok {
		return Answer{Option: id}, nil
	}
	if h.Refuse == "" {
		return Answer{}, invalid("text that names no option cannot answer this request")
	}
	// Never the permissive choice (AEP-0008): the words are a refusal's
	// reason, the vendor's "tell the agent what to do differently".
	return Answer{Option: h.Refuse, Text: a.Text}, nil
}

func (h *Hold) resolveForm(a Answer) (Answer, error) {
	if a.Values == nil {
		if a.Option != "" {
			for _, act := range h.Actions {
				if strings.EqualFold(act, a.Option) {
					return Answer{Option: act}, nil
				}
			}
		}
		if len(h.Fields) != 1 || a.Option == "" && strings.TrimSpace(a.Text) == "" {
			if t := strings.TrimSpace(a.Text); t != "" {
				for _, act := range h.Actions {
					if strings.EqualFold(act, t) {
						return Answer{Option: act}, nil
					}
				}
			}
			return Answer{}, invalid("this form is answered with values")
		}
		// One field: text or an option stands for its value (AEP-0006's
		// path for senders that predate forms).
		f := h.Fields[0]
		v := any(strings.TrimSpace(firstNonEmpty(a.Option, a.Text)))
		if f.Type == "select" {
			v = choiceOf(f, v.(string))
		}
		a = Answer{Values: map[string]any{f.ID: v}}
	}
	known := map[string]bool{}
	for _, f := range h.Fields {
		known[f.ID] = true
		v, ok := a.Values[f.ID]
		if !ok || v == nil {
			if f.Required {
				return Answer{}, invalid("required field %q has no value", f.ID)
			}
			continue
		}
		if err := checkValue(f, v); err != nil {
			return Answer{}, err
		}
	}
	var extra []string
	for k := range a.Values {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return Answer{}, invalid("no field %q in this form", extra[0])
	}
	return Answer{Values: a.Values}, nil
}

// choiceOf is the choice id a text names (its id, or exactly one label),
// else the text itself (free text, for a select with other).
func choiceOf(f Field, text string) string {
	for _, c := range f.Choices {
		if strings.EqualFold(c, text) {
			return c
		}
	}
	found, n := "", 0
	for i, l := range f.Labels {
		if strings.EqualFold(strings.TrimSpace(l), text) && i < len(f.Choices) {
			found, n = f.Choices[i], n+1
		}
	}
	if n == 1 {
		return found
	}
	return text
}

func (f Field) isChoice(s string) bool {
	for _, c := range f.Choices {
		if c == s {
			return true
		}
	}
	return false
}

// checkValue holds one value to its field_spec (AEP-0006 §5.3): the type,
// a number's range, a select's choices unless it takes other text.
func checkValue(f Field, v any) error {
	switch f.Type {
	case "string":
		if _, ok := v.(string); !ok {
			return invalid("field %q takes a string", f.ID)
		}
	case "number":
		n, ok := v.(float64)
		if !ok || math.IsNaN(n) || math.IsInf(n, 0) {
			return invalid("field %q takes a number", f.ID)
		}
		if f.Min != nil && n < *f.Min || f.Max != nil && n > *f.Max {
			return invalid("field %q is out of its range", f.ID)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return invalid("field %q takes true or false", f.ID)
		}
	case "select":
		one := func(x any) error {
			s, ok := x.(string)
			if !ok {
				return invalid("field %q takes a choice id", f.ID)
			}
			if !f.isChoice(s) && !f.Other {
				return invalid("%q is not a choice of field %q", s, f.ID)
			}
			return nil
		}
		if arr, ok := v.([]any); ok {
			if !f.Multi {
				return invalid("field %q takes one choice", f.ID)
			}
			if f.Required && len(arr) == 0 {
				return invalid("required field %q has no value", f.ID)
			}
			for _, x := range arr {
				if err := one(x); err != nil {
					return err
				}
			}
			return nil
		}
		return one(v)
	default:
		return invalid("field %q has a type this loop cannot check", f.ID)
	}
	return nil
}

// AckDraft is the target's acknowledgement of command id (AEP-0004 §3):
// control.accepted, or control.rejected with reason and detail, in the run
// of the request key names (when it is still pending). cause is the
// command's id.
func AckDraft(st *State, key, cmdID, reason, detail string) Draft {
	run, _ := st.Get(attnPendingPrefix + key)
	if reason == "" {
		return Draft{Type: "control.accepted", Run: run, Cause: cmdID, Data: map[string]any{}}
	}
	data := map[string]any{"reason": reason}
	if detail != "" {
		data["detail"] = detail
	}
	return Draft{Type: "control.rejected", Run: run, Cause: cmdID, Data: data}
}

// OutcomeDrafts record an answer applied over the control loop: the ack,
// attention.answered{answer, by, via control} and
// attention.resolved{answered}, both cause-linked to the command (AEP-0004
// §6), the request key settled so no later hook settles it again. by is
// the sender's asserted identity (the command's agent). A form's values
// are gated by field type (string and free-text values are content) with
// the request's secret fields named.
func (h *Hold) OutcomeDrafts(st *State, a Answer, by, cmdID string) []Draft {
	ack := AckDraft(st, h.Key, cmdID, "", "")
	run, _ := st.Get(attnPendingPrefix + h.Key)
	answer := map[string]any{}
	if a.Option != "" {
		answer["option"] = a.Option
	}
	if a.Text != "" {
		answer["text"] = a.Text
	}
	answered := Draft{Type: "attention.answered", Run: run, SubjectRef: h.Key, Cause: cmdID, Mark: h.Key + ":answered",
		Data: map[string]any{"answer": answer, "via": "control"}}
	if by != "" {
		answered.Data["by"] = by
	}
	if a.Values != nil {
		answer["values"] = a.Values
		meta := map[string]any{}
		if a.Option != "" {
			meta["option"] = a.Option
		}
		meta["values"] = h.structural(a.Values)
		answered.Meta = map[string]any{"answer": meta}
		for _, f := range h.Fields {
			if f.Secret {
				answered.Secrets = append(answered.Secrets, f.ID)
			}
		}
	}
	resolved := settleAttention(st, h.Key, "answered", "")
	resolved.CauseRef, resolved.Cause = "", cmdID
	ds := []Draft{ack, answered, resolved}
	if h.Enforced != nil {
		ds = append(ds, h.Enforced(st, a, cmdID)...)
	}
	return ds
}

// attnNotePrefix+key holds the command an Observed request was answered
// by, until the vendor reports the reply: "cmdID\x00by\x00option".
const attnNotePrefix = "attn-ctl:"

// NoteDrafts acknowledge a command applied to an Observed request and note
// it on the request for the vendor's report to settle (ControlAnswered).
func (h *Hold) NoteDrafts(st *State, a Answer, by, cmdID string) []Draft {
	st.Set(attnNotePrefix+h.Key, cmdID+"\x00"+by+"\x00"+a.Option)
	return []Draft{AckDraft(st, h.Key, cmdID, "", "")}
}

// ControlAnswered settles the pending request key from the vendor's own
// report of the reply it applied: when a command was noted on the request
// and the report's option is the one it applied (option "" for a form,
// whose values the vendor reports itself), attention.answered says via
// control, by the sender, and both outcomes are caused by the command
// (AEP-0004 §6); otherwise the report is the agent's own UI's (oob).
func ControlAnswered(st *State, key, option string, answer, meta map[string]any) []Draft {
	cmdID, by, ok := controlNote(st, key, option)
	if !ok {
		return answeredOOB(st, key, answer, meta)
	}
	run, _ := st.Get(attnPendingPrefix + key)
	answered := Draft{Type: "attention.answered", Run: run, SubjectRef: key, Cause: cmdID, Mark: key + ":answered",
		Data: map[string]any{"answer": answer, "via": "control"}}
	if by != "" {
		answered.Data["by"] = by
	}
	if meta != nil {
		answered.Meta = map[string]any{"answer": meta}
	}
	resolved := settleAttention(st, key, "answered", "")
	resolved.CauseRef, resolved.Cause = "", cmdID
	return []Draft{answered, resolved}
}

// controlNote takes the command noted on request key, when the vendor's
// report applied its option: the command's id and sender.
func controlNote(st *State, key, option string) (cmdID, by string, ok bool) {
	note, had := st.Get(attnNotePrefix + key)
	st.Del(attnNotePrefix + key)
	parts := strings.SplitN(note, "\x00", 3)
	if !had || len(parts) != 3 || parts[2] != option {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// structural keeps the values that are structural at every ceiling: a
// number or boolean field's value, a closed choice's id (AEP-0006).
func (h *Hold) structural(values map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range h.Fields {
		v, ok := values[f.ID]
		if !ok || f.Secret {
			continue
		}
		switch f.Type {
		case "number":
			if _, ok := v.(float64); ok {
				out[f.ID] = v
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				out[f.ID] = v
			}
		case "select":
			if arr, ok := v.([]any); ok {
				keep := true
				for _, x := range arr {
					s, _ := x.(string)
					keep = keep && f.isChoice(s)
				}
				if keep {
					out[f.ID] = v
				}
			} else if s, _ := v.(string); f.isChoice(s) {
				out[f.ID] = v
			}
		}
	}
	return out
}

// Pending reports whether the request key is still awaiting its terminal.
func Pending(st *State, key string) bool {
	_, ok := st.Get(attnPendingPrefix + key)
	return ok
}

// optionsOf reads a card's options ({id, label} maps).
func optionsOf(opts []any) []Option {
	var out []Option
	for _, o := range opts {
		m, _ := o.(map[string]any)
		id, _ := m["id"].(string)
		label, _ := m["label"].(string)
		out = append(out, Option{ID: id, Label: label})
	}
	return out
}

// fieldsOf reads a form card's fields (field_spec maps) for the answer
// check; secret names the fields whose answers are secrets.
func fieldsOf(fields []any, secret map[string]bool) []Field {
	var out []Field
	for _, x := range fields {
		m, _ := x.(map[string]any)
		f := Field{}
		f.ID, _ = m["id"].(string)
		f.Type, _ = m["type"].(string)
		f.Required, _ = m["required"].(bool)
		f.Multi, _ = m["multi"].(bool)
		f.Other, _ = m["other"].(bool)
		if v, ok := m["min"].(float64); ok {
			f.Min = &v
		}
		if v, ok := m["max"].(float64); ok {
			f.Max = &v
		}
		cs, _ := m["choices"].([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			id, _ := cm["id"].(string)
			label, _ := cm["label"].(string)
			f.Choices = append(f.Choices, id)
			f.Labels = append(f.Labels, label)
		}
		f.Secret = secret[f.ID]
		out = append(out, f)
	}
	return out
}
