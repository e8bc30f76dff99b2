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
