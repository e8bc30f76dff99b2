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
