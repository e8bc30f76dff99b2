package otlp

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"sync"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/aep-hook/aep-hook/mapping"
)

// This file is the receiver's fast path for OTLP/protobuf log exports: it
// reads the wire format straight into the records and keys flattenResource
// makes from pdata, without building pdata's object graph first. It covers
// the messages as exporters send them (every field of the logs data model
// this version knows, each submessage once); anything else (unknown or
// deprecated fields, a repeated submessage pdata would merge, interned
// strings, nesting deeper than maxWireDepth, malformed input) returns
// errSlowPath and the request goes through pdata as before, which decides
// what it means. So the fast path never accepts what pdata refuses, and
// where it accepts, it gives what the pdata path gives
// (TestWireMatchesPdata, FuzzWireMatchesPdata): the same resources,
// records, errors and keys. One difference nothing observes: a resource
// holding a NaN or infinite double has all its records refused on both
// paths, and its attribute map (which only vendor detection reads) is whole
// here where rawMap's stops at the bad value.

// errSlowPath: the request is left to pdata.
var errSlowPath = errors.New("otlp: outside the fast path")

// maxWireDepth bounds the nesting of attribute values the fast path
// follows (pdata's own limit is deeper).
const maxWireDepth = 16

// Protobuf wire types (read here, written by encoder.go).
const (
	wireVarint = 0
	wireI64    = 1
	wireBytes  = 2
	wireI32    = 5
)

// flatResource is one ResourceLogs decoded: the resource's attributes and
// its records in order, as flattenResource returns them.
type flatResource struct {
	res  map[string]any
	recs []flatRecord
}

// wireReader walks one message.
type wireReader struct {
	b   []byte
	pos int
}

// varint reads a base-128 varint of at most 10 bytes whose value fits 64
// bits.
func (r *wireReader) varint() (uint64, bool) {
	// Tags and most lengths are one byte: that case inlines.
	if r.pos < len(r.b) && r.b[r.pos] < 0x80 {
		r.pos++
		return uint64(r.b[r.pos-1]), true
	}
	return r.longVarint()
}

// longVarint is varint's loop, for a varint of any length.
func (r *wireReader) longVarint() (uint64, bool) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.pos >= len(r.b) {
			return 0, false
		}
		c := r.b[r.pos]
		r.pos++
		if i == 9 && c > 1 {
			return 0, false
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, true
		}
	}
	return 0, false
}

// next reads a field's tag: its number and wire type; ok false at the end
// of the message or on a malformed tag.
func (r *wireReader) next() (num int, typ int, ok bool) {
	t, ok := r.varint()
	if !ok || t>>3 == 0 || t>>3 > 1<<29-1 {
		return 0, 0, false
	}
	return int(t >> 3), int(t & 7), true
}

// bytes reads a length-delimited field's content.
func (r *wireReader) bytes() ([]byte, bool) {
	n, ok := r.varint()
	if !ok || n > uint64(len(r.b)-r.pos) {
		return nil, false
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, true
}

// fixed reads n bytes (a fixed64 or fixed32 field).
func (r *wireReader) fixed(n int) ([]byte, bool) {
	if len(r.b)-r.pos < n {
		return nil, false
	}
	r.pos += n
	return r.b[r.pos-n : r.pos], true
}

func (r *wireReader) fixed64() (uint64, bool) {
	b, ok := r.fixed(8)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

func (r *wireReader) fixed32() (uint32, bool) {
	b, ok := r.fixed(4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (r *wireReader) more() bool { return r.pos < len(r.b) }

// nextBytes reads a length-delimited field: its number and content; ok is
// false for any other wire type.
func (r *wireReader) nextBytes() (num int, v []byte, ok bool) {
	num, typ, ok := r.next()
	if !ok || typ != wireBytes {
		return 0, nil, false
	}
	v, ok = r.bytes()
	return num, v, ok
}

// items reads a length-delimited field holding a message made of one
// repeated message field number 1 (ArrayValue, KeyValueList): its items.
func (r *wireReader) items() ([][]byte, bool) {
	b, ok := r.bytes()
	if !ok {
		return nil, false
	}
	return only1(b)
}

// id reads a trace or span id into dst: empty (zero) or exactly len(dst)
// bytes, as pdata's TraceID and SpanID take them.
func (r *wireReader) id(dst []byte) bool {
	b, ok := r.bytes()
	switch {
	case !ok:
		return false
	case len(b) == 0:
		clear(dst)
	case len(b) == len(dst):
		copy(dst, b)
	default:
		return false
	}
	return true
}

// only1 reads a message made of one repeated message field, number 1
// (ExportLogsServiceRequest, ArrayValue, KeyValueList): its items.
func only1(b []byte) ([][]byte, bool) {
	var items [][]byte
	r := wireReader{b: b}
	for r.more() {
		num, item, ok := r.nextBytes()
		if !ok || num != 1 {
			return nil, false
		}
		items = append(items, item)
	}
	return items, true
}

// wireDecoder decodes one request; k keys its records.
type wireDecoder struct {
	k         *keyer
	nonFinite bool // a NaN or infinite double was read (errNonFinite)
	entries   [][]byte
	// strs is where the request's strings are copied, back to back, a
	// chunk at a time (see str): a string repeated from the previous
	// record is not copied again, so a request of records alike copies
	// little more than what changes between them, in a few allocations.
	// Bytes once written there are never written again: the strings cut
	// from them stay immutable.
	strs []byte
	// event and severity are the previous record's event name and severity
	// text, which its successors mostly repeat.
	event, severity string
	// recs and attrs are where the request's records and their attributes
	// are allocated, a chunk at a time: one allocation for many records.
	recs  []mapping.OTelRecord
	attrs []mapping.Attr
	// sc, when not nil, holds the chunks of an earlier request to reuse.
	sc *wireScratch
	// left is how many records of the scope being decoded are still to
	// come, this one included: a chunk is sized for them, up to recChunk.
	left int
	// prev and cur are the attributes of the previous record and of this
	// one, both in the chunk (cur is decoded in place, never copied): most
	// values repeat from record to record, and a repeated string shares
	// the earlier box instead of allocating its own. The previous value of
	// a key is looked for in the key's own position first (an exporter
	// sends one kind of record in one order), then among the others;
	// comparing a few short keys costs less than hashing every string
	// into a cache.
	prev, cur []mapping.Attr
	// prevSlots indexes prev's keys by keySlot (position+1, 0 for an empty
	// slot) when prev holds at most maxScan attributes: a key out of its
	// own position is found with one comparison or two, not a scan of
	// them all (the records of one map-built batch each have their own
	// order).
	prevSlots [keySlots]uint8
	// prevRank is where each of prev's attributes lies in its record's
	// sorted key encoding, when prevRanked. A record whose keys are those
	// of the previous one, in whatever order, sorts as that one did: the
	// entries of distinct keys are ordered by their keys alone (a key's
	// encoding is length-prefixed, so it is never a prefix of another's),
	// whatever their values. Its entries are then put in place without
	// comparing them.
	// curRank and curRanked are the same for cur, once encoded.
	prevRank, curRank     [maxRanked]uint8
	prevRanked, curRanked bool
	// rank and starts are entriesEnc's scratch for the record's ranks.
	rank   [maxRanked]uint8
	starts []int
}

// maxScan bounds the attributes searched for a key's previous value
// beyond its own position.
const maxScan = 32

// keySlots is the size of the previous record's key index: twice maxScan,
// so a probe ends at an empty slot soon.
const keySlots = 2 * maxScan

// maxRanked bounds the attributes of a record whose sort order is kept
// for the next (a bit each in a uint64 when checked).
const maxRanked = 64

// keySlot is where key's probe starts in the key index: a mix of its
// length and three of its bytes, which tells apart the few keys of one
// record cheaply.
func keySlot[S ~string | ~[]byte](key S) int {
	n := len(key)
	if n == 0 {
		return 0
	}
	h := uint32(n) | uint32(key[0])<<8 | uint32(key[n/2])<<16 | uint32(key[n-1])<<24
	return int((h * 0x9e3779b1) >> (32 - 6) & (keySlots - 1))
}

// previous is where key was in the previous record's attributes, at
// position i or elsewhere; -1 when it had no such attribute.
func (d *wireDecoder) previous(i int, key []byte) int {
	if i < len(d.prev) && d.prev[i].Key == string(key) {
		return i
	}
	return d.probe(key)
}

// probe is previous for a key out of its own position.
func (d *wireDecoder) probe(key []byte) int {
	if len(d.prev) <= maxScan {
		for s := keySlot(key); ; s = (s + 1) & (keySlots - 1) {
			p := int(d.prevSlots[s])
			if p == 0 {
				return -1
			}
			if d.prev[p-1].Key == string(key) {
				return p - 1
			}
		}
	}
	return -1
}

// setPrev makes flat the previous record's attributes, indexed for
// previous.
func (d *wireDecoder) setPrev(flat []mapping.Attr) {
	d.prev = flat
	d.prevRank, d.prevRanked = d.curRank, d.curRanked
	if len(flat) > maxScan {
		return
	}
	clear(d.prevSlots[:])
	for j := range flat {
		s := keySlot(flat[j].Key)
		for d.prevSlots[s] != 0 {
			s = (s + 1) & (keySlots - 1)
		}
		d.prevSlots[s] = uint8(j + 1)
	}
}

// dedupeAttrs folds repeated keys of as (the wire allows them) in place:
// a key keeps its first place and takes its last value, as a map filled
// in order would hold it.
func dedupeAttrs(as []mapping.Attr) []mapping.Attr {
	out := as[:0]
	for _, a := range as {
		found := false
		for j := range out {
			if out[j].Key == a.Key {
				out[j].Value, found = a.Value, true
				break
			}
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}

// recChunk bounds the records (and their attributes) one chunk holds,
// maxAttrChunk the attributes of records sharing a chunk.
const (
	recChunk     = 64
	maxAttrChunk = 2048
)

// newRecord is a zeroed record from the current chunk.
func (d *wireDecoder) newRecord() *mapping.OTelRecord {
	if len(d.recs) == cap(d.recs) {
		d.recs = d.sc.recChunk(min(max(d.left, 1), recChunk))
	}
	d.recs = d.recs[:len(d.recs)+1]
	return &d.recs[len(d.recs)-1]
}

// reserve is room for n attributes in the current chunk: an empty slice
// that holds n without growing, whose appends cannot reach another
// record's.
func (d *wireDecoder) reserve(n int) []mapping.Attr {
	if n == 0 {
		return []mapping.Attr{} // not nil: Flat holds the (no) attributes
	}
	if cap(d.attrs)-len(d.attrs) < n {
		// Room for the scope's next records if they have as many, within
		// maxAttrChunk (a record of many attributes gets a chunk alone).
		d.attrs = d.sc.attrChunk(max(n, min(n*min(max(d.left, 1), recChunk), maxAttrChunk)))
	}
	start := len(d.attrs)
	d.attrs = d.attrs[:start+n]
	return d.attrs[start : start : start+n]
}

// wireScratch keeps the record and attribute chunks of one request for
// the next (scratchPool): a request of a hundred records allocates them
// as a sixth of all it allocates. A chunk is reused when it is large
// enough for what is asked, and cleared when the scratch is released, so
// nothing of a request outlives it there; only scratches within
// maxScratchRecs records and maxScratchAttrs attributes are kept, so the
// pool holds little beyond what typical requests need.
type wireScratch struct {
	recs  [][]mapping.OTelRecord
	attrs [][]mapping.Attr
	// usedRecs and usedAttrs count the chunks handed out since the last
	// release.
	usedRecs, usedAttrs int
	// k is the request's keyer: its buffers, grown to a request's keys,
	// hold no pointers and serve the next request as they are.
	k keyer
}

// maxScratchKey bounds the keyer buffers a scratch keeps.
const maxScratchKey = 64 << 10

const (
	maxScratchRecs  = 2 * recChunk
	maxScratchAttrs = maxAttrChunk
)

// scratchPool recycles the fast path's chunks between requests.
var scratchPool = sync.Pool{New: func() any { return new(wireScratch) }}

// recChunk is an empty chunk for at least n records.
func (sc *wireScratch) recChunk(n int) []mapping.OTelRecord {
	if sc == nil {
		return make([]mapping.OTelRecord, 0, n)
	}
	return takeChunk(&sc.recs, &sc.usedRecs, n)
}

// attrChunk is an empty chunk for at least n attributes.
func (sc *wireScratch) attrChunk(n int) []mapping.Attr {
	if sc == nil {
		return make([]mapping.Attr, 0, n)
	}
	return takeChunk(&sc.attrs, &sc.usedAttrs, n)
}

// takeChunk hands out an empty chunk of chunks with room for n, reusing
// one not yet handed out since the last reset (the first *used are): the
// chunk taken is swapped into the used part, so each is handed out once
// per request.
func takeChunk[T any](chunks *[][]T, used *int, n int) []T {
	cs := *chunks
	for i := *used; i < len(cs); i++ {
		if cap(cs[i]) >= n {
			cs[i], cs[*used] = cs[*used], cs[i]
			*used++
			return cs[*used-1][:0]
		}
	}
	c := make([]T, 0, n)
	cs = append(cs, c)
	cs[*used], cs[len(cs)-1] = cs[len(cs)-1], cs[*used]
	*used++
	*chunks = cs
	return c
}

// getScratch is a scratch for one request's decoding.
func getScratch() *wireScratch { return scratchPool.Get().(*wireScratch) }

// release clears the chunks the request used (whose records must no
// longer be read) and gives the scratch back to the pool, unless it grew
// past the bounds.
func (sc *wireScratch) release() {
	nrec, nattr := 0, 0
	for _, c := range sc.recs[:sc.usedRecs] {
		clear(c[:cap(c)])
	}
	for _, c := range sc.attrs[:sc.usedAttrs] {
		clear(c[:cap(c)])
	}
	for _, c := range sc.recs {
		nrec += cap(c)
	}
	for _, c := range sc.attrs {
		nattr += cap(c)
	}
	sc.usedRecs, sc.usedAttrs = 0, 0
	if k := &sc.k; cap(k.buf)+cap(k.ent) > maxScratchKey || cap(k.spans)+cap(k.sorted) > maxScratchKey/32 {
		sc.k = keyer{}
	}
	if nrec > maxScratchRecs || nattr > maxScratchAttrs {
		return
	}
	scratchPool.Put(sc)
}

// strChunk is the size of the chunks strings are copied into; a string
// longer than a quarter of it is copied alone.
const strChunk = 4 << 10

// str is b as a string, copied into the current string chunk.
func (d *wireDecoder) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > strChunk/4 {
		return string(b)
	}
	if cap(d.strs)-len(d.strs) < len(b) {
		d.strs = make([]byte, 0, strChunk)
	}
	start := len(d.strs)
	d.strs = append(d.strs, b...)
	return unsafe.String(&d.strs[start], len(b))
}

// same is b as a string, last itself when it holds the same bytes.
func (d *wireDecoder) same(b []byte, last string) string {
	if last == string(b) {
		return last
	}
	return d.str(b)
}

// hexID is id in lowercase hex, as hex.EncodeToString gives it.
func (d *wireDecoder) hexID(id []byte) string {
	var buf [32]byte
	n := hex.Encode(buf[:], id)
	return d.str(buf[:n])
}

// boxed is b as a string in an interface, the box of prev when prev holds
// the same string.
func (d *wireDecoder) boxed(b []byte, prev any) any {
	if s, ok := prev.(string); ok && s == string(b) {
		return prev
	}
	return d.str(b)
}

// decodeWire decodes an ExportLogsServiceRequest, or returns errSlowPath.
func decodeWire(body []byte, k *keyer) ([]flatResource, error) {
	return decodeWireIn(body, k, nil)
}

// decodeWireIn is decodeWire with the records and their attributes in sc's
// chunks (new ones when sc is nil): what it returns lives until sc is
// released.
func decodeWireIn(body []byte, k *keyer, sc *wireScratch) ([]flatResource, error) {
	d := &wireDecoder{k: k, sc: sc}
	rls, ok := only1(body)
	if !ok {
		return nil, errSlowPath
	}
	out := make([]flatResource, 0, len(rls))
	for _, rl := range rls {
		fr, err := d.resourceLogs(rl)
		if err != nil {
			return nil, err
		}
		out = append(out, fr)
	}
	return out, nil
}

// resourceLogs decodes one ResourceLogs.
func (d *wireDecoder) resourceLogs(b []byte) (flatResource, error) {
	var resource []byte
	haveResource := false
	var scopes [][]byte
	r := wireReader{b: b}
	for r.more() {
		num, v, ok := r.nextBytes()
		if !ok {
			return flatResource{}, errSlowPath
		}
		switch num {
		case 1: // resource
			if haveResource {
				return flatResource{}, errSlowPath
			}
			resource, haveResource = v, true
		case 2: // scope_logs
			scopes = append(scopes, v)
		case 3: // schema_url
		default:
			return flatResource{}, errSlowPath
		}
	}
	// Resource: attributes (1), dropped_attributes_count (2).
	var attrs [][]byte
	r = wireReader{b: resource}
	for r.more() {
		num, typ, ok := r.next()
		switch {
		case !ok:
			return flatResource{}, errSlowPath
		case num == 1 && typ == wireBytes:
			kv, ok := r.bytes()
			if !ok {
				return flatResource{}, errSlowPath
			}
			attrs = append(attrs, kv)
		case num == 2 && typ == wireVarint:
			if _, ok := r.varint(); !ok {
				return flatResource{}, errSlowPath
			}
		default:
			return flatResource{}, errSlowPath
		}
	}
	d.nonFinite = false
	res, prefix, err := d.mapOf(attrs, 0, nil)
	if err != nil {
		return flatResource{}, err
	}
	var resErr error
	if d.nonFinite {
		resErr = errNonFinite
	}
	fr := flatResource{res: res}
	for _, s := range scopes {
		if fr.recs, err = d.scopeLogs(s, prefix, res, resErr, fr.recs); err != nil {
			return flatResource{}, err
		}
	}
	return fr, nil
}

// scopeLogs decodes one ScopeLogs, appending its records to out.
func (d *wireDecoder) scopeLogs(b, prefix []byte, res map[string]any, resErr error, out []flatRecord) ([]flatRecord, error) {
	var scopeMsg []byte
	haveScope := false
	var records [][]byte
	r := wireReader{b: b}
	for r.more() {
		num, v, ok := r.nextBytes()
		if !ok {
			return nil, errSlowPath
		}
		switch num {
		case 1: // scope
			if haveScope {
				return nil, errSlowPath
			}
			scopeMsg, haveScope = v, true
		case 2: // log_records
			records = append(records, v)
		case 3: // schema_url
		default:
			return nil, errSlowPath
		}
	}
	// InstrumentationScope: name (1), version (2), attributes (3),
	// dropped_attributes_count (4).
	var name, version []byte
	var attrs [][]byte
	r = wireReader{b: scopeMsg}
	for r.more() {
		num, typ, ok := r.next()
		if !ok {
			return nil, errSlowPath
		}
		switch {
		case num == 1 && typ == wireBytes:
			name, ok = r.bytes()
		case num == 2 && typ == wireBytes:
			version, ok = r.bytes()
		case num == 3 && typ == wireBytes:
			var kv []byte
			kv, ok = r.bytes()
			attrs = append(attrs, kv)
		case num == 4 && typ == wireVarint:
			_, ok = r.varint()
		default:
			ok = false
		}
		if !ok {
			return nil, errSlowPath
		}
	}
	var scope map[string]any
	if len(name) > 0 || len(version) > 0 {
		scope = mapping.Data("name", string(name), "version", string(version))
	}
	scopeEnc := appendString(appendString(append([]byte(nil), prefix...), name), version)
	scopeEnc, err := d.mapEnc(attrs, 0, scopeEnc)
	if err != nil {
		return nil, err
	}
	d.k.setPrefix(scopeEnc)
	out = slices.Grow(out, len(records))
	for i, rec := range records {
		d.left = len(records) - i
		fr, err := d.logRecord(rec, scopeEnc, res, scope, resErr)
		if err != nil {
			return nil, err
		}
		out = append(out, fr)
	}
	return out, nil
}

// logRecord decodes one LogRecord into its record and key.
func (d *wireDecoder) logRecord(b, scopeEnc []byte, res, scope map[string]any, resErr error) (flatRecord, error) {
	var (
		timeNano, observed uint64
		severity           int32
		severityText       []byte
		body               []byte
		haveBody           bool
		dropped, flags     uint32
		traceID            [16]byte
		spanID             [8]byte
		eventName          []byte
	)
	attrs := d.entries[:0]
	d.entries = nil // a nested decode takes its own
	r := wireReader{b: b}
	for r.more() {
		num, typ, ok := r.next()
		if !ok {
			return flatRecord{}, errSlowPath
		}
		switch {
		case num == 1 && typ == wireI64:
			timeNano, ok = r.fixed64()
		case num == 11 && typ == wireI64:
			observed, ok = r.fixed64()
		case num == 2 && typ == wireVarint:
			var v uint64
			v, ok = r.varint()
			severity = int32(v)
		case num == 3 && typ == wireBytes:
			severityText, ok = r.bytes()
		case num == 5 && typ == wireBytes:
			if haveBody {
				return flatRecord{}, errSlowPath
			}
			body, ok = r.bytes()
			haveBody = true
		case num == 6 && typ == wireBytes:
			var kv []byte
			kv, ok = r.bytes()
			attrs = append(attrs, kv)
		case num == 7 && typ == wireVarint:
			var v uint64
			v, ok = r.varint()
			dropped = uint32(v)
		case num == 8 && typ == wireI32:
			flags, ok = r.fixed32()
		case num == 9 && typ == wireBytes:
			ok = r.id(traceID[:])
		case num == 10 && typ == wireBytes:
			ok = r.id(spanID[:])
		case num == 12 && typ == wireBytes:
			eventName, ok = r.bytes()
		default:
			ok = false
		}
		if !ok {
			return flatRecord{}, errSlowPath
		}
	}
	k := d.k
	kb := append(k.buf[:0], scopeEnc...)
	kb = binary.LittleEndian.AppendUint64(kb, timeNano)
	kb = binary.LittleEndian.AppendUint64(kb, observed)
	kb = binary.LittleEndian.AppendUint32(kb, uint32(severity))
	kb = binary.LittleEndian.AppendUint32(kb, flags)
	kb = binary.LittleEndian.AppendUint32(kb, dropped)
	kb = append(append(kb, traceID[:]...), spanID[:]...)
	kb = appendString(appendString(kb, severityText), eventName)
	d.nonFinite = false
	bodyVal, kb, err := d.value(body, 0, kb, nil)
	if err != nil {
		return flatRecord{}, err
	}
	d.cur = d.reserve(len(attrs))
	kb, err = d.entriesEnc(attrs, 0, kb, nil, true)
	if err != nil {
		return flatRecord{}, err
	}
	flat := d.cur[:len(d.cur):len(d.cur)]
	d.setPrev(flat)
	d.cur = nil
	k.buf = kb
	d.entries = attrs
	fr := flatRecord{key: k.digest(kb), err: resErr}
	if fr.err == nil && d.nonFinite {
		fr.err = errNonFinite
	}
	if fr.err != nil {
		return fr, nil
	}
	rec := d.newRecord()
	*rec = mapping.OTelRecord{
		Resource:       res,
		Scope:          scope,
		Flat:           flat,
		Body:           bodyVal,
		EventName:      d.same(eventName, d.event),
		SeverityText:   d.same(severityText, d.severity),
		SeverityNumber: severity,
		Time:           timeNano,
		ObservedTime:   observed,
	}
	d.event, d.severity = rec.EventName, rec.SeverityText
	if traceID != [16]byte{} {
		rec.TraceID = d.hexID(traceID[:])
	}
	if spanID != [8]byte{} {
		rec.SpanID = d.hexID(spanID[:])
	}
	fr.rec = rec
	return fr, nil
}

// mapOf decodes the KeyValue messages of one map: the map (never nil) and
// enc with the map's key encoding (keyer.appendMap) appended.
func (d *wireDecoder) mapOf(kvs [][]byte, depth int, enc []byte) (map[string]any, []byte, error) {
	m := make(map[string]any, len(kvs))
	enc, err := d.entriesEnc(kvs, depth, enc, m, false)
	return m, enc, err
}

// mapEnc is mapOf's key encoding alone.
func (d *wireDecoder) mapEnc(kvs [][]byte, depth int, enc []byte) ([]byte, error) {
	return d.entriesEnc(kvs, depth, enc, nil, false)
}

// entriesEnc decodes kvs into m (when not nil), or into the record's
// attributes (wireDecoder.cur, with room for them all) when record is set,
// whose strings may share the boxes of the previous record's (see
// wireDecoder.prev), and appends their order-free encoding to enc, as
// keyer.appendMap does.
func (d *wireDecoder) entriesEnc(kvs [][]byte, depth int, enc []byte, m map[string]any, record bool) ([]byte, error) {
	k := d.k
	ent, spans := k.ent[:0], k.spans[:0]
	k.ent, k.spans = nil, nil // a nested map takes its own scratch
	// rank is each attribute's place in the sorted encoding, taken from
	// the previous record's while ranked (see wireDecoder.prevRank): its
	// keys must be those of the previous record, each once.
	ranked := record && d.prevRanked && len(kvs) == len(d.prev)
	var seen uint64
	for i, kv := range kvs {
		key, val, ok := kvParts(kv)
		if !ok {
			return nil, errSlowPath
		}
		start := len(ent)
		ent = appendString(ent, key)
		keyEnd := len(ent)
		var ks string
		var prev any
		if record {
			// The key and value as the previous record had them: the
			// key uncopied, the value's box shared when it holds the
			// same (see wireDecoder.prev).
			if j := d.previous(i, key); j >= 0 {
				ks, prev = d.prev[j].Key, d.prev[j].Value
				if ranked {
					r := d.prevRank[j]
					ranked = seen&(1<<r) == 0
					seen |= 1 << r
					d.rank[i] = r
				}
			} else {
				ks, ranked = d.str(key), false
			}
		} else {
			ks = d.str(key)
		}
		var x any
		var err error
		if x, ent, err = d.value(val, depth, ent, prev); err != nil {
			return nil, err
		}
		if record {
			d.cur = append(d.cur, mapping.Attr{Key: ks, Value: x})
		}
		spans = append(spans, newSpan(ent, start, keyEnd))
		if m != nil {
			m[ks] = x
		}
	}
	switch {
	case ranked:
		enc = k.appendRanked(enc, ent, spans, d.rank[:len(spans)])
		d.curRank, d.curRanked = d.rank, true
	case record:
		enc = d.appendSortedRecord(enc, ent, spans)
	default:
		enc = appendSorted(enc, ent, spans)
	}
	k.ent, k.spans = ent, spans
	return enc, nil
}

// appendRanked is appendSorted for spans whose places in sorted order
// are known: rank[i] is spans[i]'s. The spans are reordered as
// appendSorted leaves them.
func (k *keyer) appendRanked(b, ent []byte, spans []span, rank []uint8) []byte {
	sorted := append(k.sorted[:0], spans...)
	for i, sp := range spans {
		sorted[rank[i]] = sp
	}
	copy(spans, sorted)
	k.sorted = sorted
	b = binary.AppendUvarint(b, uint64(len(spans)))
	for _, sp := range spans {
		b = append(b, ent[sp.start:sp.end]...)
	}
	return b
}

// appendSortedRecord is appendSorted for the record's own attributes
// (wireDecoder.cur): it folds their repeated keys, and keeps their sort
// order for the next record (wireDecoder.prevRank).
func (d *wireDecoder) appendSortedRecord(enc, ent []byte, spans []span) []byte {
	// The entries were encoded in attribute order, so their starts
	// increase: once sorted, a span's start tells which attribute it is.
	n := len(spans)
	starts := d.starts[:0]
	if n <= maxRanked {
		for _, sp := range spans {
			starts = append(starts, sp.start)
		}
		d.starts = starts
	}
	enc = appendSorted(enc, ent, spans)
	// Sorted, the entries of one key lie side by side: a repeated key
	// (rare) shows there, and only then are the attributes folded.
	d.curRanked = false
	if repeatsKey(ent, spans) {
		d.cur = dedupeAttrs(d.cur)
		return enc
	}
	if n <= maxRanked {
		for r, sp := range spans {
			i, _ := slices.BinarySearch(starts, sp.start)
			d.curRank[i] = uint8(r)
		}
		d.curRanked = true
	}
	return enc
}

// repeatsKey reports whether two of the sorted spans encode the same key.
func repeatsKey(ent []byte, spans []span) bool {
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if a.key-a.start == b.key-b.start && string(ent[a.start:a.key]) == string(ent[b.start:b.key]) {
			return true
		}
	}
	return false
}

// kvParts splits a KeyValue message into its key (field 1) and value
// (field 2), each present at most once; ok is false for anything else.
// The layouts exporters write, both fields each with a one-byte length,
// the key first (prost, the Rust SDK's) or the value first (pdata's
// marshaler), are read without the general loop.
func kvParts(kv []byte) (key, val []byte, ok bool) {
	if len(kv) >= 4 && kv[1] < 0x80 {
		n := int(kv[1])
		if 4+n <= len(kv) && kv[3+n] < 0x80 && 4+n+int(kv[3+n]) == len(kv) {
			switch {
			case kv[0] == 0x0a && kv[2+n] == 0x12:
				return kv[2 : 2+n], kv[4+n:], true
			case kv[0] == 0x12 && kv[2+n] == 0x0a:
				return kv[4+n:], kv[2 : 2+n], true
			}
		}
	}
	return kvFieldLoop(kv)
}

// kvFieldLoop is kvParts read field by field, for any other layout.
func kvFieldLoop(kv []byte) (key, val []byte, ok bool) {
	haveKey, haveVal := false, false
	r := wireReader{b: kv}
	for r.more() {
		num, v, ok := r.nextBytes()
		if !ok {
			return nil, nil, false
		}
		switch {
		case num == 1 && !haveKey:
			key, haveKey = v, true
		case num == 2 && !haveVal:
			val, haveVal = v, true
		default:
			return nil, nil, false
		}
	}
	return key, val, true
}

// value decodes one AnyValue as rawValue would give it and appends its key
// encoding (keyer.appendValue) to enc. A non-finite double sets nonFinite
// and decodes as nil. prev is the value the previous record had for the
// same attribute (see wireDecoder.prev), nil outside a record's own.
func (d *wireDecoder) value(b []byte, depth int, enc []byte, prev any) (any, []byte, error) {
	if depth >= maxWireDepth {
		return nil, nil, errSlowPath
	}
	if len(b) >= 2 && b[0] == 0x0a && b[1] < 0x80 && len(b) == 2+int(b[1]) {
		// A string with a one-byte length, the most common value.
		s := b[2:]
		return d.boxed(s, prev), appendString(append(enc, byte(pcommon.ValueTypeStr)), s), nil
	}
	r := wireReader{b: b}
	if !r.more() {
		return nil, append(enc, byte(pcommon.ValueTypeEmpty)), nil
	}
	num, typ, ok := r.next()
	if !ok {
		return nil, nil, errSlowPath
	}
	var x any
	switch {
	case num == 1 && typ == wireBytes:
		var s []byte
		if s, ok = r.bytes(); ok {
			x, enc = d.boxed(s, prev), appendString(append(enc, byte(pcommon.ValueTypeStr)), s)
		}
	case num == 2 && typ == wireVarint:
		var v uint64
		if v, ok = r.varint(); ok {
			bv := byte(0)
			if v != 0 {
				bv = 1
			}
			x, enc = v != 0, append(enc, byte(pcommon.ValueTypeBool), bv)
		}
	case num == 3 && typ == wireVarint:
		var v uint64
		if v, ok = r.varint(); ok {
			x, enc = int64(v), binary.LittleEndian.AppendUint64(append(enc, byte(pcommon.ValueTypeInt)), v)
		}
	case num == 4 && typ == wireI64:
		var v uint64
		if v, ok = r.fixed64(); ok {
			enc = binary.LittleEndian.AppendUint64(append(enc, byte(pcommon.ValueTypeDouble)), v)
			if f := math.Float64frombits(v); math.IsNaN(f) || math.IsInf(f, 0) {
				d.nonFinite = true
			} else {
				x = f
			}
		}
	case num == 5 && typ == wireBytes: // array
		var items [][]byte
		if items, ok = r.items(); !ok {
			break
		}
		enc = binary.AppendUvarint(append(enc, byte(pcommon.ValueTypeSlice)), uint64(len(items)))
		out := make([]any, len(items))
		for i, item := range items {
			var err error
			if out[i], enc, err = d.value(item, depth+1, enc, nil); err != nil {
				return nil, nil, err
			}
		}
		x = out
	case num == 6 && typ == wireBytes: // kvlist
		var kvs [][]byte
		if kvs, ok = r.items(); !ok {
			break
		}
		var err error
		if x, enc, err = d.mapOf(kvs, depth+1, append(enc, byte(pcommon.ValueTypeMap))); err != nil {
			return nil, nil, err
		}
	case num == 7 && typ == wireBytes:
		var raw []byte
		if raw, ok = r.bytes(); ok {
			x = base64.StdEncoding.EncodeToString(raw)
			enc = appendString(append(enc, byte(pcommon.ValueTypeBytes)), raw)
		}
	default:
		ok = false
	}
	if !ok || r.more() { // one member of the oneof, once
		return nil, nil, errSlowPath
	}
	return x, enc, nil
}
