package jsonbound

import (
	"encoding/binary"
	"errors"
)

// Kind is the kind of one token.
type Kind uint8

// The token kinds. A container is reported when it opens and when it
// closes; an object member's key is its own token before the value.
const (
	End Kind = iota // the document's value is complete, or an error stopped the scan
	ObjectStart
	ObjectEnd
	ArrayStart
	ArrayEnd
	Key
	String
	Number
	Literal // true, false, null
)

// Errors a Tokenizer stops on.
var (
	// ErrSyntax is input that is not JSON.
	ErrSyntax = errors.New("invalid JSON")
	// ErrTruncated is input that ends inside the document.
	ErrTruncated = errors.New("JSON ends early")
	// ErrTooDeep is nesting beyond the tokenizer's MaxDepth.
	ErrTooDeep = errors.New("JSON nested too deep")
)

type state uint8

const (
	stValue      state = iota // a value must follow
	stValueOrEnd              // just after '[': a value or ']'
	stKeyOrEnd                // just after '{': a key or '}'
	stKey                     // after ',' in an object: a key
	stCommaOrEnd              // after a member or element
	stDone                    // the document's value is complete
)

// Tokenizer reads one JSON value token by token, validating it, in time
// linear in its length and without recursion: memory grows by one byte per
// level of nesting, so any depth is read without exhausting the stack.
// Only the first value is read; what follows it is not looked at.
type Tokenizer struct {
	b     []byte
	i     int
	stack []byte // '{' or '[' per open container
	state state
	err   error
	// MaxDepth, when positive, bounds the nesting (ErrTooDeep beyond it).
	MaxDepth int
	// Esc and ASCII describe the last String or Key token: whether it holds
	// an escape, and whether all its bytes are ASCII.
	Esc, ASCII bool
}

// NewTokenizer returns a tokenizer over b.
func NewTokenizer(b []byte) *Tokenizer { return &Tokenizer{b: b} }

// Err is the error that ended the scan, nil when the value was complete.
func (t *Tokenizer) Err() error { return t.err }

// Depth is the number of containers open after the last token.
func (t *Tokenizer) Depth() int { return len(t.stack) }

// InObject reports whether the innermost open container is an object.
func (t *Tokenizer) InObject() bool { return len(t.stack) > 0 && t.stack[len(t.stack)-1] == '{' }

// Pos is the offset just after the last token.
func (t *Tokenizer) Pos() int { return t.i }

// Skip ends the container the last token opened at end, the offset just
// past its closing bracket, without reading what is inside.
func (t *Tokenizer) Skip(end int) {
	t.i = end
	t.stack = t.stack[:len(t.stack)-1]
	t.afterValue()
}

func (t *Tokenizer) fail(err error) (Kind, int, int) {
	if t.err == nil {
		t.err = err
	}
	t.state = stDone
	return End, t.i, t.i
}

func (t *Tokenizer) afterValue() {
	if len(t.stack) == 0 {
		t.state = stDone
	} else {
		t.state = stCommaOrEnd
	}
}

func (t *Tokenizer) push(c byte) bool {
	if t.MaxDepth > 0 && len(t.stack) >= t.MaxDepth {
		return false
	}
	t.stack = append(t.stack, c)
	return true
}

// Next returns the next token and its span [start, end) in the input. End
// means the value is complete (Err nil) or the scan stopped (Err set).
func (t *Tokenizer) Next() (k Kind, start, end int) {
	b := t.b
	for {
		if t.state == stDone {
			return End, t.i, t.i
		}
		i := skipSpace(b, t.i)
		t.i = i
		if i >= len(b) {
			return t.fail(ErrTruncated)
		}
		c := b[i]
		switch t.state {
		case stCommaOrEnd:
			top := t.stack[len(t.stack)-1]
			switch {
			case c == ',':
				t.i++
				if top == '{' {
					t.state = stKey
				} else {
					t.state = stValue
				}
				continue
			case c == '}' && top == '{':
				t.i++
				t.stack = t.stack[:len(t.stack)-1]
				t.afterValue()
				return ObjectEnd, i, i + 1
			case c == ']' && top == '[':
				t.i++
				t.stack = t.stack[:len(t.stack)-1]
				t.afterValue()
				return ArrayEnd, i, i + 1
			}
			return t.fail(ErrSyntax)
		case stKeyOrEnd, stKey:
			if c == '}' && t.state == stKeyOrEnd {
				t.i++
				t.stack = t.stack[:len(t.stack)-1]
				t.afterValue()
				return ObjectEnd, i, i + 1
			}
			if c != '"' {
				return t.fail(ErrSyntax)
			}
			e, err := t.str(i)
			if err != nil {
				return t.fail(err)
			}
			j := skipSpace(b, e)
			if j >= len(b) {
				t.i = j
				return t.fail(ErrTruncated)
			}
			if b[j] != ':' {
				t.i = j
				return t.fail(ErrSyntax)
			}
			t.i, t.state = j+1, stValue
			return Key, i, e
		}
		// stValue, stValueOrEnd
		switch {
		case c == ']' && t.state == stValueOrEnd:
			t.i++
			t.stack = t.stack[:len(t.stack)-1]
			t.afterValue()
			return ArrayEnd, i, i + 1
		case c == '{':
			if !t.push('{') {
				return t.fail(ErrTooDeep)
			}
			t.i, t.state = i+1, stKeyOrEnd
			return ObjectStart, i, i + 1
		case c == '[':
			if !t.push('[') {
				return t.fail(ErrTooDeep)
			}
			t.i, t.state = i+1, stValueOrEnd
			return ArrayStart, i, i + 1
		case c == '"':
			e, err := t.str(i)
			if err != nil {
				return t.fail(err)
			}
			t.i = e
			t.afterValue()
			return String, i, e
		case c == '-' || c >= '0' && c <= '9':
			e, err := numberEnd(b, i)
			return t.scalar(Number, i, e, err)
		case c == 't' || c == 'f' || c == 'n':
			e, err := literalEnd(b, i)
			return t.scalar(Literal, i, e, err)
		}
		return t.fail(ErrSyntax)
	}
}

// scalar ends a number or literal token scanned to e (or failing there).
func (t *Tokenizer) scalar(k Kind, start, e int, err error) (Kind, int, int) {
	t.i = e
	if err != nil {
		return t.fail(err)
	}
	t.afterValue()
	return k, start, e
}

// str scans the string opening at b[i] and returns the offset after its
// closing quote, recording Esc and ASCII.
func (t *Tokenizer) str(i int) (int, error) {
	e, esc, ascii, err := stringEnd(t.b, i)
	t.Esc, t.ASCII = esc, ascii
	if err != nil {
		t.i = e
	}
	return e, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// strStop marks the bytes that end a run of plain string content.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stringEnd scans the JSON string whose opening quote is b[i] and returns
// the offset just past its closing quote, whether it holds an escape and
// whether every byte is ASCII. Plain content is skipped eight bytes at a
// time.
func stringEnd(b []byte, i int) (end int, esc, ascii bool, err error) {
	var acc uint64
	j := i + 1
	for {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			if stopIn(x) {
				break
			}
			acc |= x
			j += 8
		}
		for j < len(b) && !strStop[b[j]] {
			acc |= uint64(b[j])
			j++
		}
		if j >= len(b) {
			return j, esc, acc&highBits == 0, ErrTruncated
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, acc&highBits == 0, nil
		case c == '\\':
			esc = true
			if j+1 >= len(b) {
				return j, esc, false, ErrTruncated
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for n := 2; n < 6; n++ {
					if j+n >= len(b) {
						return j, esc, false, ErrTruncated
					}
					if !isHex(b[j+n]) {
						return j, esc, false, ErrSyntax
					}
				}
				j += 6
			default:
				return j, esc, false, ErrSyntax
			}
		default: // a control character
			return j, esc, false, ErrSyntax
		}
	}
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// stopIn reports whether any of the eight bytes in x is a quote, a
// backslash or a control character (the classic "has zero byte" and "has
// byte less than" tricks; bytes of 0x80 and over never match).
func stopIn(x uint64) bool {
	return zeroIn(x^(lowBits*'"'))|zeroIn(x^(lowBits*'\\'))|(x-lowBits*0x20)&^x&highBits != 0
}

func zeroIn(v uint64) uint64 { return (v - lowBits) &^ v & highBits }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(b []byte, j int) int {
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	return j
}

// numberEnd scans the JSON number starting at b[i]. A number that runs to
// the end of the input is complete as far as the input goes.
func numberEnd(b []byte, i int) (int, error) {
	j := i
	if b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return j, ErrTruncated
	case b[j] == '0':
		j++
	case b[j] >= '1' && b[j] <= '9':
		j = digitsEnd(b, j+1)
	default:
		return j, ErrSyntax
	}
	var err error
	if j < len(b) && b[j] == '.' {
		if j, err = someDigits(b, j+1); err != nil {
			return j, err
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		return someDigits(b, j)
	}
	return j, nil
}

// someDigits requires a digit at b[j] and returns the offset past the run.
func someDigits(b []byte, j int) (int, error) {
	if j >= len(b) {
		return j, ErrTruncated
	}
	if !isDigit(b[j]) {
		return j, ErrSyntax
	}
	return digitsEnd(b, j), nil
}

// literalEnd scans true, false or null starting at b[i].
func literalEnd(b []byte, i int) (int, error) {
	var lit string
	switch b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	for n := 0; n < len(lit); n++ {
		if i+n >= len(b) {
			return i + n, ErrTruncated
		}
		if b[i+n] != lit[n] {
			return i + n, ErrSyntax
		}
	}
	return i + len(lit), nil
}

// Valid reports whether b is exactly one JSON value (surrounding white
// space allowed), checked in linear time at any depth.
func Valid(b []byte) bool {
	t := NewTokenizer(b)
	for {
		if k, _, _ := t.Next(); k == End {
			break
		}
	}
	return t.err == nil && skipSpace(b, t.i) == len(b)
}
