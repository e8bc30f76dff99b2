package validate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
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
	Rule    string // where the rule is stated, e.g. "AEP-0001 §5.2"
	Message string
	Warning bool // reported, but not a violation (an unresolved reference in a partial log)
	// Says is what the rule says, in a few words ("session-scoped events
	// carry session and seq").
	Says string
}

// String is the problem on one line: file:line: kind: message [rule: what
// it says].
func (p Problem) String() string {
	kind := "violation"
	if p.Warning {
		kind = "warning"
	}
	r := p.Rule
	if p.Says != "" {
		r += ": " + p.Says
	}
	return fmt.Sprintf("%s:%d: %s: %s [%s]", p.File, p.Line, kind, p.Message, r)
}

// Validator checks a stream of events; per-session rules (order,
// references, terminals) span every line fed to one Validator.
type Validator struct {
	// Complete says the input holds whole sessions: a cause or subject
	// that names no event seen is a violation, not a warning, and Finish
	// warns about the runs that never closed.
	Complete bool

	schema   *Schema
	foreign  *regexp.Regexp
	sessions map[sessionKey]*session
	// ids holds, per emitter (source), each id's first line and a digest of
	// its event: an id is unique per source (AEP-0001 §5.1 #2).
	ids map[sourceID]seenID
	// views are the sessions as their consumers see them (bare session
	// name): the ids of foreign-emitter events addressed to them (commands,
	// attention.routed), which a sequenced event's cause may name, and the
	// form requests their answers and commands are checked against.
	views    map[string]*view
	problems []Problem
	events   int
	finished bool
}

type sessionKey struct{ source, session string }

type sourceID struct{ source, id string }

// seenID is where an id was first used and what it held.
type seenID struct {
	file   string
	line   int
	digest [16]byte
}

// session is what the stream rules remember of one (source, session).
type session struct {
	lastEpoch, lastSeq int64
	hasPos             bool
	positions          map[[2]int64]string // (epoch, seq) -> id
	ids                map[string]string   // id -> type
	runEnd             map[string]string   // run -> terminal id
	runSeen            map[string]where    // run -> its first event
	runOrder           []string            // runs in first-seen order
	attnEnd            map[string]string   // request id -> terminal id
	pending            map[string]bool     // open attention requests
	acks               map[string]ack      // command id -> its ack
	ended              string              // session.ended id
}

// where is a line of the input.
type where struct {
	file string
	line int
}

// ack is the one ack decision recorded for a command.
type ack struct{ id, typ string }

// view is one bare session name across emitters.
type view struct {
	foreign map[string]string // id -> type of foreign-emitter events
	forms   map[string]form   // attention.requested id -> its form
}

// form is a kind:"form" request's fields, by id.
type form map[string]formField

// formField is what the values rule needs of one field_spec.
type formField struct {
	typ     string
	multi   bool
	other   bool
	choices map[string]bool
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
	return &Validator{schema: s, foreign: re, sessions: map[sessionKey]*session{},
		ids: map[sourceID]seenID{}, views: map[string]*view{}}, nil
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

// Finish ends the input. For Complete input it warns about every run that
// never reached a terminal: zero terminals is legal (AEP-0002 §2 convention
// 5), but in a whole session it means the agent, or the adapter, stopped
// reporting. It adds nothing on a second call.
func (v *Validator) Finish() {
	if v.finished || !v.Complete {
		v.finished = true
		return
	}
	v.finished = true
	keys := make([]sessionKey, 0, len(v.sessions))
	for k := range v.sessions {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := v.sessions[keys[i]], v.sessions[keys[j]]
		return a.firstSeen().before(b.firstSeen())
	})
	for _, k := range keys {
		s := v.sessions[k]
		for _, run := range s.runOrder {
			if _, ended := s.runEnd[run]; ended {
				continue
			}
			w := s.runSeen[run]
			v.problems = append(v.problems, Problem{File: w.file, Line: w.line, Rule: rOpenRun.cite, Says: rOpenRun.says, Warning: true,
				Message: fmt.Sprintf("run %s of session %s never closed: no run.finished, run.failed or run.cancelled", run, k.session)})
		}
	}
}

// firstSeen is where the session's first run was seen.
func (s *session) firstSeen() where {
	if len(s.runOrder) == 0 {
		return where{}
	}
	return s.runSeen[s.runOrder[0]]
}

func (w where) before(o where) bool {
	if w.file != o.file {
		return w.file < o.file
	}
	return w.line < o.line
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
		c.fail(rEvent, "not a JSON object: an event is one JSON object per line")
		return
	}
	if dec.More() {
		c.fail(rJSONL, "more than one JSON value on the line")
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

func (c *check) add(r rule, format string, warn bool, a ...any) {
	c.v.problems = append(c.v.problems, Problem{File: c.file, Line: c.line, Rule: r.cite, Says: r.says,
		Message: fmt.Sprintf(format, a...), Warning: warn})
}

func (c *check) fail(r rule, format string, a ...any) { c.add(r, format, false, a...) }

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
		c.fail(attrRules[k], "%s must be a string, not %s", k, jsonType(v))
		return "", false
	case s == "":
		c.fail(attrRules[k], "%s must not be empty", k)
		return "", false
	}
	return s, true
}

// envelope checks the context attributes (AEP-0001 §5, §6, §8).
func (c *check) envelope(ev map[string]any) {
	for k, val := range ev {
		if val == nil {
			c.fail(rNull, "%s is null: absent optional attributes are omitted, never null", k)
			continue
		}
		if isCore(k) {
			continue
		}
		if !patterns().extName.MatchString(k) {
			c.fail(rExtName, "attribute %q is neither a core attribute nor a legal extension name ([a-z0-9]{1,20})", k)
			continue
		}
		switch x := val.(type) {
		case string, bool:
		case json.Number:
			if !isInteger(x) {
				c.fail(rExtValue, "extension attribute %s must be a string, integer or boolean, not a fraction", k)
			}
		default:
			c.fail(rExtValue, "extension attribute %s must be a string, integer or boolean, not %s", k, jsonType(val))
		}
	}
	for _, k := range []string{"aep", "id", "type", "time", "source", "agent"} {
		if _, ok := ev[k]; !ok {
			c.fail(rRequired, "missing required attribute %s", k)
		}
	}
	if a, ok := ev["aep"]; ok && a != "0.1" {
		c.fail(attrRules["aep"], "aep is %v; this validator checks AEP 0.1", a)
	}
	c.str(ev, "id")
	c.str(ev, "agent")
	for _, k := range []string{"subject", "session", "run", "step", "cause"} {
		c.str(ev, k)
	}
	if t, ok := c.str(ev, "time"); ok {
		if _, err := time.Parse(time.RFC3339Nano, t); err != nil || !hasZone(t) {
			c.fail(attrRules["time"], "time %q is not an RFC 3339 timestamp with a timezone", t)
		}
	}
	if s, ok := c.str(ev, "source"); ok {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			c.fail(attrRules["source"], "source %q is not a URI", s)
		}
	}
	for _, k := range []string{"seq", "epoch"} {
		if x, ok := ev[k]; ok {
			n, isNum := x.(json.Number)
			if !isNum || !isInteger(n) || strings.HasPrefix(n.String(), "-") {
				c.fail(attrRules[k], "%s must be an integer >= 0, not %v", k, x)
			}
		}
	}
	if tp, ok := c.str(ev, "traceparent"); ok && !patterns().traceparent.MatchString(tp) {
		c.fail(attrRules["traceparent"], "traceparent %q is not a W3C Trace Context value", tp)
	}
	if sv, ok := c.str(ev, "severity"); ok && !contains(c.v.schema.severity, sv) {
		c.fail(rSeverity, "severity %q is not one of %s", sv, strings.Join(c.v.schema.severity, ", "))
	}
	c.capture = levelOf("metadata")
	if cp, ok := c.str(ev, "capture"); ok {
		if l := levelOf(cp); l < 0 || !contains(c.v.schema.capture, cp) {
			c.fail(rCaptureSet, "capture %q is not one of %s", cp, strings.Join(c.v.schema.capture, ", "))
		} else {
			c.capture = l
		}
	}
	if d, ok := ev["data"]; ok {
		if _, isObj := d.(map[string]any); !isObj {
			c.fail(attrRules["data"], "data must be an object, not %s", jsonType(d))
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
			c.fail(rTypeName, "vendor type %q must be x.{vendor}.{category}.{rest}", typ)
		}
	case !patterns().typeName.MatchString(typ):
		c.fail(rTypeName, "type %q must be lowercase {category}.{rest} tokens of [a-z0-9_]", typ)
	case !c.v.schema.categories[cat]:
		c.fail(rCategory, "type %q: %q is not a registered category (vendor types go under x.{vendor}.)", typ, cat)
	default:
		spec, ok := c.v.schema.types[typ]
		if !ok {
			c.fail(rCoreType, "type %q is not a registered core type; use x.{vendor}.%s for a vendor extension", typ, typ)
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
				c.fail(rAgentScope, "agent-scoped %s must not carry %s", typ, k)
			}
		}
	case c.v.foreign.MatchString(typ):
		c.scoped = "foreign"
		r := rCommand
		if typ == "attention.routed" {
			r = rRouted
		}
		if !hasSession {
			c.fail(r, "%s (a foreign-emitter session event) must carry session", typ)
		}
		if hasSeq {
			c.fail(r, "%s (a foreign-emitter session event) must omit seq", typ)
		}
	default:
		c.scoped = "session"
		if !hasSession {
			c.fail(rSessionScope, "session-scoped %s must carry session", typ)
		}
		if !hasSeq {
			c.fail(rSessionScope, "session-scoped %s must carry seq", typ)
		}
	}
}

// payload checks data against the type's schema and capture level
// (AEP-0001 §8.2(a), AEP-0002 §5.1).
func (c *check) payload(ev map[string]any) {
	data, _ := ev["data"].(map[string]any)
	if c.capture == 0 && len(data) > 0 {
		c.fail(rCaptureNone, "capture none is the envelope only, but data has %d member(s)", len(data))
		return
	}
	if c.registered == nil || !c.registered.schema {
		return
	}
	c.object("data", data, c.registered.data)
}

// object checks an object's members against f.
func (c *check) object(path string, obj map[string]any, f *field) {
	schema := payloadRule(c.typ, c.registered)
	for _, name := range f.order {
		m := f.props[name]
		if _, ok := obj[name]; !ok && m.required {
			c.fail(schema, "%s.%s is required in %s", path, name, c.typ)
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
					c.fail(rFieldSpec, "%s.%s is required when %s is %s", path, r, w.key, w.value)
				}
			}
		}
	}
}

// value checks one present member.
func (c *check) value(path string, val any, f *field) {
	schema := payloadRule(c.typ, c.registered)
	if f.capture > c.capture {
		c.fail(rCaptureField, "%s is %s-level content in an event whose capture is %s", path,
			captureLevels[f.capture], captureLevels[c.capture])
		return
	}
	if len(f.types) > 0 && !typeOK(val, f.types) {
		c.fail(schema, "%s must be %s, not %s", path, strings.Join(f.types, " or "), jsonType(val))
		return
	}
	if len(f.enum) > 0 {
		got, _ := json.Marshal(val)
		if !contains(f.enum, string(got)) {
			c.fail(schema, "%s is %s, not one of %s", path, got, strings.Join(f.enum, ", "))
		}
	}
	if n, ok := val.(json.Number); ok {
		x, _ := n.Float64()
		if f.min != nil && x < *f.min {
			c.fail(schema, "%s is %s, below the minimum %v", path, n, *f.min)
		}
		if f.max != nil && x > *f.max {
			c.fail(schema, "%s is %s, above the maximum %v", path, n, *f.max)
		}
	}
	if s, ok := val.(string); ok && f.format == "date-time" {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			c.fail(schema, "%s %q is not an RFC 3339 date-time", path, s)
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

// identity checks that (source, id) names one event: a second event under
// the same id from the same emitter must be a redelivery of the first,
// unchanged (AEP-0001 §5.1 #2, §7.4). It reports whether ev is such a
// redelivery, which the stream rules have already seen.
func (c *check) identity(ev map[string]any) (redelivery bool) {
	src, _ := ev["source"].(string)
	id, _ := ev["id"].(string)
	if src == "" || id == "" {
		return false
	}
	b, _ := json.Marshal(ev) // map keys sorted: the same event gives the same bytes
	sum := sha256.Sum256(b)
	var d [16]byte
	copy(d[:], sum[:])
	k := sourceID{src, id}
	prev, seen := c.v.ids[k]
	if !seen {
		c.v.ids[k] = seenID{file: c.file, line: c.line, digest: d}
		return false
	}
	if prev.digest != d {
		c.fail(rIDUnique, "id %s of %s was already used by a different event (%s:%d)", id, src, prev.file, prev.line)
	}
	return true
}

// stream checks the per-session rules: (epoch, seq) order, references,
// terminals (AEP-0001 §7, §10; AEP-0002 §2, §7; AEP-0004 §3).
func (c *check) stream(ev map[string]any) {
	if c.identity(ev) {
		return // a redelivery (or a reused id, reported): already checked
	}
	sess, _ := ev["session"].(string)
	src, _ := ev["source"].(string)
	id, _ := ev["id"].(string)
	if sess == "" || c.typ == "" {
		return
	}
	vw := c.v.views[sess]
	if vw == nil {
		vw = &view{foreign: map[string]string{}, forms: map[string]form{}}
		c.v.views[sess] = vw
	}
	if c.scoped == "foreign" {
		if id != "" {
			vw.foreign[id] = c.typ
		}
		if c.typ == "control.attention.respond" {
			c.values(ev, vw)
		}
		return
	}
	k := sessionKey{src, sess}
	s := c.v.sessions[k]
	if s == nil {
		s = &session{positions: map[[2]int64]string{}, ids: map[string]string{}, runEnd: map[string]string{},
			runSeen: map[string]where{}, attnEnd: map[string]string{}, pending: map[string]bool{}, acks: map[string]ack{}}
		c.v.sessions[k] = s
	}
	c.order(ev, s, id)
	cause, hasCause := ev["cause"].(string)
	if hasCause {
		_, seen := s.ids[cause]
		if !seen {
			_, seen = vw.foreign[cause]
		}
		if !seen {
			c.ref(rCause, "cause %s names no earlier event of this session", cause)
		}
	}
	if run, _ := ev["run"].(string); run != "" {
		if _, ok := s.runSeen[run]; !ok {
			s.runSeen[run] = where{c.file, c.line}
			s.runOrder = append(s.runOrder, run)
		}
	}
	subject, _ := ev["subject"].(string)
	switch c.typ {
	case "attention.answered", "attention.resolved", "attention.timeout":
		switch t, seen := s.ids[subject]; {
		case subject == "":
			c.fail(rSubject, "%s must set subject to the attention.requested id", c.typ)
		case !seen:
			c.ref(rSubject, "%s subject %s names no attention.requested of this session", c.typ, subject)
		case t != "attention.requested":
			c.fail(rSubject, "%s subject %s is a %s, not an attention.requested", c.typ, subject, t)
		}
		if c.typ == "attention.answered" {
			c.values(ev, vw)
		}
		if c.typ == "attention.resolved" || c.typ == "attention.timeout" {
			if prev, ok := s.attnEnd[subject]; ok && subject != "" {
				c.fail(rAttnEnd, "attention request %s already reached its terminal (%s)", subject, prev)
			}
			s.attnEnd[subject] = id
			delete(s.pending, subject)
		}
	case "attention.requested":
		s.pending[id] = true
		if f, ok := formOf(ev); ok {
			vw.forms[id] = f
		}
	case "control.accepted", "control.rejected":
		switch prev, acked := s.acks[cause]; {
		case !hasCause:
			c.fail(rAckCause, "%s must set cause to the id of the command it acknowledges", c.typ)
		case acked && prev.typ != c.typ:
			c.fail(rAck, "command %s was already acknowledged %s (%s): a conflicting second decision", cause, strings.TrimPrefix(prev.typ, "control."), prev.id)
		case acked:
			c.fail(rAck, "command %s was already acknowledged (%s): a second ack event, not a redelivery of the first", cause, prev.id)
		default:
			s.acks[cause] = ack{id: id, typ: c.typ}
		}
	case "error.raised":
		// aep-hook's mark of a moment its adapter could not record in time:
		// the session's record has a gap there. Complete input claims whole
		// sessions, so it is a violation there, a warning otherwise.
		if d, _ := ev["data"].(map[string]any); d["code"] == lostCode {
			hook, _ := d["hook"].(string)
			when, _ := ev["time"].(string)
			c.ref(rLost, "a %s moment of this session was lost at %s (its hook ran out of time): the record is incomplete here", hook, when)
		}
	case "run.finished", "run.failed", "run.cancelled":
		run, _ := ev["run"].(string)
		if run == "" {
			c.fail(rRunNamed, "%s must carry the run it ends", c.typ)
		} else if prev, ok := s.runEnd[run]; ok {
			c.fail(rRunEnd, "run %s already reached a terminal (%s): one terminal per run", run, prev)
		} else {
			s.runEnd[run] = id
		}
	case "session.ended":
		if s.ended != "" {
			c.fail(rSessionEnd, "session already ended (%s): one session.ended per session", s.ended)
		}
		s.ended = id
		if len(s.pending) > 0 {
			var ids []string
			for p := range s.pending {
				ids = append(ids, p)
			}
			sort.Strings(ids)
			c.fail(rPendingEnd, "session.ended with attention request(s) still pending: %s", strings.Join(ids, ", "))
		}
	}
	if id != "" {
		s.ids[id] = c.typ
	}
}

// formOf reads a kind:"form" request's fields.
func formOf(ev map[string]any) (form, bool) {
	data, _ := ev["data"].(map[string]any)
	if kind, _ := data["kind"].(string); kind != "form" {
		return nil, false
	}
	fields, _ := data["fields"].([]any)
	f := form{}
	for _, x := range fields {
		m, _ := x.(map[string]any)
		id, _ := m["id"].(string)
		if id == "" {
			continue
		}
		ff := formField{choices: map[string]bool{}}
		ff.typ, _ = m["type"].(string)
		ff.multi, _ = m["multi"].(bool)
		ff.other, _ = m["other"].(bool)
		choices, _ := m["choices"].([]any)
		for _, ch := range choices {
			cm, _ := ch.(map[string]any)
			if cid, ok := cm["id"].(string); ok {
				ff.choices[cid] = true
			}
		}
		f[id] = ff
	}
	return f, true
}

// values checks answer.values against the form request the event answers
// (its subject): every key names a field, every value has the field's type,
// a select takes its choices' ids (free text only where other is true), and
// free text (a string field's value, an other answer) is redacted-level
// content (AEP-0002 §5.3, AEP-0006).
func (c *check) values(ev map[string]any, vw *view) {
	data, _ := ev["data"].(map[string]any)
	answer, _ := data["answer"].(map[string]any)
	vals, ok := answer["values"].(map[string]any)
	if !ok {
		return
	}
	subject, _ := ev["subject"].(string)
	f, known := vw.forms[subject]
	if !known {
		return // the request is not in the input, or is not a form
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	freeText := func(k string) {
		if c.capture < levelOf("redacted") {
			c.fail(rValuesCapture, "data.answer.values.%s is free text in an event whose capture is %s", k, captureLevels[c.capture])
		}
	}
	for _, k := range keys {
		fs, ok := f[k]
		if !ok {
			c.fail(rValues, "data.answer.values.%s names no field of the form %s", k, subject)
			continue
		}
		val := vals[k]
		switch fs.typ {
		case "string":
			if _, ok := val.(string); !ok {
				c.fail(rValues, "data.answer.values.%s answers a string field with %s", k, jsonType(val))
			} else {
				freeText(k)
			}
		case "number":
			if _, ok := val.(json.Number); !ok {
				c.fail(rValues, "data.answer.values.%s answers a number field with %s", k, jsonType(val))
			}
		case "boolean":
			if _, ok := val.(bool); !ok {
				c.fail(rValues, "data.answer.values.%s answers a boolean field with %s", k, jsonType(val))
			}
		case "select":
			picks := []any{val}
			if fs.multi {
				arr, isArr := val.([]any)
				if !isArr {
					c.fail(rValues, "data.answer.values.%s answers a multi-select field with %s, not an array of choice ids", k, jsonType(val))
					continue
				}
				picks = arr
			}
			for _, p := range picks {
				s, isStr := p.(string)
				switch {
				case !isStr:
					c.fail(rValues, "data.answer.values.%s answers a select field with %s, not a choice id", k, jsonType(p))
				case fs.choices[s]:
				case fs.other:
					freeText(k)
				default:
					c.fail(rValues, "data.answer.values.%s is %q, not one of the field's choice ids, and the field does not allow other", k, s)
				}
			}
		}
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
		c.fail(rPosition, "position (epoch %d, seq %d) is already event %s: two events claim one position", epoch, seq, other)
		return
	}
	if s.hasPos && (epoch < s.lastEpoch || (epoch == s.lastEpoch && seq <= s.lastSeq)) {
		c.fail(rRegress, "(epoch %d, seq %d) after (epoch %d, seq %d): positions never regress within a session", epoch, seq, s.lastEpoch, s.lastSeq)
	}
	if !s.hasPos || epoch > s.lastEpoch || (epoch == s.lastEpoch && seq > s.lastSeq) {
		s.lastEpoch, s.lastSeq, s.hasPos = epoch, seq, true
	}
	s.positions[pos] = id
}

// lostCode is the error.raised code aep-hook marks a lost moment with.
const lostCode = "moment_lost"

// ref reports an unresolved reference: a violation for complete input, a
// warning otherwise (the log may begin mid-session).
func (c *check) ref(r rule, format string, a ...any) {
	c.add(r, format, !c.v.Complete, a...)
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
