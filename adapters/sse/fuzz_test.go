package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds arbitrary streams: the reader never panics, keeps no
// event over its limit, and reads the same events however the bytes are
// split into reads, and whether they are pulled (Next) or pushed (Feed).
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"type\":\"server.connected\",\"properties\":{}}\n\n",
		"data: a\r\ndata: b\r\rid: 1\revent: x\n\n",
		"\xEF\xBB\xBFretry: 10\ndata\n\n:c\n\n",
		"data: " + strings.Repeat("x", 70) + "\n\n",
		"id: \x00\ndata:\n\n",
	} {
		f.Add(s, 16, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, max int, step uint8) {
		if max < 1 || max > 1<<16 {
			max = 64
		}
		whole, wl, err := readAll(t, strings.NewReader(in), max)
		if err != nil {
			t.Fatal(err)
		}
		split, sl, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)), max)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(whole, split) || !reflect.DeepEqual(wl, sl) {
			t.Fatalf("split reads differ:\n whole %q %v\n split %q %v", whole, wl, split, sl)
		}
		if fed, fl := feedAll(in, max, int(step)+1); !reflect.DeepEqual(whole, fed) || !reflect.DeepEqual(wl, fl) {
			t.Fatalf("fed differs:\n whole %q %v\n fed %q %v", whole, wl, fed, fl)
		}
		for _, ev := range whole {
			if len(ev.Data) > max {
				t.Fatalf("event of %d bytes over the limit %d", len(ev.Data), max)
			}
		}
	})
}
