// Package printable makes untrusted text safe to show on a terminal: every
// human-readable output of aep-hook (timeline, tail, doctor) passes event
// fields, file names and error messages through [String] so that a tool
// name or a session id can never clear the screen, set the window title,
// move the cursor, hide text or forge a line.
package printable

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every byte or rune a terminal would act on replaced
// by a visible Go-style escape: the C0 controls (newline and tab included,
// so one value stays on one line), DEL, the C1 controls, the Unicode
// bidirectional overrides and isolates (which reorder what is shown), the
// line and paragraph separators, and bytes that are not UTF-8. Everything
// else, including non-ASCII text, is kept. A string with nothing to replace
// is returned as is, without allocating.
func String(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case unsafe(r, n):
			b.WriteString(escape(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafe reports whether the rune r (n bytes long) must be escaped.
func unsafe(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls: CSI, OSC, ...
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // bidi marks
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// escape spells r as a Go escape: \n, \t, \r, \x1b, \u202e.
func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	if r < 0x80 {
		return `\x` + hex2(byte(r))
	}
	h := strconv.FormatInt(int64(r), 16)
	return `\u` + strings.Repeat("0", 4-len(h)) + h
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// Clip returns String(s) cut to at most n runes of s, marking a cut with
// "…". The cut never splits a rune, so it cannot itself produce an escape.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return String(s)
	}
	i, k := 0, 0
	for k < n && i < len(s) {
		_, sz := utf8.DecodeRuneInString(s[i:])
		i += sz
		k++
	}
	return String(s[:i]) + "…"
}
