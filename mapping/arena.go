package mapping

import (
	"unsafe"

	"github.com/aep-hook/aep-hook/redact"
)

// Arena is storage a table cuts a moment's drafts and list payloads
// (Draft.Fields) from, handed to it in Moment.Arena by an emitter that lets
// them go once its batch is written and then reuses the storage for the
// next batch: a record's two small allocations become a share of one
// chunk. What is cut never overlaps anything else cut, and holds exactly
// the room asked for, so appending past it moves to fresh memory as it
// would from make. A nil Arena allocates each with make.
type Arena struct {
	drafts []Draft
	fields []redact.Field
	// fates remembers the batch's attribute keys' fates (attrFate) by the
	// address of their bytes: the receiver's decoder hands a request's
	// records the same key strings, so after the first record a key's
	// fate is a comparison away rather than a map lookup. Equal address
	// and length mean equal bytes: a string is never written.
	fates [64]fateMemo
}

// fateMemo is one remembered key's fate in one profile.
type fateMemo struct {
	key  *byte
	n    int
	p    *otelProfile
	fate attrFate
}

// Bounds on what an arena keeps for reuse: a batch's worth of records; a
// larger batch allocates the rest, so a pooled arena stays small.
const (
	arenaDrafts = 128
	arenaFields = 1536
)

// one returns d as a list of one draft.
func (a *Arena) one(d Draft) []Draft {
	if a == nil {
		return []Draft{d}
	}
	if len(a.drafts) == cap(a.drafts) {
		a.drafts = make([]Draft, 0, arenaDrafts)
	}
	a.drafts = append(a.drafts, d)
	n := len(a.drafts)
	return a.drafts[n-1 : n : n]
}

// fieldRoom returns an empty list with room for n fields.
func (a *Arena) fieldRoom(n int) []redact.Field {
	if a == nil || n > arenaFields/4 {
		return make([]redact.Field, 0, n)
	}
	if cap(a.fields)-len(a.fields) < n {
		a.fields = make([]redact.Field, 0, arenaFields)
	}
	start := len(a.fields)
	a.fields = a.fields[:start+n]
	return a.fields[start : start : start+n]
}

// fate is p.attrFate(k), remembered for the batch.
func (a *Arena) fate(p *otelProfile, k string) attrFate {
	if a == nil || k == "" {
		return p.attrFate(k)
	}
	ptr := unsafe.StringData(k)
	addr := uintptr(unsafe.Pointer(ptr))
	m := &a.fates[(addr^addr>>6)%uintptr(len(a.fates))]
	if m.key == ptr && m.n == len(k) && m.p == p {
		return m.fate
	}
	f := p.attrFate(k)
	*m = fateMemo{key: ptr, n: len(k), p: p, fate: f}
	return f
}

// Reset makes the arena's storage free for reuse, cleared so it keeps
// nothing alive. Nothing cut from it before may be used afterwards.
func (a *Arena) Reset() {
	clear(a.drafts)
	a.drafts = a.drafts[:0]
	clear(a.fields)
	a.fields = a.fields[:0]
	clear(a.fates[:])
}
