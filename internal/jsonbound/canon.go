package jsonbound

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDigestDepth is the deepest nesting digested as canonical JSON; it is
// encoding/json's limit, so a value the standard decoder refuses is
// digested the way an invalid one is (as a JSON string of its bytes), as
// redact.Digest over a decoded value always did.
const MaxDigestDepth = 10000

// maxUnsortedMembers bounds the object members one digest may reorder (16
// bytes each). Past it the digest is unknown ("") rather than wrong.
const maxUnsortedMembers = 1 << 21

// Digest returns the AEP-0003 §9.3 digest of the first JSON value in raw:
// SHA-256 over its canonical JSON (object keys sorted, duplicate keys
// keeping the last value, compact, strings re-escaped as encoding/json
// writes them without HTML escaping, numbers as spelled), first 16 bytes as
// lower-case hex. It equals redact.Digest of the value decoded with
// json.Decoder and UseNumber, without decoding it: time linear in raw,
// memory for the members of objects whose keys are out of order only.
//
// Input that is not JSON, or nested deeper than MaxDigestDepth, is digested
// as the JSON string of its bytes. A value holding a placeholder Bound left
// is digested as the original was (the placeholder carries it); "" means
// the digest is unknown (the original was cut short by a truncated input).
func Digest(raw []byte) string {
	if d, ok := placeholderDigest(raw); ok {
		return d
	}
	return digestOriginal(raw)
}

// DigestString is the digest of s as a JSON string value.
func DigestString(s []byte) string {
	h := newHashBuf()
	h.quoted(s, false)
	return h.sum()
}

type member struct{ ks, ke, vs, ve int }

type sortedObject struct {
	end     int
	members []member
}

type budgetError struct{}

func (budgetError) Error() string { return "JSON object members beyond the digest budget" }

var errBudget error = budgetError{}

// canonical writes the canonical JSON of raw's first value to h.
func canonical(h *hashBuf, raw []byte) error {
	var idx map[int]*sortedObject
	if i := skipSpace(raw, 0); i < len(raw) && (raw[i] == '{' || raw[i] == '[') {
		var err error
		if idx, err = unsortedObjects(raw); err != nil {
			return err
		}
	}
	return emit(h, raw, idx)
}

// objFrame follows one open object while indexing.
type objFrame struct {
	start   int
	sorted  bool
	first   int    // index of its first member in the scratch list
	prevKey []byte // decoded key of the previous member
}

// unsortedObjects validates raw's first value and indexes the objects whose
// keys are not strictly ascending (after decoding): only those need their
// members reordered, by start offset.
func unsortedObjects(raw []byte) (map[int]*sortedObject, error) {
	t := NewTokenizer(raw)
	t.MaxDepth = MaxDigestDepth
	var (
		frames  []objFrame
		scratch []member
		idx     map[int]*sortedObject
		kept    int
		pending bool // a key was read; the next token starts its value
	)
	valueEnd := func(end int) {
		if t.InObject() && len(scratch) > 0 {
			scratch[len(scratch)-1].ve = end
		}
	}
	for {
		k, s, e := t.Next()
		if pending && k != End {
			scratch[len(scratch)-1].vs = s
			pending = false
		}
		switch k {
		case End:
			if t.err != nil {
				return nil, t.err
			}
			return idx, nil
		case ObjectStart:
			frames = append(frames, objFrame{start: s, sorted: true, first: len(scratch)})
		case ObjectEnd:
			f := &frames[len(frames)-1]
			if !f.sorted {
				kept += len(scratch) - f.first
				if kept > maxUnsortedMembers {
					return nil, errBudget
				}
				if idx == nil {
					idx = map[int]*sortedObject{}
				}
				idx[f.start] = &sortedObject{end: e, members: slices.Clone(scratch[f.first:])}
			}
			scratch = scratch[:f.first]
			frames = frames[:len(frames)-1]
			valueEnd(e)
		case ArrayEnd, String, Number, Literal:
			valueEnd(e)
		case Key:
			f := &frames[len(frames)-1]
			key := keyText(raw[s:e], t.Esc, t.ASCII)
			if len(scratch) > f.first && bytes.Compare(f.prevKey, key) >= 0 {
				f.sorted = false
			}
			f.prevKey = key
			scratch = append(scratch, member{ks: s, ke: e})
			pending = true
		}
	}
}

// keyText is a key token's decoded text: its bytes between the quotes when
// decoding would not change them, a decoded copy otherwise.
func keyText(tok []byte, esc, ascii bool) []byte {
	in := tok[1 : len(tok)-1]
	if !esc && (ascii || utf8.Valid(in)) {
		return in
	}
	return decodeString(nil, in)
}

// cursor is one level of the emitter: a tokenizer over a value, emitting
// in document order, or an object whose members go out in key order.
type cursor struct {
	tok   *Tokenizer
	base  int // tok's offset in raw
	comma bool
	obj   *sortedObject
	order []member
	next  int
}

func emit(h *hashBuf, raw []byte, idx map[int]*sortedObject) error {
	stack := []cursor{{tok: NewTokenizer(raw)}}
	for len(stack) > 0 {
		c := &stack[len(stack)-1]
		if c.obj != nil {
			if c.next == len(c.order) {
				h.byte('}')
				stack = stack[:len(stack)-1]
				continue
			}
			m := c.order[c.next]
			if c.next > 0 {
				h.byte(',')
			}
			c.next++
			h.jsonString(raw[m.ks:m.ke])
			h.byte(':')
			stack = append(stack, cursor{tok: NewTokenizer(raw[m.vs:m.ve]), base: m.vs})
			continue
		}
		k, s, e := c.tok.Next()
		if k == End {
			if err := c.tok.err; err != nil {
				return err // only a scalar document can fail here: containers were validated
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if c.comma && k != ObjectEnd && k != ArrayEnd {
			h.byte(',')
		}
		tok := c.tok.b[s:e]
		switch k {
		case ObjectStart:
			if o := idx[c.base+s]; o != nil {
				h.byte('{')
				c.tok.Skip(o.end - c.base)
				c.comma = true
				stack = append(stack, cursor{obj: o, order: keyOrder(raw, o.members)})
				continue
			}
			h.byte('{')
			c.comma = false
		case ArrayStart:
			h.byte('[')
			c.comma = false
		case ObjectEnd, ArrayEnd:
			h.byte(tok[0])
			c.comma = true
		case Key:
			h.jsonStringTok(tok, c.tok.Esc, c.tok.ASCII)
			h.byte(':')
			c.comma = false
		case String:
			h.jsonStringTok(tok, c.tok.Esc, c.tok.ASCII)
			c.comma = true
		default:
			h.write(tok)
			c.comma = true
		}
	}
	return nil
}

// keyOrder sorts an object's members by decoded key, keeping only the last
// of equal keys (as decoding into a map does).
func keyOrder(raw []byte, ms []member) []member {
	type keyed struct {
		key []byte
		m   member
	}
	ks := make([]keyed, len(ms))
	for i, m := range ms {
		tok := raw[m.ks:m.ke]
		_, esc, ascii, _ := stringEnd(tok, 0)
		ks[i] = keyed{keyText(tok, esc, ascii), m}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return bytes.Compare(a.key, b.key) })
	out := make([]member, 0, len(ks))
	for i, k := range ks {
		if i+1 < len(ks) && bytes.Equal(k.key, ks[i+1].key) {
			continue
		}
		out = append(out, k.m)
	}
	return out
}

// hashBuf feeds SHA-256 through a small buffer.
type hashBuf struct {
	h   hash.Hash
	buf []byte
}

func newHashBuf() *hashBuf { return &hashBuf{h: sha256.New(), buf: make([]byte, 0, 4096)} }

func (w *hashBuf) reset() { w.h.Reset(); w.buf = w.buf[:0] }

func (w *hashBuf) flush() {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
}

func (w *hashBuf) byte(c byte) {
	if len(w.buf) == cap(w.buf) {
		w.flush()
	}
	w.buf = append(w.buf, c)
}

func (w *hashBuf) write(p []byte) {
	if len(w.buf)+len(p) > cap(w.buf) {
		w.flush()
		if len(p) > cap(w.buf) {
			w.h.Write(p)
			return
		}
	}
	w.buf = append(w.buf, p...)
}

func (w *hashBuf) writeString(s string) {
	for i := 0; i < len(s); i++ {
		w.byte(s[i])
	}
}

func (w *hashBuf) sum() string {
	w.flush()
	var out [sha256.Size]byte
	return hex.EncodeToString(w.h.Sum(out[:0])[:16])
}

// jsonString writes the canonical form of a JSON string token.
func (w *hashBuf) jsonString(tok []byte) {
	_, esc, ascii, _ := stringEnd(tok, 0)
	w.jsonStringTok(tok, esc, ascii)
}

var (
	lineSep = []byte("\u2028")
	paraSep = []byte("\u2029")
)

// jsonStringTok writes the canonical form of a valid JSON string token:
// the token itself when decoding and re-encoding would not change it.
func (w *hashBuf) jsonStringTok(tok []byte, esc, ascii bool) {
	in := tok[1 : len(tok)-1]
	if !esc && (ascii || utf8.Valid(in) && !bytes.Contains(in, lineSep) && !bytes.Contains(in, paraSep)) {
		w.write(tok)
		return
	}
	w.quoted(in, true)
}

const hexDigits = "0123456789abcdef"

// quoted writes s as encoding/json writes a string without HTML escaping.
// With decode, s is the content of a valid JSON string token: escapes are
// decoded first and invalid UTF-8 becomes U+FFFD, as json.Unmarshal does.
// Without, s is arbitrary bytes taken as a Go string (invalid UTF-8 is
// written as the escape \ufffd).
func (w *hashBuf) quoted(s []byte, decode bool) {
	w.byte('"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) {
			if x := binary.LittleEndian.Uint64(s[i:]); stopIn(x) || x&highBits != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			w.write(s[start:i])
			if c == '\\' && decode {
				r, n := decodeEscape(s[i:])
				w.rune(r)
				i += n
			} else {
				w.escapeASCII(c)
				i++
			}
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			w.write(s[start:i])
			if decode {
				w.writeString("\uFFFD")
			} else {
				w.writeString(`\ufffd`)
			}
		case r == '\u2028' || r == '\u2029':
			w.write(s[start:i])
			w.writeString(`\u202`)
			w.byte(hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	w.write(s[start:])
	w.byte('"')
}

// rune writes one decoded rune as encoding/json would.
func (w *hashBuf) rune(r rune) {
	switch {
	case r < utf8.RuneSelf:
		if r >= 0x20 && r != '"' && r != '\\' {
			w.byte(byte(r))
		} else {
			w.escapeASCII(byte(r))
		}
	case r == '\u2028' || r == '\u2029':
		w.writeString(`\u202`)
		w.byte(hexDigits[r&0xF])
	default:
		var b [utf8.UTFMax]byte
		w.write(b[:utf8.EncodeRune(b[:], r)])
	}
}

func (w *hashBuf) escapeASCII(c byte) {
	switch c {
	case '\\', '"':
		w.byte('\\')
		w.byte(c)
	case '\b':
		w.writeString(`\b`)
	case '\f':
		w.writeString(`\f`)
	case '\n':
		w.writeString(`\n`)
	case '\r':
		w.writeString(`\r`)
	case '\t':
		w.writeString(`\t`)
	default:
		w.writeString(`\u00`)
		w.byte(hexDigits[c>>4])
		w.byte(hexDigits[c&0xF])
	}
}

// decodeEscape decodes the escape at the start of s (valid JSON), returning
// the rune and the bytes consumed; a surrogate that does not pair decodes as
// U+FFFD, as json.Unmarshal does.
func decodeEscape(s []byte) (rune, int) {
	switch s[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := getu4(s)
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if d := utf16.DecodeRune(r, getu4(s[6:])); d != unicode.ReplacementChar {
					return d, 12
				}
			}
			return unicode.ReplacementChar, 6
		}
		return r, 6
	}
	return rune(s[1]), 2 // " \ /
}

func getu4(s []byte) rune {
	var r rune
	for _, c := range s[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r*16 + rune(c)
	}
	return r
}

// decodeString appends the decoded content of a valid JSON string (without
// its quotes) to dst.
func decodeString(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			r, n := decodeEscape(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r) // invalid bytes become U+FFFD
			i += size
		}
	}
	return dst
}
