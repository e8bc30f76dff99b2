package otlp

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/mapping"
)

// This file turns pdata into the decoded records the OTLP tables read
// (mapping.OTelRecord in Facts.Record): no JSON is built on the way. It
// also keys each record for the dedupe window and decodes the map verb's
// JSON lines into the same moments.

// errNonFinite marks a double attribute that no JSON can carry (NaN, ±Inf).
var errNonFinite = fmt.Errorf("%w: a NaN or infinite double", mapping.ErrOTelRecord)

// flatRecord is one LogRecord decoded for its table, or why it cannot be.
type flatRecord struct {
	rec *mapping.OTelRecord
	key recordKey
	err error // non-nil: unreadable; rejected, never retried
}

// keyer digests records: a canonical encoding of resource, scope and
// record, under SHA-256, so the key is the same in every process (a record
// an exporter sends again after the sidecar restarted keys as before, and
// its events get the same ids, shim.Emitter.StableIDs) and cannot be made
// to collide. One keyer serves one goroutine.
type keyer struct {
	buf   []byte
	ent   []byte // scratch: one map's encoded entries, back to back
	spans []span // where each entry of ent lies
	// sorted is scratch for a record's spans put in a known order.
	sorted []span
	// The digest state after the whole blocks of the scope's encoding,
	// which starts every record's (setPrefix): each record's digest
	// resumes from it instead of hashing the resource again. The key is
	// the same SHA-256 of the same bytes. The state is taken while the
	// scope's first record is hashed, so a scope of one record costs no
	// more than before.
	h      hash.Hash
	mid    []byte // h's state after the prefix, marshaled, when midOK
	midOK  bool
	midLen int // how many bytes of the prefix the state covers; 0: none
	sum    []byte
}

// setPrefix says that the next records' encodings (digest) start with
// prefix.
func (k *keyer) setPrefix(prefix []byte) {
	k.midLen, k.midOK = len(prefix)/sha256.BlockSize*sha256.BlockSize, false
}

// digest is the key of b, a record's encoding starting with the prefix
// of the last setPrefix: the first 16 bytes of its SHA-256.
func (k *keyer) digest(b []byte) recordKey {
	if k.midLen == 0 || len(b) < k.midLen {
		sum := sha256.Sum256(b)
		return recordKey(sum[:16])
	}
	if k.h == nil {
		k.h = sha256.New()
	}
	if !k.midOK || k.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(k.mid) != nil {
		k.h.Reset()
		k.h.Write(b[:k.midLen])
		var err error
		k.mid, err = k.h.(encoding.BinaryAppender).AppendBinary(k.mid[:0])
		k.midOK = err == nil
	}
	k.h.Write(b[k.midLen:])
	k.sum = k.h.Sum(k.sum[:0])
	return recordKey(k.sum[:16])
}

// span is where one map entry's encoding lies in the keyer's scratch, key
// where the encoding of its key ends, with its first 8 bytes (big-endian,
// zero-padded) to order most entries without comparing the bytes.
type span struct {
	start, end, key int
	head            uint64
}

// newSpan is the span of ent[start:], its key's encoding ending at key.
func newSpan(ent []byte, start, key int) span {
	var h [8]byte
	copy(h[:], ent[start:])
	return span{start, len(ent), key, binary.BigEndian.Uint64(h[:])}
}

// appendSorted appends the count of spans and their entries in byte order:
// the order-free encoding of one map. A map has a handful of entries: an
// insertion sort on the heads does it.
func appendSorted(b, ent []byte, spans []span) []byte {
	less := func(x, y span) bool {
		if x.head != y.head {
			return x.head < y.head
		}
		return bytes.Compare(ent[x.start:x.end], ent[y.start:y.end]) < 0
	}
	for i := 1; i < len(spans); i++ {
		// Shifted rather than swapped into place: one write per step.
		x, j := spans[i], i
		for ; j > 0 && less(x, spans[j-1]); j-- {
			spans[j] = spans[j-1]
		}
		spans[j] = x
	}
	b = binary.AppendUvarint(b, uint64(len(spans)))
	for _, sp := range spans {
		b = append(b, ent[sp.start:sp.end]...)
	}
	return b
}

// flattenResource decodes every LogRecord of rl, in order, with the
// resource's attributes decoded once and shared. k may be nil (no keys).
func flattenResource(rl plog.ResourceLogs, k *keyer) (map[string]any, []flatRecord) {
	res, resErr := rawMap(rl.Resource().Attributes())
	if res == nil {
		res = map[string]any{}
	}
	var out []flatRecord
	var prefix []byte
	if k != nil {
		prefix = k.appendMap(nil, rl.Resource().Attributes())
	}
	sls := rl.ScopeLogs()
	for j := 0; j < sls.Len(); j++ {
		sl := sls.At(j)
		var scope map[string]any
		if n, v := sl.Scope().Name(), sl.Scope().Version(); n != "" || v != "" {
			scope = mapping.Data("name", n, "version", v)
		}
		var scopeEnc []byte
		if k != nil {
			scopeEnc = appendString(appendString(append([]byte(nil), prefix...), sl.Scope().Name()), sl.Scope().Version())
			scopeEnc = k.appendMap(scopeEnc, sl.Scope().Attributes())
		}
		lrs := sl.LogRecords()
		for i := 0; i < lrs.Len(); i++ {
			lr := lrs.At(i)
			fr := flatRecord{err: resErr}
			if fr.err == nil {
				fr.rec, fr.err = newRecord(res, scope, lr)
			}
			if k != nil {
				fr.key = k.key(scopeEnc, lr)
			}
			out = append(out, fr)
		}
	}
	return res, out
}

// newRecord decodes one LogRecord.
func newRecord(res, scope map[string]any, lr plog.LogRecord) (*mapping.OTelRecord, error) {
	attrs, err := rawFlat(lr.Attributes())
	if err != nil {
		return nil, err
	}
	r := &mapping.OTelRecord{
		Resource:       res,
		Scope:          scope,
		Flat:           attrs,
		EventName:      lr.EventName(),
		SeverityText:   lr.SeverityText(),
		SeverityNumber: int32(lr.SeverityNumber()),
		Time:           uint64(lr.Timestamp()),
		ObservedTime:   uint64(lr.ObservedTimestamp()),
	}
	if lr.Body().Type() != pcommon.ValueTypeEmpty {
		if r.Body, err = rawValue(lr.Body()); err != nil {
			return nil, err
		}
	}
	if id := lr.TraceID(); !id.IsEmpty() {
		r.TraceID = hex.EncodeToString(id[:])
	}
	if id := lr.SpanID(); !id.IsEmpty() {
		r.SpanID = hex.EncodeToString(id[:])
	}
	return r, nil
}

// rawMap is m as Go values (nil when empty), in the OTelRecord convention.
func rawMap(m pcommon.Map) (map[string]any, error) {
	if m.Len() == 0 {
		return nil, nil
	}
	out := make(map[string]any, m.Len())
	var err error
	m.Range(func(k string, v pcommon.Value) bool {
		out[k], err = rawValue(v)
		return err == nil
	})
	return out, err
}

// rawFlat is a record's attributes m as OTelRecord.Flat holds them (never
// nil): one entry per key, in order, a repeated key keeping its first
// place and its last value, as rawMap's map would hold it.
func rawFlat(m pcommon.Map) ([]mapping.Attr, error) {
	out := make([]mapping.Attr, 0, m.Len())
	var err error
	m.Range(func(k string, v pcommon.Value) bool {
		var x any
		if x, err = rawValue(v); err != nil {
			return false
		}
		for j := range out {
			if out[j].Key == k {
				out[j].Value = x
				return true
			}
		}
		out = append(out, mapping.Attr{Key: k, Value: x})
		return true
	})
	return out, err
}

// rawValue is one AnyValue as a Go value: strings, int64, float64, bool,
// []any, map[string]any, bytes as base64; nil when empty. NaN and infinite
// doubles are refused: no JSON line can carry them.
func rawValue(v pcommon.Value) (any, error) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str(), nil
	case pcommon.ValueTypeInt:
		return v.Int(), nil
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errNonFinite
		}
		return f, nil
	case pcommon.ValueTypeBool:
		return v.Bool(), nil
	case pcommon.ValueTypeMap:
		m, err := rawMap(v.Map())
		if m == nil && err == nil {
			m = map[string]any{}
		}
		return m, err
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		out := make([]any, s.Len())
		for i := range out {
			var err error
			if out[i], err = rawValue(s.At(i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case pcommon.ValueTypeBytes:
		return base64.StdEncoding.EncodeToString(v.Bytes().AsRaw()), nil
	}
	return nil, nil
}

// key digests one record under its resource and scope encoding.
func (k *keyer) key(scopeEnc []byte, lr plog.LogRecord) recordKey {
	b := append(k.buf[:0], scopeEnc...)
	b = binary.LittleEndian.AppendUint64(b, uint64(lr.Timestamp()))
	b = binary.LittleEndian.AppendUint64(b, uint64(lr.ObservedTimestamp()))
	b = binary.LittleEndian.AppendUint32(b, uint32(lr.SeverityNumber()))
	b = binary.LittleEndian.AppendUint32(b, uint32(lr.Flags()))
	b = binary.LittleEndian.AppendUint32(b, lr.DroppedAttributesCount())
	tid, sid := lr.TraceID(), lr.SpanID()
	b = append(append(b, tid[:]...), sid[:]...)
	b = appendString(appendString(b, lr.SeverityText()), lr.EventName())
	b = k.appendValue(b, lr.Body())
	b = k.appendMap(b, lr.Attributes())
	k.buf = b
	sum := sha256.Sum256(b)
	return recordKey(sum[:16])
}

// appendString appends s, length-prefixed.
func appendString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendMap appends a canonical encoding of m that does not depend on the
// order of its entries (attribute order carries no meaning, and a retry
// re-encoded, protobuf to JSON or by another exporter build, may change
// it): the entry count and the entries' encodings in byte order. Each
// entry's encoding delimits itself (length-prefixed key, type-tagged
// value), so the whole stays injective and one SHA-256 of the record
// covers it.
func (k *keyer) appendMap(b []byte, m pcommon.Map) []byte {
	ent, spans := k.ent[:0], k.spans[:0]
	k.ent, k.spans = nil, nil // a nested map takes its own scratch
	for key, v := range m.All() {
		start := len(ent)
		ent = appendString(ent, key)
		keyEnd := len(ent)
		ent = k.appendValue(ent, v)
		spans = append(spans, newSpan(ent, start, keyEnd))
	}
	b = appendSorted(b, ent, spans)
	k.ent, k.spans = ent, spans
	return b
}

// appendValue appends a type-tagged encoding of v.
func (k *keyer) appendValue(b []byte, v pcommon.Value) []byte {
	b = append(b, byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		b = appendString(b, v.Str())
	case pcommon.ValueTypeInt:
		b = binary.LittleEndian.AppendUint64(b, uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case pcommon.ValueTypeMap:
		b = k.appendMap(b, v.Map())
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		b = binary.AppendUvarint(b, uint64(s.Len()))
		for i := 0; i < s.Len(); i++ {
			b = k.appendValue(b, s.At(i))
		}
	case pcommon.ValueTypeBytes:
		b = appendString(b, string(v.Bytes().AsRaw()))
	}
	return b
}

// recordMoment is the moment of one decoded record.
func recordMoment(rec *mapping.OTelRecord) mapping.Moment {
	return mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindRecord, Record: rec}}
}

// Decode turns one JSON line of `aep-hook map` input for an OTLP table into
// moments, as the receiver would hand them over: an OTLP/JSON
// ExportLogsServiceRequest (a top-level "resourceLogs") becomes one moment
// per LogRecord, in order; any other line is one record in the flattened
// JSON form of mapping.OTelRecord (the pins' input). Every error wraps
// mapping.ErrOTelRecord; the moments returned beside one are still good.
func Decode(line []byte) ([]mapping.Moment, error) {
	if isExportRequest(line) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		if err != nil {
			return nil, fmt.Errorf("%w: OTLP/JSON export request: %w", mapping.ErrOTelRecord, err)
		}
		var out []mapping.Moment
		var errs []error
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			_, recs := flattenResource(rls.At(i), nil)
			for _, fr := range recs {
				if fr.err != nil {
					errs = append(errs, fr.err)
					continue
				}
				out = append(out, recordMoment(fr.rec))
			}
		}
		return out, errors.Join(errs...)
	}
	rec, err := parseRecord(line)
	if err != nil {
		return nil, err
	}
	m := recordMoment(rec)
	m.Raw = line
	return []mapping.Moment{m}, nil
}

// isExportRequest reports whether raw is a JSON object with a top-level
// "resourceLogs" (or proto-name "resource_logs") member.
func isExportRequest(raw []byte) bool {
	var probe struct {
		RL  json.RawMessage `json:"resourceLogs"`
		RL2 json.RawMessage `json:"resource_logs"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	return probe.RL != nil || probe.RL2 != nil
}

// parseRecord decodes a flattened record, keeping integers exact: what a
// table reads of it (resource, attributes, body, event name).
func parseRecord(raw []byte) (*mapping.OTelRecord, error) {
	var r struct {
		Resource   map[string]any `json:"resource"`
		Attributes map[string]any `json:"attributes"`
		Body       any            `json:"body"`
		EventName  string         `json:"event_name"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %w", mapping.ErrOTelRecord, err)
	}
	rec := &mapping.OTelRecord{EventName: r.EventName, Body: numbers(r.Body)}
	rec.Resource, _ = numbers(r.Resource).(map[string]any)
	rec.Attributes, _ = numbers(r.Attributes).(map[string]any)
	if rec.Resource == nil {
		rec.Resource = map[string]any{}
	}
	if rec.Attributes == nil {
		rec.Attributes = map[string]any{}
	}
	return rec, nil
}

// numbers replaces every json.Number in v by an int64 (integral) or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
		return x
	}
	return v
}
