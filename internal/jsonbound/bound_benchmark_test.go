package jsonbound

import (
	"strings"
	"testing"
)

func benchBound(b *testing.B, raw []byte) {
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, _, err := Bound(raw, false, DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBound16MiB bounds a PostToolUse whose output is 16 MiB.
func BenchmarkBound16MiB(b *testing.B) {
	benchBound(b, post(`{"command":"cat"}`, `{"stdout":"`+strings.Repeat("x", 16<<20)+`"}`))
}

// BenchmarkBoundDeep bounds a tool input nested 30,000 deep.
func BenchmarkBoundDeep(b *testing.B) {
	benchBound(b, post(strings.Repeat(`{"a":`, 30000)+"1"+strings.Repeat("}", 30000), `{}`))
}

// BenchmarkDigestObjects digests 1 MiB of small objects with unsorted keys.
func BenchmarkDigestObjects(b *testing.B) {
	raw := []byte("[" + strings.Repeat(`{"b":1,"a":"x","c":[1,2]},`, 40000) + "0]")
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		Digest(raw)
	}
}

// BenchmarkDigestObjectsBaseline is the decoding way over the same bytes.
func BenchmarkDigestObjectsBaseline(b *testing.B) {
	raw := []byte("[" + strings.Repeat(`{"b":1,"a":"x","c":[1,2]},`, 40000) + "0]")
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		refDigest(raw)
	}
}
