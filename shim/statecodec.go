package shim

import (
	"github.com/aep-hook/aep-hook/internal/jsonstr"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aep-hook/aep-hook/mapping"
)

// The session state file is read and rewritten by every hook firing;
// encoding/json's reflection (building its type caches, then decoding
// through them) cost a hook process more instructions than the rest of its
// state handling. These are the state's own codec: encodeState writes what
// json.Marshal writes (less HTML escaping, which decodes the same), and
// decodeState reads that form directly, declining (ok=false) anything
// else, which load then hands to encoding/json so that every odd or
// damaged file is judged exactly as before.

// encodeState is st as JSON.
func encodeState(st *SessionState) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"epoch":`...)
	b = strconv.AppendInt(b, st.Epoch, 10)
	b = append(b, `,"next":`...)
	b = strconv.AppendInt(b, st.Next, 10)
	b = append(b, `,"refs":`...)
	b = appendTableState(b, &st.Refs)
	b = append(b, `,"table":`...)
	b = appendTableState(b, &st.Table)
	if st.Log != 0 {
		b = append(b, `,"log":`...)
		b = strconv.AppendInt(b, st.Log, 10)
	}
	return append(b, '}')
}

// appendTableState appends s as json.Marshal does: members omitted when
// empty, map keys sorted.
func appendTableState(b []byte, s *mapping.State) []byte {
	b = append(b, '{')
	comma := false
	sep := func() {
		if comma {
			b = append(b, ',')
		}
		comma = true
	}
	if len(s.Entries) > 0 {
		sep()
		b = append(b, `"e":{`...)
		for i, k := range sortedKeys(s.Entries) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = jsonstr.Append(b, s.Entries[k])
		}
		b = append(b, '}')
	}
	if len(s.Touch) > 0 {
		sep()
		b = append(b, `"t":{`...)
		for i, k := range sortedKeys(s.Touch) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = strconv.AppendUint(b, s.Touch[k], 10)
		}
		b = append(b, '}')
	}
	if s.Clock != 0 {
		sep()
		b = append(b, `"c":`...)
		b = strconv.AppendUint(b, s.Clock, 10)
	}
	return append(b, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// decodeState reads the form encodeState (and json.Marshal) writes. ok is
// false for anything else: unknown or repeated members, nulls, numbers that
// are not plain integers in range, strings that need json's repairs.
func decodeState(b []byte) (st *SessionState, ok bool) {
	d := stateDecoder{b: b}
	st = &SessionState{}
	var seen [5]bool
	ok = d.object(func(key string) bool {
		switch key {
		case "epoch":
			return d.once(&seen[0]) && d.int(&st.Epoch)
		case "next":
			return d.once(&seen[1]) && d.int(&st.Next)
		case "log":
			return d.once(&seen[2]) && d.int(&st.Log)
		case "refs":
			return d.once(&seen[3]) && d.tableState(&st.Refs)
		case "table":
			return d.once(&seen[4]) && d.tableState(&st.Table)
		}
		return false
	})
	d.space()
	return st, ok && d.i == len(b)
}

type stateDecoder struct {
	b []byte
	i int
}

func (d *stateDecoder) once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

func (d *stateDecoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

func (d *stateDecoder) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads {"key": value, ...}, member calls reading each value.
func (d *stateDecoder) object(member func(key string) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		d.space()
		key, ok := d.string()
		if !ok || !d.byte(':') || !member(key) {
			return false
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

func (d *stateDecoder) tableState(s *mapping.State) bool {
	var seen [3]bool
	return d.object(func(key string) bool {
		switch key {
		case "e":
			if !d.once(&seen[0]) {
				return false
			}
			s.Entries = map[string]string{}
			return d.object(func(k string) bool {
				if _, dup := s.Entries[k]; dup {
					return false
				}
				d.space()
				v, ok := d.string()
				s.Entries[k] = v
				return ok
			})
		case "t":
			if !d.once(&seen[1]) {
				return false
			}
			s.Touch = map[string]uint64{}
			return d.object(func(k string) bool {
				if _, dup := s.Touch[k]; dup {
					return false
				}
				var n uint64
				ok := d.uint(&n)
				s.Touch[k] = n
				return ok
			})
		case "c":
			return d.once(&seen[2]) && d.uint(&s.Clock)
		}
		return false
	})
}

// digits returns the plain integer token at the cursor (an optional minus
// with neg, then digits without a leading zero), or false.
func (d *stateDecoder) digits(neg bool) (string, bool) {
	d.space()
	start := d.i
	if neg && d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	first := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - first
	if n == 0 || n > 1 && d.b[first] == '0' {
		return "", false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return "", false
	}
	return string(d.b[start:d.i]), true
}

func (d *stateDecoder) int(dst *int64) bool {
	s, ok := d.digits(true)
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*dst = v
	return err == nil
}

func (d *stateDecoder) uint(dst *uint64) bool {
	s, ok := d.digits(false)
	if !ok {
		return false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	*dst = v
	return err == nil
}

// string reads a JSON string at the cursor: its escapes resolved, false
// for a control character, invalid UTF-8 or a lone surrogate escape (json
// would repair those; load leaves them to it).
func (d *stateDecoder) string() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	d.i++
	start := d.i
	var out []byte // nil until an escape needs it
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if out != nil {
				return string(append(out, s...)), true
			}
			return string(s), true
		case c < 0x20:
			return "", false
		case c == '\\':
			out = append(out, d.b[start:d.i]...)
			if d.i+1 >= len(d.b) {
				return "", false
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					if d.i+1 >= len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
						return "", false
					}
					d.i += 2
					r2, ok := d.hex4()
					if !ok {
						return "", false
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return "", false
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", false
			}
			start = d.i
		case c < utf8.RuneSelf:
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			d.i += size
		}
	}
	return "", false
}

func (d *stateDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 16)
	d.i += 4
	return rune(v), err == nil
}
