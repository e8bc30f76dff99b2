package redact

import (
	"reflect"
	"slices"
	"testing"
)

// TestSortByPairIsStable: the index's radix sort orders the real rules'
// keywords exactly as a stable sort by their first two bytes does.
func TestSortByPairIsStable(t *testing.T) {
	var es []kwEntry
	for ri, r := range rules() {
		for _, kw := range r.keywords {
			es = append(es, kwEntry{kw: kw, rule: ri})
		}
	}
	es = append(es, kwEntry{kw: "\xff\x00", rule: -1}, kwEntry{kw: "\x00\xff", rule: -2}, kwEntry{kw: "aa", rule: -3})
	want := slices.Clone(es)
	slices.SortStableFunc(want, func(a, b kwEntry) int { return int(pairOf(a.kw)) - int(pairOf(b.kw)) })
	if got := sortByPair(slices.Clone(es)); !reflect.DeepEqual(got, want) {
		t.Error("radix order differs from the stable sort's")
	}
}
