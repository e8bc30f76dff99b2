// Package lru is a bounded set of recently seen keys: the dedupe window the
// OTLP receiver keeps against exporter retries, the stream bridges keep
// against repeated event ids, and the relay keeps over the events it
// serves without buffering them.
package lru

import "container/list"

// Set holds at most Max keys; adding past the bound drops the least
// recently seen. It is not safe for concurrent use.
type Set[K comparable] struct {
	max int
	ll  *list.List // front = most recent
	m   map[K]*list.Element
}

// New returns a set of at most n keys (at least 1).
func New[K comparable](n int) *Set[K] {
	n = max(n, 1)
	return &Set[K]{max: n, ll: list.New(), m: make(map[K]*list.Element, min(n, 4096))}
}

// Add records key as the most recent and reports whether it was new.
func (s *Set[K]) Add(key K) bool {
	if e, ok := s.m[key]; ok {
		s.ll.MoveToFront(e)
		return false
	}
	s.m[key] = s.ll.PushFront(key)
	for s.ll.Len() > s.max {
		old := s.ll.Back()
		s.ll.Remove(old)
		delete(s.m, old.Value.(K))
	}
	return true
}

// Has reports whether key is held, without making it more recent.
func (s *Set[K]) Has(key K) bool {
	_, ok := s.m[key]
	return ok
}

// Remove forgets key.
func (s *Set[K]) Remove(key K) {
	if e, ok := s.m[key]; ok {
		s.ll.Remove(e)
		delete(s.m, key)
	}
}

// Len is the number of keys held.
func (s *Set[K]) Len() int { return s.ll.Len() }
