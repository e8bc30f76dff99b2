package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readAll collects every event and too-long report until the end.
func readAll(t testing.TB, r io.Reader, max int) (evs []Event, tooLong []int, err error) {
	rd := NewReader(r, max)
	for {
		ev, err := rd.Next()
		var tl *TooLongError
		switch {
		case errors.As(err, &tl):
			tooLong = append(tooLong, tl.Size)
		case errors.Is(err, io.EOF):
			return evs, tooLong, nil
		case err != nil:
			return evs, tooLong, err
		default:
			evs = append(evs, ev)
		}
	}
}

// feedAll pushes in to a fed Reader step bytes at a time.
func feedAll(in string, max, step int) (evs []Event, tooLong []int) {
	rd := NewReader(nil, max)
	emit := func(ev Event, err error) {
		if tl, ok := err.(*TooLongError); ok {
			tooLong = append(tooLong, tl.Size)
			return
		}
		evs = append(evs, ev)
	}
	for b := []byte(in); len(b) > 0; {
		k := min(step, len(b))
		rd.Feed(b[:k], emit)
		b = b[k:]
	}
	return evs, tooLong
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		want     []Event
		tooLong  []int
	}{
		{name: "data lines of the servers", in: "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n",
			want: []Event{{Data: []byte(`{"a":1}`)}, {Data: []byte(`{"b":2}`)}}},
		{name: "CRLF and CR line ends", in: "data: a\r\n\r\ndata: b\r\rdata: c\n\n",
			want: []Event{{Data: []byte("a")}, {Data: []byte("b")}, {Data: []byte("c")}}},
		{name: "multi-line data joins with LF", in: "data: one\ndata:two\ndata\n\n",
			want: []Event{{Data: []byte("one\ntwo\n")}}},
		{name: "empty data line dispatches an empty event", in: "data:\n\n",
			want: []Event{{Data: []byte{}}}},
		{name: "comments and unknown fields are ignored", in: ": ping\nfoo: bar\ndata: x\n\n:\n\n",
			want: []Event{{Data: []byte("x")}}},
		{name: "id persists, event and retry do not", in: "id: 7\nevent: up\nretry: 1500\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			want: []Event{{ID: "7", Name: "up", Retry: 1500 * time.Millisecond, Data: []byte("a")}, {ID: "7", Data: []byte("b")}, {Data: []byte("c")}}},
		{name: "an id with NUL is ignored", in: "id: a\x00b\ndata: x\n\n", want: []Event{{Data: []byte("x")}}},
		{name: "an event without data is not dispatched", in: "event: x\nid: 3\n\ndata: y\n\n",
			want: []Event{{ID: "3", Data: []byte("y")}}},
		{name: "leading byte-order mark", in: "\xEF\xBB\xBFdata: x\n\n", want: []Event{{Data: []byte("x")}}},
		{name: "an event cut by the end is dropped", in: "data: a\n\ndata: b\n", want: []Event{{Data: []byte("a")}}},
		{name: "over the limit by one line", in: "data: " + strings.Repeat("x", 20) + "\n\ndata: ok\n\n", max: 8,
			want: []Event{{Data: []byte("ok")}}, tooLong: []int{20}},
		{name: "over the limit by many lines", in: "data: 12345\ndata: 12345\ndata: 1\n\ndata: ok\n\n", max: 8,
			want: []Event{{Data: []byte("ok")}}, tooLong: []int{14}},
		{name: "a long comment is ignored", in: ": " + strings.Repeat("z", 100) + "\ndata: ok\n\n", max: 8,
			want: []Event{{Data: []byte("ok")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, src := range []struct {
				name string
				r    io.Reader
			}{{"whole", strings.NewReader(tc.in)}, {"byte by byte", iotest.OneByteReader(strings.NewReader(tc.in))}, {"fed byte by byte", nil}} {
				var evs []Event
				var tl []int
				var err error
				if src.r == nil {
					evs, tl = feedAll(tc.in, tc.max, 1)
				} else {
					evs, tl, err = readAll(t, src.r, tc.max)
				}
				if err != nil {
					t.Fatalf("%s: %v", src.name, err)
				}
				if !reflect.DeepEqual(evs, tc.want) {
					t.Errorf("%s: events\n got %q\nwant %q", src.name, evs, tc.want)
				}
				if !reflect.DeepEqual(tl, tc.tooLong) {
					t.Errorf("%s: too long %v, want %v", src.name, tl, tc.tooLong)
				}
			}
		})
	}
}

func TestReaderLastEventID(t *testing.T) {
	rd := NewReader(strings.NewReader("id: 1\ndata: a\n\nid: 2\ndata: b\n\n"), 0)
	for _, want := range []string{"1", "2"} {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
		if got := rd.LastEventID(); got != want {
			t.Fatalf("LastEventID %q, want %q", got, want)
		}
	}
}

func TestReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	rd := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	if ev, err := rd.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event %q, %v", ev.Data, err)
	}
	if _, err := rd.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the read error", err)
	}
}

func TestReaderBoundedMemory(t *testing.T) {
	// A 64 MiB data line against a 1 KiB limit: reported, never held.
	big := io.MultiReader(strings.NewReader("data: "), io.LimitReader(zeros{}, 64<<20), strings.NewReader("\n\ndata: ok\n\n"))
	evs, tl, err := readAll(t, big, 1<<10)
	if err != nil || len(evs) != 1 || string(evs[0].Data) != "ok" || len(tl) != 1 {
		t.Fatalf("events %q too long %v err %v", evs, tl, err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// ExampleReader reads the data of an OpenCode-style stream.
func ExampleReader() {
	rd := NewReader(strings.NewReader("data: {\"type\":\"server.connected\"}\n\n: keep-alive\n\n"), 0)
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		println(string(ev.Data))
	}
}

var _ = bytes.Equal
