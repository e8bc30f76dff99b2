package redact

import (
	"strings"
)

// Name returns an identifier (a tool name, an MCP server name, a subject,
// a state key) with every credential the token rules find in it replaced
// and the rest of the name kept: "mcp__gh_ghp_..._create_issue" becomes
// "mcp__gh_[REDACTED:secret]_create_issue", "https://svc:pw@host/sse"
// keeps its scheme, user and host. Identifiers are metadata, kept at every
// ceiling below full, so they pass here instead of the text pipeline.
//
// A name holding nothing a token could be (no run of 16 or more letters
// and digits other than hex, no part mixing letters and digits, no URL,
// assignment, address or words) is returned as it is without building any
// rule, so the metadata path of an ordinary hook compiles nothing. A
// metadata string holding words is text a vendor put there (a tool's
// title, an error's reason): it gets the whole of rule (a).
func Name(s string) string {
	if !nameSuspect(s) {
		return s
	}
	if _, lone := loneToken(s); lone {
		return secretMark // the whole name is one generated token
	}
	spans := namePipeline.get().secretHits(s)
	for i, sp := range spans {
		// A token's alphabet holds '_', a name's separator "__" ends it:
		// mcp__openai_sk-proj-..._chat keeps its "__chat".
		if k := strings.Index(s[sp.start+1:sp.end], "__"); k >= 0 {
			spans[i].end = sp.start + 1 + k
		}
	}
	return replaceSpans(s, spans, secretMark)
}

// namePipeline runs rule (a) alone: no home, no environment values, no PII.
var namePipeline = lazy[*Pipeline]{make: newSecretsPipeline}

// nameSuspect reports whether a name may hold a credential: a URL, an
// assignment or an address; words (a metadata field holding text, such as
// a tool title or a vendor's reason, gets the whole of rule (a)); a run of
// at least 16 letters and digits that is not a hex digest, a ULID or a
// plain word; or a part of 8 or more that mixes letters and digits
// (glpat-JS6R-wzhy3TXttayxt43), hex aside.
func nameSuspect(s string) bool {
	if len(s) < 8 {
		return false // nothing shorter is a token or holds one
	}
	// A URL, an assignment, an address or words: one pass over the bytes
	// (the name check runs on every metadata string and state key).
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=', '@', ' ', '\t', '\n':
			return true
		case ':':
			if strings.HasPrefix(s[i+1:], "//") {
				return true
			}
		}
	}
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		j := i
		letters, digits := false, false
		for j < len(s) && isAlnum(s[j]) {
			letters = letters || isAlpha(s[j])
			digits = digits || isDigit(s[j])
			j++
		}
		run := s[i:j]
		if len(run) >= 16 && !hexOnly(run, 16) && !ulidLike(run) && !plainWord(run) ||
			len(run) >= 8 && letters && digits && !hexOnly(run, 8) && !ulidLike(run) {
			return true
		}
		i = j
	}
	return false
}

// plainWord reports whether a run is lower-case letters only, or
// CamelCase words ("createissue", "ReadTextFile"): names, not tokens.
func plainWord(run string) bool {
	for i := 0; i < len(run); i++ {
		if !isAlpha(run[i]) {
			return false
		}
	}
	return camelWords(run) || strings.ToLower(run) == run
}

// nameValue passes every string of a decoded value kept verbatim at a
// ceiling below full, object keys included, through [Name]. The input is
// not modified: a container holding a changed string is copied.
func nameValue(v any) any {
	out, _ := names(v)
	return out
}

// names is nameValue reporting whether anything changed.
func names(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		if n := Name(t); n != t {
			return n, true
		}
		return v, false // the same box: no copy of an unchanged string
	case map[string]any:
		var out map[string]any
		for k, x := range t {
			nk := Name(k)
			nx, changed := names(x)
			if !changed && nk == k {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(t))
				for k2, x2 := range t {
					out[k2] = x2
				}
			}
			delete(out, k)
			out[nk] = nx
		}
		if out == nil {
			return t, false
		}
		return out, true
	case []any:
		var out []any
		for i, x := range t {
			nx, changed := names(x)
			if changed && out == nil {
				out = append(make([]any, 0, len(t)), t[:i]...)
			}
			if out != nil {
				out = append(out, nx)
			}
		}
		if out == nil {
			return t, false
		}
		return out, true
	}
	return v, false
}
