package hook

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadAtMost: a payload of any size around the buffers' steps (the
// first heap buffer, the second, the mapped one) is read whole and in
// order, fed in one read or a byte at a time, and a longer one is cut at
// the bound.
func TestReadAtMost(t *testing.T) {
	for _, c := range []struct {
		size, limit int
	}{
		{0, 100}, {1, 100}, {firstRead - 1, 1 << 20}, {firstRead, 1 << 20}, {firstRead + 1, 1 << 20},
		{secondRead, 1 << 20}, {secondRead + 1, 1 << 20}, {3*secondRead + 17, 1 << 20},
		{firstRead + 5, firstRead + 1}, {secondRead + 5, secondRead}, {5000, 4096},
	} {
		src := make([]byte, c.size)
		for i := range src {
			src[i] = byte(i*7 + i>>8)
		}
		want := src[:min(c.size, c.limit)]
		for name, r := range map[string]io.Reader{
			"whole":     bytes.NewReader(src),
			"byte-wise": iotest.OneByteReader(bytes.NewReader(src)),
		} {
			if c.size > 20000 && name == "byte-wise" {
				r = iotest.HalfReader(bytes.NewReader(src))
			}
			got, err := readAtMost(r, int64(c.limit))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("size %d limit %d, %s: read %d bytes (%v), want the first %d", c.size, c.limit, name, len(got), err, len(want))
			}
		}
	}
}
