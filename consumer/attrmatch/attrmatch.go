// Package attrmatch implements the AEP-0003 §6 attr-match filter dialect: a
// JSON object whose members are predicates on envelope attributes, all of
// which must hold. A filter naming an attribute that is not filterable is
// rejected (invalid-filter), never read as match-all.
package attrmatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is the invalid-filter refusal (AEP-0003 §6.5).
type ErrInvalid struct{ Detail string }

func (e ErrInvalid) Error() string { return "invalid-filter: " + e.Detail }

func invalid(format string, a ...any) error { return ErrInvalid{fmt.Sprintf(format, a...)} }

// filterable core attributes (§6.2 rule 1).
var filterable = map[string]bool{"id": true, "type": true, "subject": true, "source": true, "agent": true,
	"session": true, "run": true, "step": true, "epoch": true, "cause": true, "severity": true, "capture": true}

// carried but never filtered (§6.2 rule 1).
var notFilterable = map[string]string{
	"time":        "time is carried, not filtered",
	"seq":         "positions are the resume mechanism, not filters",
	"aep":         "aep is carried, not filtered",
	"traceparent": "trace context is pass-through join metadata",
	"data":        "routing never parses payloads",
}

// extName reports whether k is a legal extension attribute name
// (AEP-0001 §5.4: [a-z0-9]{1,20}).
func extName(k string) bool {
	if len(k) == 0 || len(k) > 20 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// levels is the AEP-0001 §8.1 severity order.
var levels = []string{"debug", "info", "notice", "warning", "error", "critical"}

func level(s string) int {
	for i, l := range levels {
		if l == s {
			return i
		}
	}
	return -1
}

// defaults are applied to absent attributes before matching (§6.2 rule 5).
var defaults = map[string]any{"severity": "info", "capture": "metadata", "epoch": json.Number("0")}

// pred is one member of a filter.
type pred struct {
	key      string
	any      []any    // inclusion (equality is a one-element inclusion); strings, json.Number, bool
	prefixes []string // type patterns "p.*", stored as "p."
	gte, lte int      // severity bounds, -1 when absent
	sevCmp   bool
}

// Filter is a parsed attr-match filter. The zero value matches every event.
type Filter struct{ preds []pred }

// Parse reads a filter in its JSON form.
func Parse(b []byte) (Filter, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return Filter{}, invalid("a filter is a JSON object")
	}
	if dec.More() {
		return Filter{}, invalid("trailing data after the filter object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var f Filter
	for _, k := range keys {
		p, err := parsePred(k, m[k])
		if err != nil {
			return Filter{}, err
		}
		f.preds = append(f.preds, p)
	}
	return f, nil
}

func checkKey(k string) error {
	if why, ok := notFilterable[k]; ok {
		return invalid("%q is not filterable (%s)", k, why)
	}
	if !filterable[k] && !extName(k) {
		return invalid("%q is neither a filterable attribute nor a legal extension attribute name", k)
	}
	return nil
}

func parsePred(k string, v any) (pred, error) {
	p := pred{key: k, gte: -1, lte: -1}
	if err := checkKey(k); err != nil {
		return p, err
	}
	switch x := v.(type) {
	case map[string]any:
		if k != "severity" {
			return p, invalid("%s: a comparison object is allowed only on severity", k)
		}
		if len(x) == 0 {
			return p, invalid("severity: the comparison names neither gte nor lte")
		}
		p.sevCmp = true
		for op, lv := range x {
			s, _ := lv.(string)
			l := level(s)
			if l < 0 {
				return p, invalid("severity.%s: %v is not a severity level", op, lv)
			}
			switch op {
			case "gte":
				p.gte = l
			case "lte":
				p.lte = l
			default:
				return p, invalid("severity: unknown comparison %q (gte, lte)", op)
			}
		}
		return p, nil
	case []any:
		if len(x) == 0 {
			return p, invalid("%s: an inclusion array needs at least one value", k)
		}
		for _, e := range x {
			if err := p.addScalar(e); err != nil {
				return p, err
			}
		}
		return p, nil
	default:
		return p, p.addScalar(v)
	}
}

func (p *pred) addScalar(v any) error {
	switch x := v.(type) {
	case string:
		if p.key == "type" {
			if x == "*" {
				return invalid(`type: "*" alone is not a pattern; use {} or omit the key`)
			}
			if pre, ok := strings.CutSuffix(x, ".*"); ok && pre != "" {
				p.prefixes = append(p.prefixes, pre+".")
				return nil
			}
		}
		p.any = append(p.any, x)
	case bool:
		p.any = append(p.any, x)
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err != nil {
			return invalid("%s: %s is not an integer", p.key, x)
		}
		p.any = append(p.any, x)
	default:
		return invalid("%s: %v is not a string, integer or boolean", p.key, v)
	}
	return nil
}

// ParseArgs reads the command line's filters: each is either a JSON object
// or a shorthand `key=value`, `key=a,b` (any of), `severity>=LEVEL`,
// `severity<=LEVEL`; all must hold. Shorthand values are strings, except
// epoch's (an integer) and an extension attribute's that read as an integer
// or a boolean; use the JSON form to say exactly.
func ParseArgs(args []string) (Filter, error) {
	var f Filter
	for _, a := range args {
		a = strings.TrimSpace(a)
		var g Filter
		var err error
		if strings.HasPrefix(a, "{") {
			g, err = Parse([]byte(a))
		} else {
			g, err = shorthand(a)
		}
		if err != nil {
			return Filter{}, err
		}
		f.preds = append(f.preds, g.preds...)
	}
	return f, nil
}

func shorthand(a string) (Filter, error) {
	for _, op := range []string{">=", "<="} {
		if k, v, ok := strings.Cut(a, op); ok {
			name := map[string]string{">=": "gte", "<=": "lte"}[op]
			b, _ := json.Marshal(map[string]any{strings.TrimSpace(k): map[string]string{name: strings.TrimSpace(v)}})
			return Parse(b)
		}
	}
	k, v, ok := strings.Cut(a, "=")
	if !ok {
		return Filter{}, invalid("%q: want key=value, key=a,b, severity>=LEVEL or a JSON object", a)
	}
	k = strings.TrimSpace(k)
	var vals []any
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		switch {
		case k == "epoch":
			vals = append(vals, json.Number(s))
		case !filterable[k] && (s == "true" || s == "false"):
			vals = append(vals, s == "true")
		case !filterable[k] && isInt(s):
			vals = append(vals, json.Number(s))
		default:
			vals = append(vals, s)
		}
	}
	b, _ := json.Marshal(map[string]any{k: vals})
	return Parse(b)
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// Match reports whether the event (decoded with json.Number for numbers)
// satisfies every predicate.
func (f Filter) Match(ev map[string]any) bool {
	return f.MatchAttrs(mapAttrs(ev))
}

// Attrs is an event's envelope as a lookup, for callers that keep events
// in their own form (a relay's buffers) rather than as decoded maps.
// Attr returns the attribute's value (a string, a bool, or a json.Number
// for an integer) and whether the event carries it.
type Attrs interface {
	Attr(key string) (any, bool)
}

type mapAttrs map[string]any

func (m mapAttrs) Attr(k string) (any, bool) {
	v, ok := m[k]
	return v, ok
}

// MatchAttrs reports whether the event satisfies every predicate.
func (f Filter) MatchAttrs(ev Attrs) bool {
	for _, p := range f.preds {
		if !p.match(ev) {
			return false
		}
	}
	return true
}

// Values returns what the filter allows for one attribute, for a caller
// that must check a filter against what a subscriber may see: the string
// values of its predicate (type patterns in their "p.*" form), and all
// true when the filter does not constrain the attribute (it names no
// predicate on it). Non-string values of the predicate are left out; they
// never equal a string attribute.
func (f Filter) Values(key string) (vals []string, all bool) {
	all = true
	for _, p := range f.preds {
		if p.key != key || p.sevCmp {
			continue
		}
		if !all {
			// Two predicates on one key (ParseArgs joins filters): each
			// must hold, so either's values bound the set; the first
			// suffices.
			continue
		}
		all = false
		for _, v := range p.any {
			if s, ok := v.(string); ok {
				vals = append(vals, s)
			}
		}
		for _, pre := range p.prefixes {
			vals = append(vals, pre+"*")
		}
	}
	return vals, all
}

// MatchJSON decodes one event line and matches it.
func (f Filter) MatchJSON(line []byte) bool {
	if len(f.preds) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var ev map[string]any
	if dec.Decode(&ev) != nil {
		return false
	}
	return f.Match(ev)
}

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return len(f.preds) == 0 }

func (p pred) match(ev Attrs) bool {
	v, ok := ev.Attr(p.key)
	if !ok {
		if v, ok = defaults[p.key]; !ok {
			return false
		}
	}
	if p.sevCmp {
		s, _ := v.(string)
		l := level(s)
		return l >= 0 && (p.gte < 0 || l >= p.gte) && (p.lte < 0 || l <= p.lte)
	}
	if s, isStr := v.(string); isStr && p.key == "type" {
		for _, pre := range p.prefixes {
			if strings.HasPrefix(s, pre) {
				return true
			}
		}
	}
	for _, want := range p.any {
		if equal(v, want) {
			return true
		}
	}
	return false
}

// equal compares JSON values exactly, without coercion: "1" is not 1.
func equal(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		xi, e1 := strconv.ParseInt(x.String(), 10, 64)
		yi, e2 := strconv.ParseInt(y.String(), 10, 64)
		return e1 == nil && e2 == nil && xi == yi
	case float64:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		yi, err := strconv.ParseInt(y.String(), 10, 64)
		return err == nil && float64(yi) == x
	}
	return false
}
