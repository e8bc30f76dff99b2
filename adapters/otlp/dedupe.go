package otlp

import (
	"container/list"
	"sync"
)

// recordKey identifies one record: a digest of its flattened form
// (resource, scope and record), so an exporter's retry of a batch maps to
// the same keys.
type recordKey [16]byte

// dedupe is a bounded LRU window of record keys. A key is reserved while its
// record is being emitted, so a retry racing the first attempt is dropped,
// and released if the emission failed, so a later retry can succeed.
type dedupe struct {
	mu  sync.Mutex
	max int
	ll  *list.List // front = most recent
	m   map[recordKey]*list.Element
}

func newDedupe(max int) *dedupe {
	return &dedupe{max: max, ll: list.New(), m: make(map[recordKey]*list.Element, min(max, 4096))}
}

// reserve records k and reports true when k was not in the window.
func (d *dedupe) reserve(k recordKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.m[k]; ok {
		d.ll.MoveToFront(e)
		return false
	}
	d.m[k] = d.ll.PushFront(k)
	for d.ll.Len() > d.max {
		old := d.ll.Back()
		d.ll.Remove(old)
		delete(d.m, old.Value.(recordKey))
	}
	return true
}

// release forgets k (its emission failed).
func (d *dedupe) release(k recordKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.m[k]; ok {
		d.ll.Remove(e)
		delete(d.m, k)
	}
}

// len is the window's current size.
func (d *dedupe) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ll.Len()
}
