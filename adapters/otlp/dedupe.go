package otlp

import (
	"sync"

	"github.com/aep-hook/aep-hook/internal/lru"
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
	set *lru.Set[recordKey]
}

func newDedupe(max int) *dedupe { return &dedupe{set: lru.New[recordKey](max)} }

// reserve records k and reports true when k was not in the window.
func (d *dedupe) reserve(k recordKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.set.Add(k)
}

// release forgets k (its emission failed).
func (d *dedupe) release(k recordKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.set.Remove(k)
}

// len is the window's current size.
func (d *dedupe) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.set.Len()
}
