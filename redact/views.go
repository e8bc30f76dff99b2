package redact

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// view is a decoded form of an input: text, and for each of its bytes the
// range of the input it came from, so a span found in the view maps back.
type view struct {
	text  string
	start []int // start[i]: offset in the input of text[i]
	width []uint8
}

// source maps a span of the view back to the input.
func (v view) source(sp span) span {
	return span{v.start[sp.start], v.start[sp.end-1] + int(v.width[sp.end-1])}
}

// decode builds the view of s that step describes: at each position step
// returns the byte it decodes to, how many input bytes that consumes, and
// whether the byte is emitted at all (a line continuation is not).
func decode(s string, step func(s string, i int) (c byte, n int, emit bool)) view {
	var b strings.Builder
	b.Grow(len(s))
	v := view{start: make([]int, 0, len(s)), width: make([]uint8, 0, len(s))}
	for i := 0; i < len(s); {
		c, n, emit := step(s, i)
		if emit {
			b.WriteByte(c)
			v.start = append(v.start, i)
			v.width = append(v.width, uint8(n))
		}
		i += n
	}
	v.text = b.String()
	return v
}

// continuationView joins lines continued with a trailing backslash (shell,
// Python, C, Makefiles), dropping the backslash, the line break and the
// next line's indentation, so a token split across lines is seen whole.
func continuationView(s string) (view, bool) {
	if !strings.Contains(s, "\\\n") && !strings.Contains(s, "\\\r\n") {
		return view{}, false
	}
	return decode(s, func(s string, i int) (byte, int, bool) {
		if s[i] == '\\' {
			j := i + 1
			if j < len(s) && s[j] == '\r' {
				j++
			}
			if j < len(s) && s[j] == '\n' {
				return 0, skipBlanks(s, j+1) - i, false
			}
		}
		return s[i], 1, true
	}), true
}

// percentView decodes URL percent escapes (%3D, %2F, %40 ...), so a
// credential in an encoded query, form body or URL is seen as written.
func percentView(s string) (view, bool) {
	escape := func(s string, i int) bool { return s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) }
	found := false
	for i := 0; i < len(s) && !found; i++ {
		found = escape(s, i)
	}
	if !found {
		return view{}, false
	}
	return decode(s, func(s string, i int) (byte, int, bool) {
		if escape(s, i) {
			return unhex(s[i+1])<<4 | unhex(s[i+2]), 3, true
		}
		return s[i], 1, true
	}), true
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// minB64 is the shortest base64 run worth decoding (12 bytes of text).
const minB64 = 16

// b64Byte reports whether c is in either base64 alphabet.
func b64Byte(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64Spans finds base64 runs (standard or URL alphabet, padded or not)
// that decode to text holding a secret, or to a user:password pair, and
// returns each such run whole. Every byte is decoded at most once.
func (p *Pipeline) base64Spans(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		if !b64Byte(s[i]) || (i > 0 && b64Byte(s[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(s) && b64Byte(s[j]) {
			j++
		}
		e := j
		for e < len(s) && e-j < 2 && s[e] == '=' {
			e++
		}
		if j-i >= minB64 {
			if txt, ok := decodeB64(s[i:j]); ok && (len(p.detect(txt)) > 0 || userPass(txt)) {
				out = append(out, span{i, e})
			}
		}
		i = max(e, i+1)
	}
	return out
}

// decodeB64 decodes a run in either alphabet and reports whether it is
// text: valid UTF-8 with at most one byte in twenty a control other than
// tab, CR or LF.
func decodeB64(run string) (string, bool) {
	enc := base64.RawStdEncoding
	if strings.ContainsAny(run, "-_") {
		if strings.ContainsAny(run, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	if len(run)%4 == 1 {
		return "", false
	}
	b, err := enc.DecodeString(run)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	bad := 0
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			bad++
		}
	}
	return string(b), bad*20 <= len(b)
}

// userPass reports whether decoded text is one user:password pair, the
// payload of HTTP basic auth and of a registry's "auth" entry.
func userPass(t string) bool {
	u, pw, ok := strings.Cut(t, ":")
	if !ok || u == "" || len(pw) < 4 || len(u) > 128 || len(pw) > 256 {
		return false
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; !keyByte(c) && c != '@' && c != '+' && c != '\\' {
			return false
		}
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] == 0x7f {
			return false
		}
	}
	return !strings.Contains(pw, ":") && !strings.HasPrefix(pw, "//") && !nodeID(u, pw)
}

// nodeID reports whether a decoded "user:password" pair is a GitHub legacy
// node id ("04:User583231", "010:Repository1296269"): a length prefix and
// a type name followed by its number.
func nodeID(u, pw string) bool {
	if !isDigits(u) || len(u) > 3 || len(pw) < 2 || pw[0] < 'A' || pw[0] > 'Z' {
		return false
	}
	i := 1
	for i < len(pw) && isAlpha(pw[i]) {
		i++
	}
	return i < len(pw) && isDigits(pw[i:])
}
