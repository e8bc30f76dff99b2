package follow

import "container/list"

// Window is a bounded set of recently seen keys: the oldest key falls out
// when a new one would pass the bound. The zero value is not usable; see
// NewWindow. It is not safe for concurrent use.
type Window struct {
	max int
	ll  *list.List // front = most recent
	m   map[string]*list.Element
}

// NewWindow returns a window of at most max keys (at least 1).
func NewWindow(max int) *Window {
	max = maxOf(max, 1)
	return &Window{max: max, ll: list.New(), m: make(map[string]*list.Element, min(max, 4096))}
}

// Add records key and reports whether it was new.
func (w *Window) Add(key string) bool {
	if e, ok := w.m[key]; ok {
		w.ll.MoveToFront(e)
		return false
	}
	w.m[key] = w.ll.PushFront(key)
	for w.ll.Len() > w.max {
		old := w.ll.Back()
		w.ll.Remove(old)
		delete(w.m, old.Value.(string))
	}
	return true
}

// Remove forgets key (its handling failed: a later delivery may retry it).
func (w *Window) Remove(key string) {
	if e, ok := w.m[key]; ok {
		w.ll.Remove(e)
		delete(w.m, key)
	}
}

// Len is the number of keys held.
func (w *Window) Len() int { return w.ll.Len() }

func maxOf(a, b int) int { return max(a, b) }
