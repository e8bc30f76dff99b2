package relay

import (
	"testing"
)

// TestQueueBound: the queue holds items up to its bound in bytes, always
// takes an item into an empty queue (one large event never cuts a reader
// that keeps up), gives the bytes back as items are popped, and hands
// them out in order.
func TestQueueBound(t *testing.T) {
	frame := func(n int) item { return item{frame: make([]byte, n)} }
	it := frame(100)
	one := it.cost()
	tests := []struct {
		name string
		max  int64
		puts []int  // frame sizes
		want []bool // put's answers
	}{
		{"within the bound", 3 * one, []int{100, 100, 100}, []bool{true, true, true}},
		{"past the bound", 2 * one, []int{100, 100, 100}, []bool{true, true, false}},
		{"alone, larger than the bound", 10, []int{1 << 20}, []bool{true}},
		{"behind a large one", 10, []int{1 << 20, 1}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue(tt.max)
			for i, n := range tt.puts {
				if got := q.put(frame(n)); got != tt.want[i] {
					t.Fatalf("put %d (%d bytes) = %v, want %v", i, n, got, tt.want[i])
				}
			}
			for i, n := range tt.puts {
				if !tt.want[i] {
					continue
				}
				it, ok := q.pop()
				if !ok || len(it.frame) != n {
					t.Fatalf("pop %d: %d bytes %v, want %d", i, len(it.frame), ok, n)
				}
			}
			if _, ok := q.pop(); ok {
				t.Fatal("popped from an empty queue")
			}
			if q.size() != 0 {
				t.Fatalf("%d bytes held after draining", q.size())
			}
			// Drained, it takes as much again.
			if !q.put(frame(tt.puts[0])) {
				t.Fatal("a drained queue refused")
			}
		})
	}
}

// TestQueueReady: every put leaves a token for the writer, and one token
// stands for any number of waiting items.
func TestQueueReady(t *testing.T) {
	q := newQueue(1 << 20)
	for range 5 {
		q.put(item{frame: []byte("x")})
	}
	select {
	case <-q.ready:
	default:
		t.Fatal("no token after put")
	}
	n := 0
	for _, ok := q.pop(); ok; _, ok = q.pop() {
		n++
	}
	if n != 5 {
		t.Fatalf("popped %d, want 5", n)
	}
	select {
	case <-q.ready:
		t.Fatal("a second token for one drain")
	default:
	}
}
