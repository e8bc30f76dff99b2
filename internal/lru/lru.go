// Package lru is a bounded set of recently seen keys: the dedupe window the
// OTLP receiver keeps against exporter retries, the stream bridges keep
// against repeated event ids, and the relay keeps over the events it
// serves without buffering them.
package lru

// Set holds at most Max keys; adding past the bound drops the least
// recently seen. It is not safe for concurrent use.
//
// The recency list is threaded through one slice of nodes by index, not
// built of list elements: a key added costs no allocation of its own (a
// receiver adds one per record), and a dropped key's node is reused by the
// next.
type Set[K comparable] struct {
	max   int
	m     map[K]int // key → its node
	nodes []node[K]
	// head is the most recent node, tail the least; free is the first of
	// the nodes removed keys left (chained by next). -1 for none.
	head, tail, free int
}

type node[K comparable] struct {
	key        K
	prev, next int
}

// New returns a set of at most n keys (at least 1).
func New[K comparable](n int) *Set[K] {
	n = max(n, 1)
	return &Set[K]{max: n, m: make(map[K]int, min(n, 4096)), head: -1, tail: -1, free: -1}
}

// Add records key as the most recent and reports whether it was new.
func (s *Set[K]) Add(key K) bool {
	if i, ok := s.m[key]; ok {
		s.unlink(i)
		s.pushFront(i)
		return false
	}
	var i int
	switch {
	case len(s.m) >= s.max: // full: the least recent node takes the key
		i = s.tail
		s.unlink(i)
		delete(s.m, s.nodes[i].key)
	case s.free >= 0:
		i, s.free = s.free, s.nodes[s.free].next
	default:
		if len(s.nodes) == cap(s.nodes) {
			// Grown by doubling, never past the bound.
			grown := make([]node[K], len(s.nodes), min(s.max, max(16, 2*cap(s.nodes))))
			copy(grown, s.nodes)
			s.nodes = grown
		}
		s.nodes = s.nodes[:len(s.nodes)+1]
		i = len(s.nodes) - 1
	}
	s.nodes[i].key = key
	s.m[key] = i
	s.pushFront(i)
	return true
}

// Has reports whether key is held, without making it more recent.
func (s *Set[K]) Has(key K) bool {
	_, ok := s.m[key]
	return ok
}

// Remove forgets key.
func (s *Set[K]) Remove(key K) {
	i, ok := s.m[key]
	if !ok {
		return
	}
	s.unlink(i)
	delete(s.m, key)
	var zero K
	s.nodes[i] = node[K]{key: zero, prev: -1, next: s.free}
	s.free = i
}

// Len is the number of keys held.
func (s *Set[K]) Len() int { return len(s.m) }

// unlink takes node i out of the recency list.
func (s *Set[K]) unlink(i int) {
	n := &s.nodes[i]
	if n.prev >= 0 {
		s.nodes[n.prev].next = n.next
	} else {
		s.head = n.next
	}
	if n.next >= 0 {
		s.nodes[n.next].prev = n.prev
	} else {
		s.tail = n.prev
	}
	n.prev, n.next = -1, -1
}

// pushFront makes node i the most recent.
func (s *Set[K]) pushFront(i int) {
	n := &s.nodes[i]
	n.prev, n.next = -1, s.head
	if s.head >= 0 {
		s.nodes[s.head].prev = i
	} else {
		s.tail = i
	}
	s.head = i
}
