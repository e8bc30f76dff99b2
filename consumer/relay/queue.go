package relay

import (
	"sync"
	"unsafe"
)

// itemCost is what queuing one item costs beyond the bytes it points to.
const itemCost = int64(unsafe.Sizeof(item{}))

// queue is one connection's outbound queue, filled under the hub's lock by
// fan-out and drained by the connection's one writer. Its storage grows
// as it fills and is let go when it drains, so an idle connection costs
// nothing; what it may hold is bounded in bytes (the events and frames it
// points to and the items themselves). Past the bound put refuses, and the
// connection is cut (AEP-0003 §8.4: deliver or disconnect).
type queue struct {
	mu    sync.Mutex
	items []item
	head  int
	bytes int64
	max   int64
	// ready holds a token while items may wait: put leaves one after
	// every item, the writer takes it and pops until the queue is empty.
	ready chan struct{}
}

func newQueue(max int64) *queue { return &queue{max: max, ready: make(chan struct{}, 1)} }

// cost is what it holds: an event's bytes (shared with the buffers and
// the other connections, so an upper bound), a frame's, and the item.
func (it *item) cost() int64 {
	n := itemCost + int64(len(it.frame))
	if it.ev != nil {
		n += it.ev.Size()
	}
	return n
}

// put queues it unless that would pass the bound; an item alone in the
// queue is always taken, so one large event never cuts an idle consumer.
func (q *queue) put(it item) bool {
	cost := it.cost()
	q.mu.Lock()
	if q.bytes+cost > q.max && len(q.items) > q.head {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	q.bytes += cost
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest item, false when there is none.
func (q *queue) pop() (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return item{}, false
	}
	it := q.items[q.head]
	q.items[q.head] = item{}
	q.head++
	q.bytes -= it.cost()
	if q.head == len(q.items) {
		// Drained: keep a small array for the next burst, let a big one go.
		if cap(q.items) > 256 {
			q.items = nil
		} else {
			q.items = q.items[:0]
		}
		q.head = 0
	}
	return it, true
}

// size is the bytes held, for the slow-consumer message.
func (q *queue) size() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}
