package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Problem is one finding: where, which rule, what.
type Problem struct {
	File    string
	Line    int
	Rule    string // e.g. "AEP-0001 §5.2"
	Message string
	Warning bool // reported, but not a violation (an unresolved reference in a partial log)
}

func (p Problem) String() string {
	kind := "violation"
	if p.Warning {
		kind = "warning"
	}
	return fmt.Sprintf("%s:%d: %s: %s [%s]", p.File, p.Line, kind, p.Message, p.Rule)
}

// Validator checks a stream of events; per-session rules (order,
// references, terminals) span every line fed to one Validator.
type Validator struct {
	// Complete says the input holds whole sessions: a cause or subject
	// that names no event seen is a violation, not a warning.
	Complete bool

	schema   *Schema
	foreign  *regexp.Regexp
	sessions map[sessionKey]*session
	problems []Problem
	events   int
}

type sessionKey struct{ source, session string }

// session is what the stream rules remember of one (source, session).
type session struct {
	lastEpoch, lastSeq int64
	hasPos             bool
	positions          map[[2]int64]string // (epoch, seq) -> id
	ids                map[string]string   // id -> type
	runEnd             map[string]string   // run -> terminal id
	attnEnd            map[string]string   // request id -> terminal id
	pending            map[string]bool     // open attention requests
	ended              string              // session.ended id
}

// New returns a Validator over the embedded schema.
func New() (*Validator, error) {
	s, err := loaded()
	if err != nil {
		return nil, err
	}
	var alts []string
	for k := range s.foreign {
		alts = append(alts, k)
	}
	sort.Strings(alts)
	re, err := regexp.Compile(`^(` + strings.Join(alts, "|") + `)$`)
	if err != nil {
		return nil, fmt.Errorf("foreign-emitter pattern: %w", err)
	}
	return &Validator{schema: s, foreign: re, sessions: map[sessionKey]*session{}}, nil
}

// Revision names the schema revision checked against.
func (v *Validator) Revision() string { return v.schema.revision }

// Problems returns everything found so far, in input order.
func (v *Validator) Problems() []Problem { return v.problems }

// Events counts the events checked.
func (v *Validator) Events() int { return v.events }

// Violations counts the problems that are not warnings.
func (v *Validator) Violations() int {
	n := 0
	for _, p := range v.problems {
		if !p.Warning {
			n++
		}
	}
	return n
}

// maxLine bounds one event line.
const maxLine = 32 << 20

// Reader checks every line of r, named file in messages.
func (v *Validator) Reader(file string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		v.Line(file, n, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// Line checks one event.
func (v *Validator) Line(file string, line int, raw []byte) {
	c := &check{v: v, file: file, line: line}
	var ev map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&ev); err != nil || ev == nil {
		c.fail("AEP-0001 §5", "not a JSON object: an event is one JSON object per line")
		return
	}
	if dec.More() {
		c.fail("AEP-0003 §3.1", "more than one JSON value on the line")
	}
	v.events++
	c.envelope(ev)
	c.payload(ev)
	c.stream(ev)
}

// check carries one line's context.
type check struct {
	v          *Validator
	file       string
	line       int
	typ        string
	capture    int
	scoped     string // "agent", "foreign" or "session"
	registered *typeSpec
}

func (c *check) add(rule, format string, warn bool, a ...any) {
	c.v.problems = append(c.v.problems, Problem{File: c.file, Line: c.line, Rule: rule, Message: fmt.Sprintf(format, a...), Warning: warn})
}

func (c *check) fail(rule, format string, a ...any) { c.add(rule, format, false, a...) }
func (c *check) warn(rule, format string, a ...any) { c.add(rule, format, true, a...) }

var coreAttrs = []string{"aep", "id", "type", "subject", "time", "source", "agent", "session", "run", "step",
	"seq", "epoch", "cause", "traceparent", "severity", "capture", "data"}

// patterns are compiled on first use, not in every hook process that
// links this package.
var patterns = sync.OnceValue(func() struct{ extName, typeName, vendorType, traceparent, zone *regexp.Regexp } {
	return struct{ extName, typeName, vendorType, traceparent, zone *regexp.Regexp }{
		extName:     regexp.MustCompile(`^[a-z0-9]{1,20}$`),
		typeName:    regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`),
		vendorType:  regexp.MustCompile(`^x\.[a-z0-9_-]+\.[a-z0-9_]+(\.[a-z0-9_]+)+$`),
		traceparent: regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`),
		zone:        regexp.MustCompile(`([Zz]|[+-]\d\d:\d\d)$`),
	}
})

func isCore(k string) bool {
	for _, a := range coreAttrs {
		if a == k {
			return true
		}
	}
	return false
}

// str returns attribute k as a string, checking its type and non-emptiness.
func (c *check) str(ev map[string]any, k string) (string, bool) {
	v, ok := ev[k]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	switch {
	case !isStr:
		c.fail("AEP-0001 §5.1", "%s must be a string, not %s", k, jsonType(v))
		return "", false
	case s == "":
		c.fail("AEP-0001 §5.1", "%s must not be empty", k)
		return "", false
	}
	return s, true
}

// envelope checks the context attributes (AEP-0001 §5, §6, §8).
func (c *check) envelope(ev map[string]any) {
	for k, val := range ev {
		if val == nil {
			c.fail("AEP-0001 §5.1", "%s is null: absent optional attributes are omitted, never null", k)
			continue
		}
		if isCore(k) {
			continue
		}
		if !patterns().extName.MatchString(k) {
			c.fail("AEP-0001 §5.4", "attribute %q is neither a core attribute nor a legal extension name ([a-z0-9]{1,20})", k)
			continue
		}
		switch x := val.(type) {
		case string, bool:
		case json.Number:
			if !isInteger(x) {
				c.fail("AEP-0001 §5.4", "extension attribute %s must be a string, integer or boolean, not a fraction", k)
			}
		default:
			c.fail("AEP-0001 §5.4", "extension attribute %s must be a string, integer or boolean, not %s", k, jsonType(val))
		}
	}
	for _, k := range []string{"aep", "id", "type", "time", "source", "agent"} {
		if _, ok := ev[k]; !ok {
			c.fail("AEP-0001 §5.1", "missing required attribute %s", k)
		}
	}
	if a, ok := ev["aep"]; ok && a != "0.1" {
		c.fail("AEP-0001 §11", "aep is %v; this validator checks AEP 0.1", a)
	}
	c.str(ev, "id")
	c.str(ev, "agent")
	for _, k := range []string{"subject", "session", "run", "step", "cause"} {
		c.str(ev, k)
	}
	if t, ok := c.str(ev, "time"); ok {
		if _, err := time.Parse(time.RFC3339Nano, t); err != nil || !hasZone(t) {
			c.fail("AEP-0001 §5.1", "time %q is not an RFC 3339 timestamp with a timezone", t)
		}
	}
	if s, ok := c.str(ev, "source"); ok {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			c.fail("AEP-0001 §5.1", "source %q is not a URI", s)
		}
	}
	for _, k := range []string{"seq", "epoch"} {
		if x, ok := ev[k]; ok {
			n, isNum := x.(json.Number)
			if !isNum || !isInteger(n) || strings.HasPrefix(n.String(), "-") {
				c.fail("AEP-0001 §5.1", "%s must be an integer >= 0, not %v", k, x)
			}
		}
	}
	if tp, ok := c.str(ev, "traceparent"); ok && !patterns().traceparent.MatchString(tp) {
		c.fail("AEP-0001 §5.1", "traceparent %q is not a W3C Trace Context value", tp)
	}
	if sv, ok := c.str(ev, "severity"); ok && !contains(c.v.schema.severity, sv) {
		c.fail("AEP-0001 §8.1", "severity %q is not one of %s", sv, strings.Join(c.v.schema.severity, ", "))
	}
	c.capture = levelOf("metadata")
	if cp, ok := c.str(ev, "capture"); ok {
		if l := levelOf(cp); l < 0 || !contains(c.v.schema.capture, cp) {
			c.fail("AEP-0001 §8.2", "capture %q is not one of %s", cp, strings.Join(c.v.schema.capture, ", "))
		} else {
			c.capture = l
		}
	}
	if d, ok := ev["data"]; ok {
		if _, isObj := d.(map[string]any); !isObj {
			c.fail("AEP-0001 §5.1", "data must be an object, not %s", jsonType(d))
		}
	}
	typ, ok := c.str(ev, "type")
	if !ok {
		return
	}
	c.typ = typ
	c.typeRules(ev)
}

// typeRules checks the type's name, registration and scope (§5.2, §6).
func (c *check) typeRules(ev map[string]any) {
	typ := c.typ
	cat, _, _ := strings.Cut(typ, ".")
	switch {
	case cat == "x":
		if !patterns().vendorType.MatchString(typ) {
			c.fail("AEP-0001 §6", "vendor type %q must be x.{vendor}.{category}.{rest}", typ)
		}
	case !patterns().typeName.MatchString(typ):
		c.fail("AEP-0001 §6", "type %q must be lowercase {category}.{rest} tokens of [a-z0-9_]", typ)
	case !c.v.schema.categories[cat]:
		c.fail("AEP-0002 §3", "type %q: %q is not a registered category (vendor types go under x.{vendor}.)", typ, cat)
	default:
		spec, ok := c.v.schema.types[typ]
		if !ok {
			c.fail("AEP-0001 §10", "type %q is not a registered core type; use x.{vendor}.%s for a vendor extension", typ, typ)
		} else {
			c.registered = spec
		}
	}
	_, hasSession := ev["session"]
	_, hasSeq := ev["seq"]
	switch {
	case cat == "agent":
		c.scoped = "agent"
		for _, k := range []string{"session", "run", "step", "seq"} {
			if _, ok := ev[k]; ok {
				c.fail("AEP-0001 §5.2", "agent-scoped %s must not carry %s", typ, k)
			}
		}
	case c.v.foreign.MatchString(typ):
		c.scoped = "foreign"
		if !hasSession {
			c.fail("AEP-0001 §5.2", "%s (a foreign-emitter session event) must carry session", typ)
		}
		if hasSeq {
			c.fail("AEP-0001 §5.2", "%s (a foreign-emitter session event) must omit seq", typ)
		}
	default:
		c.scoped = "session"
		if !hasSession {
			c.fail("AEP-0001 §5.2", "session-scoped %s must carry session", typ)
		}
		if !hasSeq {
			c.fail("AEP-0001 §5.2", "session-scoped %s must carry seq", typ)
		}
	}
}

// payload checks data against the type's schema and capture level
// (AEP-0001 §8.2(a), AEP-0002 §5.1).
func (c *check) payload(ev map[string]any) {
	data, _ := ev["data"].(map[string]any)
	if c.capture == 0 && len(data) > 0 {
		c.fail("AEP-0001 §8.2", "capture none is the envelope only, but data has %d member(s)", len(data))
		return
	}
	if c.registered == nil || !c.registered.schema {
		return
	}
	c.object("data", data, c.registered.data)
}

// object checks an object's members against f.
func (c *check) object(path string, obj map[string]any, f *field) {
	for _, name := range f.order {
		m := f.props[name]
		if _, ok := obj[name]; !ok && m.required {
			c.fail("AEP-0002 §5", "%s.%s is required in %s", path, name, c.typ)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m, ok := f.props[k]
		if !ok {
			continue // unannotated members default to metadata (AEP-0002 §5.1 rule 4)
		}
		c.value(path+"."+k, obj[k], m)
	}
	if w := f.when; w != nil {
		if got, _ := json.Marshal(obj[w.key]); string(got) == w.value {
			for _, r := range w.require {
				if _, ok := obj[r]; !ok {
					c.fail("AEP-0002 §5.2", "%s.%s is required when %s is %s", path, r, w.key, w.value)
				}
			}
		}
	}
}

// value checks one present member.
func (c *check) value(path string, val any, f *field) {
	if f.capture > c.capture {
		c.fail("AEP-0001 §8.2(a)", "%s is %s-level content in an event whose capture is %s", path,
			captureLevels[f.capture], captureLevels[c.capture])
		return
	}
	if len(f.types) > 0 && !typeOK(val, f.types) {
		c.fail("AEP-0002 §5", "%s must be %s, not %s", path, strings.Join(f.types, " or "), jsonType(val))
		return
	}
	if len(f.enum) > 0 {
		got, _ := json.Marshal(val)
		if !contains(f.enum, string(got)) {
			c.fail("AEP-0002 §5", "%s is %s, not one of %s", path, got, strings.Join(f.enum, ", "))
		}
	}
	if n, ok := val.(json.Number); ok {
		x, _ := n.Float64()
		if f.min != nil && x < *f.min {
			c.fail("AEP-0002 §5", "%s is %s, below the minimum %v", path, n, *f.min)
		}
		if f.max != nil && x > *f.max {
			c.fail("AEP-0002 §5", "%s is %s, above the maximum %v", path, n, *f.max)
		}
	}
	if s, ok := val.(string); ok && f.format == "date-time" {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			c.fail("AEP-0002 §5", "%s %q is not an RFC 3339 date-time", path, s)
		}
	}
	switch x := val.(type) {
	case map[string]any:
		if f.props != nil || f.when != nil {
			c.object(path, x, f)
		}
	case []any:
		if f.items != nil {
			for i, it := range x {
				c.value(fmt.Sprintf("%s[%d]", path, i), it, f.items)
			}
		}
	}
}

// stream checks the per-session rules: (epoch, seq) order, references,
// terminals (AEP-0001 §7, §10; AEP-0002 §2, §7).
func (c *check) stream(ev map[string]any) {
	sess, _ := ev["session"].(string)
	src, _ := ev["source"].(string)
	id, _ := ev["id"].(string)
	if sess == "" || c.typ == "" {
		return
	}
	k := sessionKey{src, sess}
	s := c.v.sessions[k]
	if s == nil {
		s = &session{positions: map[[2]int64]string{}, ids: map[string]string{}, runEnd: map[string]string{},
			attnEnd: map[string]string{}, pending: map[string]bool{}}
		c.v.sessions[k] = s
	}
	if prev, seen := s.ids[id]; seen && id != "" {
		if prev != c.typ {
			c.fail("AEP-0001 §7", "id %s was already used by a %s in this session", id, prev)
		}
		return // a redelivery: already checked
	}
	if c.scoped == "session" {
		c.order(ev, s, id)
	}
	if cause, ok := ev["cause"].(string); ok {
		if _, seen := s.ids[cause]; !seen {
			c.ref("AEP-0001 §5.1", "cause %s names no earlier event of this session", cause)
		}
	}
	subject, _ := ev["subject"].(string)
	switch c.typ {
	case "attention.answered", "attention.resolved", "attention.timeout", "attention.routed":
		switch t, seen := s.ids[subject]; {
		case subject == "":
			c.fail("AEP-0002 §7.1", "%s must set subject to the attention.requested id", c.typ)
		case !seen:
			c.ref("AEP-0002 §7.1", "%s subject %s names no attention.requested of this session", c.typ, subject)
		case t != "attention.requested":
			c.fail("AEP-0002 §7.1", "%s subject %s is a %s, not an attention.requested", c.typ, subject, t)
		}
		if c.typ == "attention.resolved" || c.typ == "attention.timeout" {
			if prev, ok := s.attnEnd[subject]; ok && subject != "" {
				c.fail("AEP-0002 §7", "attention request %s already reached its terminal (%s)", subject, prev)
			}
			s.attnEnd[subject] = id
			delete(s.pending, subject)
		}
	case "attention.requested":
		s.pending[id] = true
	case "run.finished", "run.failed", "run.cancelled":
		run, _ := ev["run"].(string)
		if run == "" {
			c.fail("AEP-0002 §2", "%s must carry the run it ends", c.typ)
		} else if prev, ok := s.runEnd[run]; ok {
			c.fail("AEP-0002 §2 (5)", "run %s already reached a terminal (%s): one terminal per run", run, prev)
		} else {
			s.runEnd[run] = id
		}
	case "session.ended":
		if s.ended != "" {
			c.fail("AEP-0002 §2 (5)", "session already ended (%s): one session.ended per session", s.ended)
		}
		s.ended = id
		if len(s.pending) > 0 {
			var ids []string
			for p := range s.pending {
				ids = append(ids, p)
			}
			sort.Strings(ids)
			c.fail("AEP-0002 §7.2", "session.ended with attention request(s) still pending: %s", strings.Join(ids, ", "))
		}
	}
	if id != "" {
		s.ids[id] = c.typ
	}
}

// order checks (epoch, seq) against the session's last position.
func (c *check) order(ev map[string]any, s *session, id string) {
	seqN, ok1 := ev["seq"].(json.Number)
	seq, err := seqN.Int64()
	if !ok1 || err != nil {
		return
	}
	var epoch int64
	if e, ok := ev["epoch"].(json.Number); ok {
		if epoch, err = e.Int64(); err != nil {
			return
		}
	}
	pos := [2]int64{epoch, seq}
	if other, ok := s.positions[pos]; ok && other != id {
		c.fail("AEP-0001 §7", "position (epoch %d, seq %d) is already event %s: two events claim one position", epoch, seq, other)
		return
	}
	if s.hasPos && (epoch < s.lastEpoch || (epoch == s.lastEpoch && seq <= s.lastSeq)) {
		c.fail("AEP-0001 §7", "(epoch %d, seq %d) after (epoch %d, seq %d): positions never regress within a session", epoch, seq, s.lastEpoch, s.lastSeq)
	}
	if !s.hasPos || epoch > s.lastEpoch || (epoch == s.lastEpoch && seq > s.lastSeq) {
		s.lastEpoch, s.lastSeq, s.hasPos = epoch, seq, true
	}
	s.positions[pos] = id
}

// ref reports an unresolved reference: a violation for complete input, a
// warning otherwise (the log may begin mid-session).
func (c *check) ref(rule, format string, a ...any) {
	c.add(rule, format, !c.v.Complete, a...)
}

func typeOK(v any, types []string) bool {
	t := jsonType(v)
	for _, want := range types {
		if want == t || (want == "number" && t == "integer") {
			return true
		}
	}
	return false
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// isInteger reports whether n is a whole number (1 and 1.0 both are).
func isInteger(n json.Number) bool {
	if _, err := n.Int64(); err == nil {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func hasZone(t string) bool { return patterns().zone.MatchString(t) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
