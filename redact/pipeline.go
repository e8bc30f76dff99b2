package redact

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Options configures a [Pipeline].
type Options struct {
	Home      string              // the home directory prefix replaced by "~"; "" for none
	SecretEnv []string            // names of environment variables whose values are secrets
	Getenv    func(string) string // looks the names up; nil means no values
	NoPII     bool                // disable rule (d), e-mail addresses and phone numbers
}

// minEnvSecret is the shortest environment value rule (b) replaces: a
// shorter one would shred ordinary text and protects nothing.
const minEnvSecret = 4

// Pipeline is the AEP-0003 §9.4 text redaction pipeline. Its keyword index
// is set up on the first call to Text or Value, and a rule's compiled state
// is made, and its regular expression compiled, the first time its keyword
// occurs, so a process that never redacts pays nothing and one that does
// pays for the rules its text calls for. A Pipeline is safe for concurrent
// use.
type Pipeline struct {
	opts  Options
	table func() []rule // the rule table; nil means rules()
	once  sync.Once
	refs  []*rule // the rules, shared and never written
	// compiled holds each rule's compiled state once a keyword hit made
	// it: a hook redacts text that hits a few of the rules, and making all
	// of them up front cost each pipeline kilobytes of fresh memory.
	compiled []atomic.Pointer[compiledRule]
	eager    bool // make every rule's state at set-up (tests compare the two)
	index    *kwIndex
	env      []string // rule (b) values, longest first
	home     string
}

// compiledRule is a rule (shared, never written) with its lazily
// compiled patterns.
type compiledRule struct {
	*rule
	once, ionce sync.Once
	re, ire     *regexp.Regexp
}

func (c *compiledRule) regexp() *regexp.Regexp {
	if c.pattern == "" {
		return nil
	}
	c.once.Do(func() { c.re = regexp.MustCompile(c.pattern) })
	return c.re
}

// innerRegexp is the rule's inner pattern.
func (c *compiledRule) innerRegexp() *regexp.Regexp {
	c.ionce.Do(func() { c.ire = regexp.MustCompile(c.inner) })
	return c.ire
}

// NewPipeline returns a pipeline for opts. It compiles nothing.
func NewPipeline(opts Options) *Pipeline { return &Pipeline{opts: opts} }

// rule returns rule i's compiled state, made on first use. Two goroutines
// that make it at once keep the first one stored, so each rule compiles
// its patterns once per pipeline.
func (p *Pipeline) rule(i int) *compiledRule {
	if c := p.compiled[i].Load(); c != nil {
		return c
	}
	c := &compiledRule{rule: p.refs[i]}
	if p.compiled[i].CompareAndSwap(nil, c) {
		return c
	}
	return p.compiled[i].Load()
}

func (p *Pipeline) init() {
	p.once.Do(func() {
		if p.table == nil {
			p.refs = ruleTable.get()
			p.index = defaultIndex()
		} else {
			rs := p.table()
			p.index = newKWIndex(rs)
			p.refs = make([]*rule, len(rs))
			for i := range rs {
				p.refs[i] = &rs[i]
			}
		}
		p.compiled = make([]atomic.Pointer[compiledRule], len(p.refs))
		if p.eager {
			for i := range p.refs {
				if r := p.rule(i); r.inner != "" {
					r.innerRegexp()
				}
				p.rule(i).regexp()
			}
		}
		if p.opts.Getenv != nil {
			for _, name := range p.opts.SecretEnv {
				if v := p.opts.Getenv(strings.TrimSpace(name)); len(v) >= minEnvSecret {
					p.env = append(p.env, v)
				}
			}
			slices.SortFunc(p.env, func(a, b string) int { return len(b) - len(a) })
		}
		p.home = strings.TrimRight(p.opts.Home, `/\`)
	})
}

// Text redacts free text, in the §9.4 order: (a) secrets and credentials,
// (b) values of the configured environment variables, (c) home directory
// prefixes, (d) e-mail addresses and phone numbers unless disabled.
func (p *Pipeline) Text(s string) string {
	if s == "" {
		return s
	}
	p.init()
	spans := p.secretSpans(s)
	if sp, ok := loneSpan(s); ok {
		spans = append(spans, sp)
	}
	s = replaceSpans(s, spans, secretMark)
	s = replaceSpans(s, p.envSpans(s), secretMark)
	s = replaceSpans(s, homeSpans(s, p.home), "~")
	if !p.opts.NoPII {
		s = replaceSpans(s, piiSpans(s), piiMark)
	}
	return s
}

// Value walks a decoded JSON value: strings (and numbers) under
// credential-named keys are replaced whole, other strings pass
// [Pipeline.Text], numbers, booleans and nulls stay. Object keys pass
// [Pipeline.Text] too (an AskUserQuestion answer is keyed by the question's
// own words): a key the pipeline changes becomes its redacted text, made
// unique within its object by a " #2", " #3" suffix in the order of the
// original keys, so the structure survives and the same object always
// yields the same keys. The input is not modified.
func (p *Pipeline) Value(v any) any {
	return p.value(v, false)
}

func (p *Pipeline) value(v any, cred bool) any {
	switch t := v.(type) {
	case string:
		if cred && t != "" && !strings.HasPrefix(t, "[REDACTED") {
			return secretMark
		}
		return p.Text(t)
	case json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		if cred {
			return secretMark
		}
		return v
	case map[string]any:
		return p.object(t, func(k string) bool { return CredentialKey(k) || proseSecret(k) })
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = p.value(x, cred)
		}
		return out
	}
	return v
}

// object walks the members of m; secret reports whether a member's value is
// a credential by its key alone.
func (p *Pipeline) object(m map[string]any, secret func(string) bool) map[string]any {
	out := make(map[string]any, len(m))
	pair := pairSecret(m)
	secretIn := func(k string, x any) bool {
		return secret(k) || k == pair || answersQuestion(k, x) || formValue(k, x)
	}
	var renamed []string
	for k, x := range m {
		if p.Text(k) != k {
			renamed = append(renamed, k)
			continue
		}
		out[k] = p.value(x, secretIn(k, x))
	}
	slices.Sort(renamed)
	for _, k := range renamed {
		base := p.Text(k)
		nk := base
		for n := 2; ; n++ {
			if _, taken := out[nk]; !taken {
				break
			}
			nk = base + " #" + strconv.Itoa(n)
		}
		out[nk] = p.value(m[k], secretIn(k, m[k]))
	}
	return out
}

// pairNames are the members that name a field in a {name, value} pair,
// pairValues those that hold its value.
const (
	pairNames  wordSet = "name id key field label title question prompt header variable var"
	pairValues wordSet = "value answer text response input content data"
)

// pairSecret returns the member of a {name: X, value: V} object (a form
// field's answer, an environment entry) that holds a secret because X
// names one: {"field": "passphrase", "value": "..."}. "" when there is none.
func pairSecret(m map[string]any) string {
	if len(m) < 2 || len(m) > 8 {
		return ""
	}
	named, weakNamed := false, false
	for k, x := range m {
		if n, ok := x.(string); ok && pairNames.has(strings.ToLower(k)) {
			named = named || formSecretName(n) || secretWords(n, false)
			weakNamed = weakNamed || classifyKey(n) == weakCred
		}
	}
	for k, x := range m {
		if !pairValues.has(strings.ToLower(k)) {
			continue
		}
		if named {
			return k
		}
		// A name that may hold a credential ("license", "session") takes a
		// value that looks like one: {"field": "license", "value": "QX7F2-..."}.
		if v, ok := x.(string); ok && weakNamed && credShape(v) && !placeholderWord(v) {
			return k
		}
	}
	return ""
}

// formValue reports whether x, under the key k, is a secret a form or a
// record names by a word CredentialKey leaves alone: a PIN, an OTP, a CVV,
// a card or security code ({"pin": "0420"}). Booleans, English words,
// versions and placeholders are what such keys also hold ({"mfa": true},
// {"pin": "v1.2.0"}), and stay.
func formValue(k string, x any) bool {
	if !secretWords(k, false) {
		return false
	}
	switch v := x.(type) {
	case string:
		return v != "" && hasAlnum(v) && !placeholderWord(v) && !englishWord(v) && !versionLike(v)
	case json.Number, float64, float32, int, int64, int32, uint, uint64, uint32:
		return true
	}
	return false
}

// answersQuestion reports whether x is a lone token answering a question
// (an object keyed by a question's words): judged by its shape, as a
// token pasted after a question in text is.
func answersQuestion(k string, x any) bool {
	v, ok := x.(string)
	return ok && strings.HasSuffix(strings.TrimSpace(k), "?") && bareTokenSecret(strings.TrimSpace(v))
}

// secretHits returns the spans rule (a) finds in s.
func (p *Pipeline) secretHits(s string) []span {
	p.init()
	return p.secretSpans(s)
}

// span is a half-open byte range of the input.
type span struct{ start, end int }

// replaceSpans replaces the union of spans in s with mark.
func replaceSpans(s string, spans []span, mark string) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(s) + len(spans)*len(mark))
	last := 0
	for i := 0; i < len(spans); {
		st, en := spans[i].start, spans[i].end
		for i++; i < len(spans) && spans[i].start <= en; i++ {
			en = max(en, spans[i].end)
		}
		if st < last { // cannot happen after the merge; defensive
			st = last
		}
		b.WriteString(s[last:st])
		b.WriteString(mark)
		last = en
	}
	b.WriteString(s[last:])
	return b.String()
}

// secretSpans runs rule (a) on s and on its decoded views: the text with
// line continuations joined (a token split over "\\\n"), the text with
// percent escapes decoded, string literals that code concatenates joined,
// every base64 or hex run that decodes to text holding a secret (the whole
// run is then redacted); a secret that ends its line is followed onto the
// next when the line wraps it.
func (p *Pipeline) secretSpans(s string) []span {
	out := p.detect(s)
	for _, v := range [...]func(string) (view, bool){continuationView, percentView, concatView} {
		if vw, ok := v(s); ok {
			for _, sp := range p.detect(vw.text) {
				out = append(out, vw.source(sp))
			}
		}
	}
	out = append(out, p.base64Spans(s, 0)...)
	out = append(out, p.hexSpans(s, 0)...)
	out = append(out, p.dumpSpans(s)...)
	return extendWrapped(s, out)
}

// loneSpan finds a lone token in s: the whole text, or the detail of a
// one-line card ("Permission requested: Bash — TOKEN (description)", the
// text after its last " — " or ": ", a trailing remark aside).
func loneSpan(s string) (span, bool) {
	if sp, ok := loneToken(s); ok {
		return sp, true
	}
	if strings.ContainsAny(s, "\n\r") || len(s) > 4096 {
		return span{}, false
	}
	for _, sep := range [...]string{" — ", ": "} {
		if k := strings.LastIndex(s, sep); k >= 0 {
			st := k + len(sep)
			en := lineBody(s, st, len(s))
			if sp, ok := loneToken(s[st:en]); ok {
				return span{st + sp.start, st + sp.end}, true
			}
		}
	}
	return span{}, false
}

// loneToken reports a text that is one generated-looking token and
// nothing else (a secret pasted as a whole prompt or answer): at least 32
// bytes, lower and upper case letters and digits, high entropy, none of
// the shapes ids and digests take, and no plain word among its parts (a
// name such as mcp__server__tool is not a token). Names never pass it
// ([Name] keeps a name's structure).
func loneToken(s string) (span, bool) {
	st, en := 0, len(s)
	for st < en && isSpace(s[st]) {
		st++
	}
	for en > st && isSpace(s[en-1]) {
		en--
	}
	t := s[st:en]
	if len(t) < 32 || strings.ContainsAny(t, " \t\r\n") || strings.Contains(t, "__") || !bareTokenSecret(t) ||
		!mixedCase(t) || !hasDigit(t) || entropy(t) < 4 {
		return span{}, false
	}
	for _, part := range strings.FieldsFunc(t, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' }) {
		if len(part) >= 4 && strings.ToLower(part) == part && plainWord(part) {
			return span{}, false
		}
	}
	return span{st, en}, true
}

// detect runs the rules over s: the keyword prefilter, then each hit
// pattern rule's regexp over its merged windows, and each scan rule at its
// hits.
func (p *Pipeline) detect(s string) []span {
	wins, hits := p.index.windows(s, p.refs)
	var out []span
	for ri, ws := range wins {
		if len(ws) == 0 {
			continue
		}
		r := p.rule(ri)
		for _, w := range ws {
			out = r.matches(s, w, r.regexp(), out)
		}
	}
	var last []int // per scan rule: end of the last value it redacted
	for _, h := range hits {
		if last == nil {
			last = make([]int, len(p.refs))
		}
		if h.at < last[h.rule] {
			continue // inside a value already redacted
		}
		r := p.rule(h.rule)
		for _, sp := range r.scan(s, h.at, h.kwLen, r) {
			if sp.end > sp.start {
				out = append(out, sp)
				last[h.rule] = max(last[h.rule], sp.end)
			}
		}
	}
	return out
}

// matches appends the spans of re's matches in s[w.start:w.end]; with an
// inner pattern, the spans of its matches within each match.
func (r *compiledRule) matches(s string, w span, re *regexp.Regexp, out []span) []span {
	for _, m := range re.FindAllStringSubmatchIndex(s[w.start:w.end], -1) {
		for k := range m {
			if m[k] >= 0 {
				m[k] += w.start
			}
		}
		if r.inner != "" && re == r.re {
			out = r.matches(s, span{m[0], m[1]}, r.innerRegexp(), out)
			continue
		}
		if sp, ok := r.span(s, m); ok {
			out = append(out, sp)
		}
	}
	return out
}

// span picks the redacted range of one pattern match.
func (r *rule) span(s string, m []int) (span, bool) {
	sp := span{m[0], m[1]}
	for _, g := range r.groups {
		if m[2*g] >= 0 {
			sp = span{m[2*g], m[2*g+1]}
			break
		}
	}
	if sp.end <= sp.start || (r.check != nil && !r.check(s[sp.start:sp.end])) {
		return span{}, false
	}
	return sp, true
}

// envSpans runs rule (b): every occurrence of a configured value.
func (p *Pipeline) envSpans(s string) []span {
	var out []span
	for _, v := range p.env {
		for off := 0; ; {
			j := strings.Index(s[off:], v)
			if j < 0 {
				break
			}
			out = append(out, span{off + j, off + j + len(v)})
			off += j + len(v)
		}
	}
	return out
}
