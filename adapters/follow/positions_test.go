package follow

import "testing"

func TestPositions(t *testing.T) {
	var p Positions[int]
	p.Max = 2
	p.Set("a", 1)
	p.Set("b", 2)
	p.Set("a", 3) // a moved last
	p.Set("c", 4)
	if got := p.Cursor(); got != `{"a":3,"c":4}` {
		t.Fatalf("cursor %s: want the two most recently moved", got)
	}
	if _, ok := p.Get("b"); ok {
		t.Error("b outlived the bound")
	}
	var q Positions[int]
	q.Load(p.Cursor())
	q.Load(`not json`)
	if v, ok := q.Get("c"); !ok || v != 4 || len(q.Keys()) != 2 {
		t.Errorf("loaded %v: want a and c", q.Keys())
	}
}
