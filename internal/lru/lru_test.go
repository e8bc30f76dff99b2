package lru

import "testing"

func TestSet(t *testing.T) {
	s := New[string](2)
	for _, step := range []struct {
		key string
		new bool
	}{{"a", true}, {"b", true}, {"a", false}, {"c", true}, {"b", true}, {"c", false}} {
		if got := s.Add(step.key); got != step.new {
			t.Fatalf("Add(%q) = %v, want %v", step.key, got, step.new)
		}
	}
	s.Remove("c")
	if s.Len() != 1 || !s.Add("c") {
		t.Fatalf("after Remove: len %d", s.Len())
	}
}

func TestHas(t *testing.T) {
	s := New[string](2)
	s.Add("a")
	s.Add("b")
	if !s.Has("a") || s.Has("c") {
		t.Fatal("Has")
	}
	s.Add("c") // Has did not refresh a: a is the one dropped
	if s.Has("a") || !s.Has("b") {
		t.Error("Has refreshed recency")
	}
}

// TestSetMatchesList drives the set and a plain recency list with the same
// random adds and removes: the same answers, the same keys held.
func TestSetMatchesList(t *testing.T) {
	for _, max := range []int{1, 2, 3, 7, 40} {
		s := New[int](max)
		var ref []int // front = most recent
		find := func(k int) int {
			for i, x := range ref {
				if x == k {
					return i
				}
			}
			return -1
		}
		seed := uint32(max)
		for step := 0; step < 5000; step++ {
			seed = seed*1664525 + 1013904223
			k := int(seed>>16) % (2*max + 3)
			if seed&3 == 0 {
				s.Remove(k)
				if i := find(k); i >= 0 {
					ref = append(ref[:i], ref[i+1:]...)
				}
			} else {
				i := find(k)
				if got := s.Add(k); got != (i < 0) {
					t.Fatalf("max %d step %d: Add(%d) = %v", max, step, k, got)
				}
				if i >= 0 {
					ref = append(ref[:i], ref[i+1:]...)
				}
				ref = append([]int{k}, ref...)
				if len(ref) > max {
					ref = ref[:max]
				}
			}
			if s.Len() != len(ref) {
				t.Fatalf("max %d step %d: len %d, want %d", max, step, s.Len(), len(ref))
			}
			for _, x := range ref {
				if !s.Has(x) {
					t.Fatalf("max %d step %d: %d dropped", max, step, x)
				}
			}
		}
		if cap(s.nodes) > max {
			t.Fatalf("max %d: %d nodes allocated", max, cap(s.nodes))
		}
	}
}

func TestAddAllocatesNothing(t *testing.T) {
	s := New[[16]byte](64)
	var k [16]byte
	n := 0
	if a := testing.AllocsPerRun(1000, func() {
		n++
		k[0], k[1] = byte(n), byte(n>>8)
		s.Add(k)
	}); a != 0 {
		t.Errorf("Add allocates %v times", a)
	}
}
