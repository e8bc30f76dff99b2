package shim

import (
	"crypto/rand"
	"testing"
	"time"

	oklog "github.com/oklog/ulid/v2"
)

// TestULIDMatchesLibrary holds the hand-written ULID to the reference
// library: the same bits give the same string, and the library parses what
// IDs mints back to the time it was minted for.
func TestULIDMatchesLibrary(t *testing.T) {
	for i := 0; i < 1000; i++ {
		var u ulid
		rand.Read(u[:])
		if i == 0 {
			u = ulid{}
		}
		if i == 1 {
			for k := range u {
				u[k] = 0xff
			}
		}
		if got, want := u.String(), oklog.ULID(u).String(); got != want {
			t.Fatalf("%x: %s, library %s", u[:], got, want)
		}
	}
	at := time.Date(2026, 7, 1, 12, 0, 0, 123e6, time.UTC)
	id, err := oklog.Parse(NewIDs().New(at))
	if err != nil || id.Time() != uint64(at.UnixMilli()) {
		t.Fatalf("parsed %v, %v; want time %d", id, err, at.UnixMilli())
	}
}

// TestIDsIncrease: ids of one millisecond increase strictly, across the
// entropy's carry and its overflow too.
func TestIDsIncrease(t *testing.T) {
	at := time.UnixMilli(1752200000000)
	g := NewIDs()
	prev := g.New(at)
	for i := 0; i < 10000; i++ {
		id := g.New(at)
		if id <= prev {
			t.Fatalf("%s after %s", id, prev)
		}
		prev = id
	}
	var m monotonic
	m.next(5)
	for k := 6; k < 16; k++ {
		m.last[k] = 0xff
	}
	before := m.last
	if m.add(1) {
		t.Fatal("add past the 80-bit maximum reported no overflow")
	}
	if m.last != before {
		t.Fatal("a refused add changed the entropy")
	}
	m.last[6] = 0
	if !m.add(1) || m.last[6] != 1 || m.last[15] != 0 {
		t.Fatalf("carry: %x", m.last[:])
	}
}

// TestEntropyReadAhead: the read-ahead hands out each byte once, across
// refills and requests of either size.
func TestEntropyReadAhead(t *testing.T) {
	var m monotonic
	seen := map[[10]byte]bool{}
	for i := range 1000 {
		var b [10]byte
		n := 4 + 6*(i%2)
		m.entropy(b[:n])
		if n == 10 {
			if seen[b] {
				t.Fatalf("draw %d repeats %x", i, b)
			}
			seen[b] = true
		}
		if m.used > len(m.ahead) {
			t.Fatalf("used %d past the read-ahead", m.used)
		}
	}
}

// TestOSRandom checks the entropy source fills every size it is asked for:
// two draws of the same size differ, and no draw of 16 bytes or more is
// left zero (a short read would leave its tail so).
func TestOSRandom(t *testing.T) {
	for _, n := range []int{1, 4, 10, 16, 64, 256, 300} {
		a, b := make([]byte, n), make([]byte, n)
		osRandom(a)
		osRandom(b)
		if n >= 16 && string(a) == string(b) {
			t.Errorf("%d bytes: two draws are equal: %x", n, a)
		}
		if n >= 16 && string(a[n-16:]) == string(make([]byte, 16)) {
			t.Errorf("%d bytes: the tail is zero: %x", n, a)
		}
	}
}
