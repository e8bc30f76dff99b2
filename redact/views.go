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

// b64Widths are the line widths base64 encoders wrap at (base64's 76,
// PEM's 64, uuencode-like 60): a run that fills one and goes on at the
// start of the next line is one run.
func b64Wrap(n int) bool { return n == 76 || n == 64 || n == 60 }

// base64Spans finds base64 runs (standard or URL alphabet, padded or not,
// also wrapped over lines at an encoder's width) that decode to text
// holding a secret, or to a user:password pair, and returns each such run
// whole. Every byte is decoded at most once.
func (p *Pipeline) base64Spans(s string, depth int) []span {
	var out []span
	var joined strings.Builder
	for i := 0; i < len(s); {
		if !b64Byte(s[i]) || (i > 0 && b64Byte(s[i-1])) {
			i++
			continue
		}
		st, j := i, i
		for j < len(s) && b64Byte(s[j]) {
			j++
		}
		e := j
		for e < len(s) && e-j < 2 && s[e] == '=' {
			e++
		}
		n := j - st
		joined.Reset()
		for e == j && b64Wrap(j-i) && j+1 < len(s) && s[j] == '\n' && b64Byte(s[j+1]) && joined.Len() < 1<<20 {
			joined.WriteString(s[i:j]) // a full line: the run goes on
			i = j + 1
			for j = i; j < len(s) && b64Byte(s[j]); j++ {
			}
			e = j
			for e < len(s) && e-j < 2 && s[e] == '=' {
				e++
			}
			n += j - i
		}
		run := s[i:j]
		if joined.Len() > 0 {
			joined.WriteString(run)
			run = joined.String()
		}
		if n >= minB64 {
			if len(run)%4 == 1 {
				run = run[:len(run)-1] // cut short (a clipped prompt)
			}
			if txt, ok := decodeB64(run); ok && p.decodedSecret(txt, depth) {
				out = append(out, span{st, e})
			}
		}
		i = max(e, i+1)
	}
	return out
}

// maxDecodeDepth bounds how many encodings deep a secret is looked for
// (base64 of base64, hex of base64): each level decodes every byte at most
// once, so the work stays linear.
const maxDecodeDepth = 3

// decodedSecret reports whether text decoded at depth holds a secret: the
// rules find one, it is a user:password pair, or it decodes again to one.
func (p *Pipeline) decodedSecret(txt string, depth int) bool {
	if len(p.detect(txt)) > 0 || userPass(txt) || len(p.dumpSpans(txt)) > 0 {
		return true
	}
	return depth+1 < maxDecodeDepth && (len(p.base64Spans(txt, depth+1)) > 0 || len(p.hexSpans(txt, depth+1)) > 0)
}

// minHex is the shortest hex run worth decoding (16 bytes of text).
const minHex = 32

// hexSpans finds hex-encoded text holding a secret: runs of hex digit
// pairs (xxd -p output, wrapped over lines, or \xHH escapes) that decode
// to text in which the rules find a secret. Each such run is returned
// whole.
func (p *Pipeline) hexSpans(s string, depth int) []span {
	var out []span
	var raw []byte
	for i := 0; i < len(s); {
		escaped := s[i] == '\\' && i+3 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') && isHex(s[i+2]) && isHex(s[i+3])
		if !escaped && (!isHex(s[i]) || i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_')) {
			i++
			continue
		}
		st := i
		raw = raw[:0]
		j := i
		for j < len(s) && len(raw) < 1<<20 {
			switch {
			case escaped && j+3 < len(s) && s[j] == '\\' && (s[j+1] == 'x' || s[j+1] == 'X') && isHex(s[j+2]) && isHex(s[j+3]):
				raw = append(raw, unhex(s[j+2])<<4|unhex(s[j+3]))
				j += 4
				continue
			case !escaped && j+1 < len(s) && isHex(s[j]) && isHex(s[j+1]):
				raw = append(raw, unhex(s[j])<<4|unhex(s[j+1]))
				j += 2
				continue
			case !escaped && j+1 < len(s) && s[j] == '\n' && isHex(s[j+1]) && j-st >= minHex && (j-lineStart(s, j))%2 == 0:
				j++ // xxd -p wraps its lines
				continue
			}
			break
		}
		end := j
		if !escaped && (end < len(s) && (isAlnum(s[end]) || s[end] == '_') || len(raw)*2 < minHex) || escaped && len(raw) < 6 {
			i = max(end, i+1)
			continue
		}
		if txt, ok := hexText(raw); ok && p.decodedSecret(txt, depth) {
			out = append(out, span{st, end})
		}
		i = max(end, i+1)
	}
	return out
}

// lineStart returns the start of the line holding j.
// Like lineEnd, it looks back at most maxLine bytes.
func lineStart(s string, j int) int {
	from := max(0, j-maxLine)
	return from + strings.LastIndexByte(s[from:j], '\n') + 1
}

// hexText reports whether decoded bytes are printable text.
func hexText(b []byte) (string, bool) {
	if !utf8.Valid(b) {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return "", false
		}
	}
	return string(b), true
}

// concatView joins string literals that code concatenates ("ghp_ab" +
// "cd", 'x' . 'y', "a" "b" across lines), so a token assembled from
// pieces is seen whole.
func concatView(s string) (view, bool) {
	if !strings.ContainsAny(s, `"'`) {
		return view{}, false
	}
	junction := func(s string, i int) int { // the length of a junction at i, or 0
		j := i
		if s[j] == '\\' {
			j++
		}
		if j >= len(s) || s[j] != '"' && s[j] != '\'' || i > 0 && s[i-1] == '\\' {
			return 0
		}
		q := s[j]
		k := j + 1
		gap := false
		for k < len(s) && isSpace(s[k]) {
			k, gap = k+1, true
		}
		for _, op := range [...]string{"||", "..", "+", ".", "&"} {
			if strings.HasPrefix(s[k:], op) {
				k, gap = k+len(op), true
				break
			}
		}
		for k < len(s) && isSpace(s[k]) {
			k, gap = k+1, true
		}
		if k < len(s) && s[k] == '\\' {
			k++
		}
		if !gap || k >= len(s) || s[k] != q || k == j+1 {
			return 0
		}
		return k + 1 - i
	}
	found := false
	for i := 0; i < len(s) && !found; i++ {
		if s[i] == '"' || s[i] == '\'' {
			found = junction(s, i) > 0 && i > 0 && tokenByte(s[i-1]) && i+junction(s, i) < len(s) && tokenByte(s[i+junction(s, i)])
		}
	}
	if !found {
		return view{}, false
	}
	return decode(s, func(s string, i int) (byte, int, bool) {
		if (s[i] == '"' || s[i] == '\'' || s[i] == '\\') && i > 0 && tokenByte(s[i-1]) {
			if n := junction(s, i); n > 0 && i+n < len(s) && tokenByte(s[i+n]) {
				return 0, n, false
			}
		}
		return s[i], 1, true
	}), true
}

// wrapWidth reports whether a line of n bytes is one a terminal or an
// encoder wraps at.
func wrapWidth(n int) bool { return n >= 60 && n <= 80 }

// extendWrapped extends each span that ends its line onto the next line
// when that line continues the token: a key wrapped at a fixed width (the
// line is full), or the second half of a key on a line of its own (it
// looks generated). It repeats for keys wrapped over several lines.
func extendWrapped(s string, spans []span) []span {
	n := len(spans)
	for k := 0; k < n; k++ {
		sp := spans[k]
		for hops := 0; hops < 64; hops++ {
			e := sp.end
			if e < len(s) && s[e] == '\r' {
				e++
			}
			if e >= len(s) || s[e] != '\n' || sp.end == sp.start {
				break
			}
			full := wrapWidth(sp.end - lineStart(s, sp.end))
			st := e + 1
			en := st
			for en < len(s) && tokenByte(s[en]) {
				en++
			}
			body := lineBody(s, st, lineEnd(s, st))
			if en == st || en < body && !(s[en] == '"' || s[en] == '\'' || s[en] == ';') {
				break
			}
			t := s[st:en]
			if terminatorWord(t) || strings.ContainsAny(strings.TrimRight(t, "="), "=") || !full && !(len(t) >= 8 && randomLike(t)) {
				break
			}
			spans = append(spans, span{st, en})
			sp = span{st, en}
			if !wrapWidth(en - st) {
				break
			}
		}
	}
	return spans
}

// terminatorWord reports whether a lone line is a heredoc terminator or a
// marker (EOF, END, SQL), not the rest of a key.
func terminatorWord(t string) bool {
	if len(t) > 12 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !(t[i] >= 'A' && t[i] <= 'Z' || t[i] == '_') {
			return false
		}
	}
	return true
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
	return !strings.Contains(pw, ":") && !strings.HasPrefix(pw, "//") && !nodeID(u, pw) && !isDigits(pw)
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

// dumpSpans finds hex dumps (xxd's and hexdump -C's "offset: hex groups
// ascii" lines) whose bytes, read across lines, hold a secret: a token
// split over the dump's lines is seen whole. Each such line's hex and text
// columns are returned.
func (p *Pipeline) dumpSpans(s string) []span {
	var out []span
	var raw []byte
	var lines []span
	flush := func() {
		if len(lines) > 0 && len(raw) >= 8 {
			if txt, ok := hexText(raw); ok && (len(p.detect(txt)) > 0 || userPass(txt)) {
				out = append(out, lines...)
			}
		}
		raw, lines = raw[:0], lines[:0]
	}
	for ls := 0; ls < len(s); {
		le := lineEnd(s, ls)
		body, ok := dumpLine(s, ls, le, &raw)
		if !ok && len(lines) == 0 {
			// The first line may follow other words ("$ xxd f" output
			// quoted after a card's "Permission requested: ... — ").
			if k := strings.Index(s[ls:le], " 0000"); k >= 0 {
				body, ok = dumpLine(s, ls+k+1, le, &raw)
			}
		}
		if ok {
			lines = append(lines, body)
		} else {
			flush()
		}
		ls = le + 1
		if len(raw) > 1<<20 {
			flush()
		}
	}
	flush()
	return out
}

// dumpLine reads one hex dump line s[ls:le]: an offset of 4 to 16 hex
// digits (with or without a colon), at least two groups of hex digit pairs
// separated by blanks, then the text column. It appends the bytes to raw
// and returns the line after its offset.
func dumpLine(s string, ls, le int, raw *[]byte) (span, bool) {
	j := ls
	for j < le && isHex(s[j]) {
		j++
	}
	if j-ls < 4 || j-ls > 16 {
		return span{}, false
	}
	if j < le && s[j] == ':' {
		j++
	}
	body := j
	n0 := len(*raw)
	groups := 0
	for {
		k := j
		for k < le && s[k] == ' ' {
			k++
		}
		if k-j < 1 || k-j > 2 || k >= le {
			break
		}
		g := k
		for g+1 < le && isHex(s[g]) && isHex(s[g+1]) && g-k < 8 {
			g += 2
		}
		if g == k || g < le && s[g] != ' ' {
			break
		}
		for h := k; h < g; h += 2 {
			*raw = append(*raw, unhex(s[h])<<4|unhex(s[h+1]))
		}
		groups++
		j = g
	}
	if groups < 2 {
		*raw = (*raw)[:n0]
		return span{}, false
	}
	return span{body, lineBody(s, body, le)}, true
}
