package redact

import (
	"strings"
	"unicode/utf8"
)

// Diagnostic returns a log or error line with every credential it may quote
// removed, for the internal error log and for messages on stderr: URL
// userinfo, whole URL query strings and fragments (where a collector URL
// from AEP_OUT carries its token, even one Go's URL parser refused), and
// whatever the secret rules of the §9.4 pipeline find. Home paths and PII
// are kept: the line is for the machine's own user.
func Diagnostic(s string) string {
	if s == "" {
		return s
	}
	s = replaceSpans(s, urlSecretSpans(s), secretMark)
	return replaceSpans(s, diagPipeline.get().secretHits(s), secretMark)
}

// diagPipeline is the pipeline Diagnostic runs: secrets only. It is built
// on first use and never modified.
var diagPipeline = lazy[*Pipeline]{make: newSecretsPipeline}

// newSecretsPipeline is a pipeline that redacts secrets only.
func newSecretsPipeline() *Pipeline { return NewPipeline(Options{NoPII: true}) }

// Setting returns a configuration value as an error message may quote it:
// [Diagnostic], clipped.
func Setting(s string) string { return clip(Diagnostic(s)) }

// clip bounds a configuration value quoted in an error message, cutting at
// a rune boundary.
func clip(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// urlEnd returns the end of a URL-like run starting at i: the first blank,
// quote or angle bracket.
func urlEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>':
			return i
		}
		i++
	}
	return i
}

// urlSecretSpans finds the credential-bearing parts of URLs in s: the
// userinfo of scheme://user:pass@host, and of user:pass@host written
// without a scheme (a mistyped AEP_OUT), and the query and fragment of any
// URL-like run, including one without a scheme (host:port/x?token=...).
// An address without a colon before its '@' (an e-mail) is kept.
func urlSecretSpans(s string) []span {
	var out []span
	run, colon := 0, false // the URL-like run so far, and a ':' in it
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '[' && markLen(s[i:]) > 0:
			// A mark already in place is no userinfo.
			i += markLen(s[i:]) - 1
			run, colon = i+1, false
		case i+2 < len(s) && s[i] == ':' && s[i+1] == '/' && s[i+2] == '/':
			a := i + 3
			end := urlEnd(s, a)
			host := a
			for host < end && s[host] != '/' && s[host] != '?' && s[host] != '#' {
				host++
			}
			at := -1
			for j := a; j < host; j++ {
				if s[j] == '@' {
					at = j
				}
			}
			if at > a {
				out = append(out, span{a, at})
			}
			out = append(out, tailSpans(s, host, end)...)
			i, run, colon = end, end+1, false
		case s[i] == '?' && i > 0 && s[i-1] != ' ' && queryStart(s, i+1):
			end := urlEnd(s, i)
			out = append(out, tailSpans(s, i, end)...)
			i, run, colon = end, end+1, false
		case s[i] == ':':
			colon = true
		case s[i] == '@' && colon && i > run:
			out = append(out, span{run, i})
		case s[i] == '/' && !colon:
			// A path before any colon: not an authority.
			run = len(s)
		case isURLEnd(s[i]) || s[i] == ',' || s[i] == '(' || s[i] == '[' || s[i] == '=':
			run, colon = i+1, false
		}
	}
	return out
}

// markLen is the length of the redaction mark ("[REDACTED:kind]") s
// starts with, 0 if none.
func markLen(s string) int {
	const p = "[REDACTED:"
	if !strings.HasPrefix(s, p) {
		return 0
	}
	if j := strings.IndexByte(s[len(p):min(len(s), len(p)+16)], ']'); j >= 0 {
		return len(p) + j + 1
	}
	return 0
}

// isURLEnd reports the bytes urlEnd stops at.
func isURLEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

// Destination returns a destination setting (one URL or a comma list,
// with or without a scheme) as an output may show it: the userinfo (the
// part of the authority before its last '@'), the query and the fragment
// of each item replaced by the secret mark, then whatever [Diagnostic]
// finds. Unlike Diagnostic it needs no colon to know userinfo: a setting
// is no prose.
func Destination(s string) string {
	items := strings.Split(s, ",")
	for i, it := range items {
		a := 0
		if k := strings.Index(it, "://"); k >= 0 {
			a = k + 3
		}
		end := len(it)
		if k := strings.IndexAny(it[a:], "?#"); k >= 0 {
			end = a + k
			if end+1 < len(it) {
				it = it[:end+1] + secretMark
			}
		}
		auth := end
		if k := strings.IndexByte(it[a:end], '/'); k >= 0 {
			auth = a + k
		}
		if at := strings.LastIndexByte(it[a:auth], '@'); at > 0 {
			it = it[:a] + secretMark + it[a+at:]
		}
		items[i] = it
	}
	return Diagnostic(strings.Join(items, ","))
}

// queryStart reports whether a query parameter name and '=' start at i.
func queryStart(s string, i int) bool {
	j := i
	for j < len(s) && (isAlnum(s[j]) || s[j] == '_' || s[j] == '-' || s[j] == '.' || s[j] == '[' || s[j] == ']') {
		j++
	}
	return j > i && j < len(s) && s[j] == '='
}

// tailSpans returns the query (after '?') and fragment (after '#') of the
// URL path part s[from:end], each as one span.
func tailSpans(s string, from, end int) []span {
	for j := from; j < end; j++ {
		if s[j] == '?' || s[j] == '#' {
			if j+1 < end {
				return []span{{j + 1, end}}
			}
			return nil
		}
	}
	return nil
}
