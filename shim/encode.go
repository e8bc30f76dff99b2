package shim

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/aep-hook/aep-hook/internal/jsonstr"
	"github.com/aep-hook/aep-hook/redact"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The event encoder: the bytes encoding/json produces for an Event (compact,
// no HTML escaping, map keys sorted), written without reflection for the
// value kinds payloads hold. Anything else is handed to encoding/json.
// FuzzEncodeMatchesJSON holds the two to the same bytes.

// errNonFinite is encoding/json's refusal of NaN and infinities.
var errNonFinite = errors.New("json: unsupported value: NaN or infinite float")

// appendEvent appends e's JSON line (with its newline) to b.
func appendEvent(b []byte, e *Event) ([]byte, error) {
	return appendEventShared(b, e, nil)
}

// shared remembers the encoding of the envelope attributes a batch's
// events have in common: each line copies them instead of escaping the
// same strings again.
type shared struct {
	parts [3]sharedPart // partType, partOrigin, partTail
}

// The runs of attributes shared keeps.
const (
	partType   = iota // type
	partOrigin        // source, agent, session
	partTail          // severity, capture, tenant
)

// part is the shared part i, nil when sh is.
func (sh *shared) part(i int) *sharedPart {
	if sh == nil {
		return nil
	}
	return &sh.parts[i]
}

// sharedPart is one run of attributes, the strings it was encoded from
// and its bytes.
type sharedPart struct {
	of  [3]string
	enc []byte
}

// append appends the part for of, encoding it with enc when of differs
// from the part's last (always, for a nil part).
func (p *sharedPart) append(b []byte, of [3]string, enc func([]byte, [3]string) []byte) []byte {
	if p == nil {
		return enc(b, of)
	}
	if p.enc == nil || p.of != of {
		p.of, p.enc = of, enc(p.enc[:0], of)
	}
	return append(b, p.enc...)
}

func encodeType(b []byte, of [3]string) []byte { return appendField(b, "type", of[0], false) }

func encodeOrigin(b []byte, of [3]string) []byte {
	b = appendField(b, "source", of[0], false)
	b = appendField(b, "agent", of[1], false)
	return appendField(b, "session", of[2], true)
}

func encodeTail(b []byte, of [3]string) []byte {
	b = appendField(b, "severity", of[0], true)
	b = appendField(b, "capture", of[1], true)
	return appendField(b, "tenant", of[2], true)
}

// appendEventShared is appendEvent taking the attributes e shares with
// the batch's other events from sh (nil: encoding each).
func appendEventShared(b []byte, e *Event, sh *shared) ([]byte, error) {
	b = append(b, `{"aep":`...)
	b = jsonstr.Append(b, e.AEP)
	b = appendField(b, "id", e.ID, false)
	b = sh.part(partType).append(b, [3]string{e.Type}, encodeType)
	b = appendField(b, "subject", e.Subject, true)
	b = appendField(b, "time", e.Time, false)
	b = sh.part(partOrigin).append(b, [3]string{e.Source, e.Agent, e.Session}, encodeOrigin)
	b = appendField(b, "run", e.Run, true)
	b = appendField(b, "step", e.Step, true)
	if e.Seq != nil {
		b = strconv.AppendInt(append(b, `,"seq":`...), *e.Seq, 10)
	}
	if e.Epoch != nil {
		b = strconv.AppendInt(append(b, `,"epoch":`...), *e.Epoch, 10)
	}
	b = appendField(b, "cause", e.Cause, true)
	b = appendField(b, "traceparent", e.Traceparent, true)
	b = sh.part(partTail).append(b, [3]string{e.Severity, e.Capture, e.Tenant}, encodeTail)
	switch {
	case e.Data != nil:
		var err error
		if b, err = appendJSON(append(b, `,"data":`...), e.Data); err != nil {
			return nil, err
		}
	case e.fields != nil:
		var err error
		if b, err = appendFields(append(b, `,"data":`...), e.fields); err != nil {
			return nil, err
		}
	}
	return append(b, '}', '\n'), nil
}

// appendField appends ,"name":"value", or nothing when omitEmpty and value
// is empty.
func appendField(b []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(append(append(b, ',', '"'), name...), '"', ':')
	return jsonstr.Append(b, value)
}

// appendJSON appends v's JSON encoding.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonstr.Append(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		return appendFloat(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		// The members gathered once, sorted by key: no lookup per key.
		var small [16]member // most maps: no allocation for the members
		ms := small[:0]
		for k, v := range x {
			ms = append(ms, member{k, v})
		}
		return appendMembers(b, ms)
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// appendFields appends the object of fs (unique keys, in any order): the
// bytes appendJSON writes for their map. The members are sorted as
// indices on the stack, so no entry moves in the heap; a payload of more
// members than that holds (none a table makes) is sorted as a map's.
func appendFields(b []byte, fs []redact.Field) ([]byte, error) {
	var order [64]uint8
	if len(fs) > len(order) {
		ms := make([]member, len(fs))
		for i := range fs {
			ms[i] = member{fs[i].Key, fs[i].Value}
		}
		return appendMembers(b, ms)
	}
	for i := range fs {
		// An insertion sort: a payload's dozen members come in any order.
		j := i
		for ; j > 0 && fs[i].Key < fs[order[j-1]].Key; j-- {
			order[j] = order[j-1]
		}
		order[j] = uint8(i)
	}
	b = append(b, '{')
	for j := range fs {
		if j > 0 {
			b = append(b, ',')
		}
		f := &fs[order[j]]
		b = append(jsonstr.Append(b, f.Key), ':')
		var err error
		if b, err = appendJSON(b, f.Value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendMembers appends the object of ms, sorting them by key first.
func appendMembers(b []byte, ms []member) ([]byte, error) {
	sortMembers(ms)
	b = append(b, '{')
	for i := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonstr.Append(b, ms[i].k), ':')
		var err error
		if b, err = appendJSON(b, ms[i].v); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// member is one entry of a map being encoded.
type member struct {
	k string
	v any
}

// sortMembers sorts ms by key (keys are unique): an insertion sort for the
// handful of members a payload object has, the library's sort beyond.
func sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].k < ms[j-1].k; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// appendFloat formats f as encoding/json does (ES6 number formatting).
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, errNonFinite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
