package jsonbound

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"slices"
	"time"
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

// sortedObject is an object whose members are not in key order: its
// members in canonical order are unsorted.members[first : first+n].
type sortedObject struct {
	start, end int
	first, n   int
}

// unsorted indexes a value's out-of-order objects, by start offset: those
// holding containers with their members in canonical order, and the flat
// ones (only scalars inside: the common small record) by their start
// alone, since the emitter reorders those as it reads them.
type unsorted struct {
	objs    []sortedObject // ascending start
	members []member
	flat    []int // ascending start
}

// at returns the out-of-order object starting at offset start, if any.
func (u *unsorted) at(start int) *sortedObject {
	if u == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(u.objs, start, func(o sortedObject, s int) int { return o.start - s })
	if !ok {
		return nil
	}
	return &u.objs[i]
}

// flatAt reports whether a flat out-of-order object starts at offset
// start.
func (u *unsorted) flatAt(start int) bool {
	if u == nil {
		return false
	}
	_, ok := slices.BinarySearch(u.flat, start)
	return ok
}

type budgetError struct{}

func (budgetError) Error() string { return "JSON object members beyond the digest budget" }

var errBudget error = budgetError{}

// canonical writes the canonical JSON of raw's first value to h. A
// container already in canonical form (compact, its keys in order, its
// strings as encoding/json writes them: what a compact JSON encoder of
// sorted maps produces) is hashed as it is, in the one pass that validates
// it; any other is indexed, then written out in canonical order (two
// passes). c, when set, is the time allowed: past it the digest is given
// up (errLate).
func canonical(h *hashBuf, raw []byte, c *clock) error {
	var idx *unsorted
	if i := skipSpace(raw, 0); i < len(raw) && (raw[i] == '{' || raw[i] == '[') {
		var (
			verbatim []byte
			err      error
		)
		if idx, verbatim, err = unsortedObjects(raw, c); err != nil {
			return err
		}
		if verbatim != nil {
			// Each value inside is as canonical as the whole.
			h.write(verbatim)
			for i := range h.taps {
				h.taps[i].h.Write(raw[h.taps[i].vs:h.taps[i].ve])
				h.taps[i].seen = true
			}
			return nil
		}
	}
	return emit(h, raw, idx, c)
}

// errLate stops a digest that ran out of its time.
var errLate = errors.New("digest not done in time")

// clock tells a digest when its time is up, reading the time once every
// clockEvery tokens; a nil clock never is.
type clock struct {
	until time.Time
	every int // tokens between two readings; 0 means clockEvery
	n     int
	late  bool
}

const clockEvery = 4096

func (c *clock) up() bool {
	if c == nil {
		return false
	}
	if c.late {
		return true
	}
	every := c.every
	if every <= 0 {
		every = clockEvery
	}
	if c.n++; c.n%every == 0 && !time.Now().Before(c.until) {
		c.late = true
	}
	return c.late
}

// canonicalString reports whether a string token is written as it is
// (see jsonStringTok).
func canonicalString(tok []byte, esc, ascii bool) bool {
	in := tok[1 : len(tok)-1]
	return !esc && (ascii || utf8.Valid(in) && !bytes.Contains(in, lineSep) && !bytes.Contains(in, paraSep))
}

// objFrame follows one open object while indexing.
type objFrame struct {
	start   int
	sorted  bool
	flat    bool   // no container inside
	first   int    // index of its first member in the scratch list
	prevKey []byte // decoded key of the previous member
}

// unsortedObjects validates raw's first value and indexes the objects whose
// keys are not strictly ascending (after decoding): only those need their
// members reordered. When the value is already in canonical form it
// returns its bytes as verbatim instead.
func unsortedObjects(raw []byte, c *clock) (idx *unsorted, verbatim []byte, err error) {
	t := NewTokenizer(raw)
	t.MaxDepth = MaxDigestDepth
	var (
		frames  []objFrame
		scratch []member
		pending bool // a key was read; the next token starts its value
		canon   = true
		prevEnd = 0 // the end of the last token
	)
	valueEnd := func(end int) {
		if t.InObject() && len(scratch) > 0 {
			scratch[len(scratch)-1].ve = end
		}
	}
	for {
		k, s, e := t.Next()
		if c.up() {
			return nil, nil, errLate
		}
		if pending && k != End {
			scratch[len(scratch)-1].vs = s
			pending = false
		}
		if canon && k != End {
			// Compact: nothing between two tokens but the one separator.
			if gap := s - prevEnd; gap > 1 || gap == 1 && raw[prevEnd] != ',' && raw[prevEnd] != ':' {
				canon = false
			}
			prevEnd = e
		}
		switch k {
		case End:
			if t.err != nil {
				return nil, nil, t.err
			}
			if idx == nil {
				if canon {
					return nil, raw[:prevEnd], nil
				}
				return nil, nil, nil
			}
			// Objects were closed inner first; the emitter looks them up by
			// where they start.
			slices.SortFunc(idx.objs, func(a, b sortedObject) int { return a.start - b.start })
			return idx, nil, nil
		case ObjectStart:
			if len(frames) > 0 {
				frames[len(frames)-1].flat = false
			}
			frames = append(frames, objFrame{start: s, sorted: true, flat: true, first: len(scratch)})
		case ArrayStart:
			if len(frames) > 0 {
				frames[len(frames)-1].flat = false
			}
		case ObjectEnd:
			f := &frames[len(frames)-1]
			if !f.sorted && f.flat {
				// Flat objects close in the order they start (none holds
				// another).
				if idx == nil {
					idx = &unsorted{}
				}
				idx.flat = append(idx.flat, f.start)
			} else if !f.sorted {
				if idx == nil {
					idx = &unsorted{}
				}
				if len(idx.members)+len(scratch)-f.first > maxUnsortedMembers {
					return nil, nil, errBudget
				}
				first := len(idx.members)
				idx.members = append(idx.members, scratch[f.first:]...)
				n := keyOrder(raw, idx.members[first:])
				idx.members = idx.members[:first+n]
				idx.objs = append(idx.objs, sortedObject{start: f.start, end: e, first: first, n: n})
			}
			scratch = scratch[:f.first]
			frames = frames[:len(frames)-1]
			valueEnd(e)
		case String:
			canon = canon && canonicalString(raw[s:e], t.Esc, t.ASCII)
			valueEnd(e)
		case ArrayEnd, Number, Literal:
			valueEnd(e)
		case Key:
			canon = canon && canonicalString(raw[s:e], t.Esc, t.ASCII)
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
	tok   Tokenizer
	base  int // tok's offset in raw
	comma bool
	obj   *sortedObject
	next  int
}

func emit(h *hashBuf, raw []byte, idx *unsorted, clk *clock) error {
	stack := []cursor{{tok: Tokenizer{b: raw}}}
	var flat []member // the members of the flat object being reordered
	for len(stack) > 0 {
		if clk.up() {
			return errLate
		}
		c := &stack[len(stack)-1]
		if c.obj != nil {
			if c.next == c.obj.n {
				h.byte('}')
				h.valueEnd(c.obj.end)
				stack = stack[:len(stack)-1]
				continue
			}
			m := idx.members[c.obj.first+c.next]
			if c.next > 0 {
				h.byte(',')
			}
			c.next++
			h.jsonString(raw[m.ks:m.ke])
			h.byte(':')
			switch raw[m.vs] {
			case '{', '[':
				// Its tokens, the first at m.vs, run the taps.
				stack = append(stack, cursor{tok: Tokenizer{b: raw[m.vs:m.ve]}, base: m.vs})
				continue
			case '"':
				h.valueAt(m.vs)
				h.jsonString(raw[m.vs:m.ve])
			default: // a number or a literal, as spelled
				h.valueAt(m.vs)
				h.write(raw[m.vs:m.ve])
			}
			h.valueEnd(m.ve)
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
		if len(h.taps) > 0 && k != Key && k != ObjectEnd && k != ArrayEnd {
			h.valueAt(c.base + s)
		}
		switch k {
		case ObjectStart:
			if idx.flatAt(c.base + s) {
				flat = flatObject(h, raw, &c.tok, c.base, flat[:0])
				c.comma = true
				h.valueEnd(c.base + c.tok.Pos())
				continue
			}
			if o := idx.at(c.base + s); o != nil {
				h.byte('{')
				c.tok.Skip(o.end - c.base)
				c.comma = true
				stack = append(stack, cursor{obj: o})
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
		if len(h.taps) > 0 && k != Key && k != ObjectStart && k != ArrayStart {
			h.valueEnd(c.base + e)
		}
	}
	return nil
}

// flatObject writes the flat object tok has just opened with its members in
// key order, reading them from tok up to its end; ms is scratch space,
// returned for reuse. tok's offsets are base into raw.
func flatObject(h *hashBuf, raw []byte, tok *Tokenizer, base int, ms []member) []member {
	for {
		k, s, e := tok.Next()
		switch k {
		case Key:
			ms = append(ms, member{ks: base + s, ke: base + e})
		case ObjectEnd, End:
			n := keyOrder(raw, ms)
			h.byte('{')
			for i, m := range ms[:n] {
				if i > 0 {
					h.byte(',')
				}
				h.jsonString(raw[m.ks:m.ke])
				h.byte(':')
				h.valueAt(m.vs)
				if raw[m.vs] == '"' {
					h.jsonString(raw[m.vs:m.ve])
				} else {
					h.write(raw[m.vs:m.ve]) // a number or a literal, as spelled
				}
				h.valueEnd(m.ve)
			}
			h.byte('}')
			return ms
		default: // the member's value, a scalar
			ms[len(ms)-1].vs, ms[len(ms)-1].ve = base+s, base+e
		}
	}
}

// keyOrder sorts an object's members in place by decoded key, keeping only
// the last of equal keys (as decoding into a map does), and returns how
// many remain at the front of ms.
func keyOrder(raw []byte, ms []member) int {
	key := func(m member) []byte {
		tok := raw[m.ks:m.ke]
		_, esc, ascii, _ := stringEnd(tok, 0)
		return keyText(tok, esc, ascii)
	}
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(key(a), key(b)) })
	n := 0
	for i := range ms {
		if i+1 < len(ms) && bytes.Equal(key(ms[i]), key(ms[i+1])) {
			continue
		}
		ms[n] = ms[i]
		n++
	}
	return n
}

// hashBuf feeds SHA-256 through a small buffer, and the taps that are on:
// the digests of values inside the one being written, from the same bytes.
type hashBuf struct {
	h    hash.Hash
	buf  []byte
	taps []tap
}

// tap digests the canonical bytes of one value inside the value a hashBuf
// digests: [vs, ve) is where it sits in the raw input.
type tap struct {
	vs, ve   int
	h        hash.Hash
	on, seen bool // seen: its value was written (a duplicate key's is not)
}

func newHashBuf() *hashBuf { return &hashBuf{h: sha256.New(), buf: make([]byte, 0, 4096)} }

func (w *hashBuf) reset() {
	w.h.Reset()
	w.buf = w.buf[:0]
	for i := range w.taps {
		w.taps[i].h.Reset()
		w.taps[i].on = false
	}
}

func (w *hashBuf) flush() {
	w.h.Write(w.buf)
	for i := range w.taps {
		if w.taps[i].on {
			w.taps[i].h.Write(w.buf)
		}
	}
	w.buf = w.buf[:0]
}

// valueAt turns on the taps of the value starting at offset at, before
// its first byte is written.
func (w *hashBuf) valueAt(at int) {
	for i := range w.taps {
		if t := &w.taps[i]; t.vs == at && !t.on {
			w.flush()
			t.on, t.seen = true, true
		}
	}
}

// valueEnd turns off the taps of values ending at offset at, once their
// last byte is written.
func (w *hashBuf) valueEnd(at int) {
	for i := range w.taps {
		if t := &w.taps[i]; t.ve == at && t.on {
			w.flush()
			t.on = false
		}
	}
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
			for i := range w.taps {
				if w.taps[i].on {
					w.taps[i].h.Write(p)
				}
			}
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
	return sumOf(w.h)
}

func sumOf(h hash.Hash) string {
	var out [sha256.Size]byte
	return hex.EncodeToString(h.Sum(out[:0])[:16])
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
	if canonicalString(tok, esc, ascii) {
		w.write(tok)
		return
	}
	w.quoted(tok[1:len(tok)-1], true)
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
