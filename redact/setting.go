package redact

import (
	"sync"
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
	return replaceSpans(s, diagPipeline().secretHits(s), secretMark)
}

// diagPipeline is the pipeline Diagnostic runs: secrets only. It is built
// on first use and never modified.
var diagPipeline = sync.OnceValue(func() *Pipeline { return NewPipeline(Options{NoPII: true}) })

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
// userinfo of scheme://user:pass@host, and the query and fragment of any
// URL-like run, including one without a scheme (host:port/x?token=...).
func urlSecretSpans(s string) []span {
	var out []span
	for i := 0; i+2 < len(s); i++ {
		switch {
		case s[i] == ':' && s[i+1] == '/' && s[i+2] == '/':
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
			i = end
		case s[i] == '?' && i > 0 && s[i-1] != ' ' && queryStart(s, i+1):
			out = append(out, tailSpans(s, i, urlEnd(s, i))...)
			i = urlEnd(s, i)
		}
	}
	return out
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
