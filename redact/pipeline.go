package redact

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
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
// is built on the first call to Text or Value and each rule's regular
// expression compiles the first time its keyword occurs, so a process that
// never redacts pays nothing. A Pipeline is safe for concurrent use.
type Pipeline struct {
	opts  Options
	table func() []rule // the rule table; rules() unless a test narrows it
	once  sync.Once
	rules []compiledRule
	index *kwIndex
	env   []string // rule (b) values, longest first
	home  string
}

// compiledRule is a rule with its lazily compiled pattern.
type compiledRule struct {
	rule
	once sync.Once
	re   *regexp.Regexp
}

func (c *compiledRule) regexp() *regexp.Regexp {
	if c.pattern == "" {
		return nil
	}
	c.once.Do(func() { c.re = regexp.MustCompile(c.pattern) })
	return c.re
}

// NewPipeline returns a pipeline for opts. It compiles nothing.
func NewPipeline(opts Options) *Pipeline { return &Pipeline{opts: opts, table: rules} }

func (p *Pipeline) init() {
	p.once.Do(func() {
		rs := p.table()
		p.rules = make([]compiledRule, len(rs))
		for i := range rs {
			p.rules[i].rule = rs[i]
		}
		p.index = newKWIndex(rs)
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
	s = replaceSpans(s, p.secretSpans(s), secretMark)
	s = replaceSpans(s, p.envSpans(s), secretMark)
	s = replaceSpans(s, homeSpans(s, p.home), "~")
	if !p.opts.NoPII {
		s = replaceSpans(s, piiSpans(s), piiMark)
	}
	return s
}

// Value walks a decoded JSON value: strings (and numbers) under
// credential-named keys are replaced whole, other strings pass
// [Pipeline.Text], numbers, booleans and nulls stay, keys are never
// rewritten. The input is not modified.
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
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = p.value(x, CredentialKey(k))
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = p.value(x, cred)
		}
		return out
	}
	return v
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

// secretSpans runs rule (a): the keyword prefilter, then each hit rule's
// pattern over its merged windows, and each scan rule at its hits.
func (p *Pipeline) secretSpans(s string) []span {
	wins, hits := p.index.windows(s, p.rules)
	var out []span
	for ri, ws := range wins {
		if len(ws) == 0 {
			continue
		}
		r := &p.rules[ri]
		re := r.regexp()
		for _, w := range ws {
			for _, m := range re.FindAllStringSubmatchIndex(s[w.start:w.end], -1) {
				for k := range m {
					if m[k] >= 0 {
						m[k] += w.start
					}
				}
				if sp, ok := r.span(s, m); ok {
					out = append(out, sp)
				}
			}
		}
	}
	var last []int // per scan rule: end of the last value it redacted
	for _, h := range hits {
		if last == nil {
			last = make([]int, len(p.rules))
		}
		if h.at < last[h.rule] {
			continue // inside a value already redacted
		}
		key, at, noDash, ok := p.rules[h.rule].scan(s, h.at, h.kwLen)
		if !ok || !CredentialKey(key) {
			continue
		}
		if sp, ok := parseValue(s, at, noDash); ok {
			out = append(out, sp)
			last[h.rule] = sp.end
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

// parseValue reads the value of an assignment starting at i: a double-quoted
// string (also JSON-escaped as \"...\"), a single-quoted string, or a bare
// token. Placeholders, booleans and already redacted values are refused; an
// authentication scheme word (Bearer, Basic, token) is skipped to the
// credential after it.
func parseValue(s string, i int, noDash bool) (span, bool) {
	n := len(s)
	if i >= n {
		return span{}, false
	}
	var st, en int
	switch {
	case s[i] == '\\' && i+1 < n && s[i+1] == '"':
		st = i + 2
		en = st
		for en < n && s[en] != '\n' && s[en] != '\r' && !(s[en] == '\\' && en+1 < n && s[en+1] == '"') {
			en++
		}
	case s[i] == '"':
		st = i + 1
		en = st
		for en < n && s[en] != '"' && s[en] != '\n' && s[en] != '\r' {
			if s[en] == '\\' && en+1 < n {
				en++
			}
			en++
		}
		en = min(en, n)
	case s[i] == '\'':
		st = i + 1
		en = st
		for en < n && s[en] != '\'' && s[en] != '\n' && s[en] != '\r' {
			en++
		}
	default:
		st = i
		en = bareEnd(s, i)
	}
	v := s[st:en]
	if v == "" || (noDash && v[0] == '-') || strings.HasPrefix(v, "[REDACTED") || !hasAlnum(v) {
		return span{}, false
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "nil", "undefined", "***":
		return span{}, false
	case "bearer", "basic", "token", "digest", "negotiate":
		j := en
		for j < n && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j == en || j >= n {
			return span{}, false
		}
		e := bareEnd(s, j)
		if e == j || strings.HasPrefix(s[j:e], "[REDACTED") {
			return span{}, false
		}
		return span{j, e}, true
	}
	return span{st, en}, true
}

// hasAlnum reports whether s holds a letter or digit (any non-ASCII byte
// counts): a value of ASCII punctuation alone ("/", "***", "-") is a
// placeholder, not a credential.
func hasAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) || s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// bareEnd returns the end of an unquoted value starting at i.
func bareEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '"', '\'', ',', ';', '&', '{', '}', '[', ']', '(', ')', '<', '>', '\\', '`':
			return i
		}
		i++
	}
	return i
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
