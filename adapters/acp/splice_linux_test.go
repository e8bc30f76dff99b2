package acp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// pipePair returns a pipe's ends, in blocking mode (as an inherited stdin
// usually is: Go's poller does not wait on it) or as os.Pipe makes them.
func pipePair(t *testing.T, blocking bool) (r, w *os.File) {
	t.Helper()
	if !blocking {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
}

// TestSplicedRelay relays a multi-read stream pipe to pipe, for each mix
// of blocking and non-blocking ends: the destination gets the stream byte
// for byte, the spliced path carried it, and the observer frames every
// line of it.
func TestSplicedRelay(t *testing.T) {
	var in bytes.Buffer
	for i := 0; in.Len() < 3*readSize+123; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"session/update","params":{"n":%d,"pad":"%s"}}`+"\n", i, bytes.Repeat([]byte{'x'}, i%700))
	}
	in.WriteString(`{"last":"no newline"}`)
	want := bytes.Count(in.Bytes(), []byte{'\n'}) + 1
	for _, tc := range []struct{ srcBlocking, dstBlocking bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("src-blocking=%v,dst-blocking=%v", tc.srcBlocking, tc.dstBlocking), func(t *testing.T) {
			sr, sw := pipePair(t, tc.srcBlocking)
			dr, dw := pipePair(t, tc.dstBlocking)
			defer sr.Close()
			defer dr.Close()
			go func() {
				// Odd-sized writes, so reads end inside lines.
				for b := in.Bytes(); len(b) > 0; {
					n := min(len(b), 7919)
					sw.Write(b[:n])
					b = b[n:]
				}
				sw.Close()
			}()
			got := make(chan []byte)
			go func() { b, _ := io.ReadAll(dr); got <- b }()
			st := &Stats{}
			q := newQueue(1<<20, 1<<30)
			r := &relay{src: sr, dst: dw, q: q, max: 1 << 20, stats: st}
			handled, err := r.spliced()
			dw.Close()
			if !handled || err != nil {
				t.Fatalf("spliced: handled %v, err %v", handled, err)
			}
			if out := <-got; !bytes.Equal(out, in.Bytes()) {
				t.Fatalf("relayed %d bytes, not the %d sent", len(out), in.Len())
			}
			if n := st.Bytes[ClientToAgent].Load(); n != int64(in.Len()) {
				t.Errorf("Bytes %d, want %d", n, in.Len())
			}
			o := &observer{q: q, stats: st, maxLine: 1 << 20}
			for len(q.ch) > 0 {
				it := <-q.ch
				o.frame(it)
				q.taken(it)
			}
			if len(o.lines) != want || st.Dropped.Load() != 0 {
				t.Errorf("framed %d lines (dropped %d), want %d", len(o.lines), st.Dropped.Load(), want)
			}
			if q.bytes.Load() != 0 || q.lines.Load() != 0 {
				t.Errorf("queue holds %d bytes, %d lines after all was taken", q.bytes.Load(), q.lines.Load())
			}
		})
	}
}

// TestSplicedDropsCounted relays through a queue of two lines: nothing of
// the stream is lost, and every line the queue could not take is counted,
// on the relay's direction.
func TestSplicedDropsCounted(t *testing.T) {
	in := bytes.Repeat([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`+"\n"), 5000)
	sr, sw := pipePair(t, false)
	dr, dw := pipePair(t, false)
	defer sr.Close()
	defer dr.Close()
	go func() { sw.Write(in); sw.Close() }()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(dr); got <- b }()
	st := &Stats{}
	q := newQueue(2, 1<<30)
	r := &relay{dir: AgentToClient, src: sr, dst: dw, q: q, max: 1 << 20, stats: st}
	if handled, err := r.spliced(); !handled || err != nil {
		t.Fatalf("spliced: handled %v, err %v", handled, err)
	}
	dw.Close()
	if out := <-got; !bytes.Equal(out, in) {
		t.Fatal("the stream was altered")
	}
	o := &observer{q: q, stats: st, maxLine: 1 << 20}
	for len(q.ch) > 0 {
		it := <-q.ch
		o.frame(it)
		q.taken(it)
	}
	if seen, lost := int64(len(o.lines)), st.Dropped.Load(); seen+lost != 5000 || lost == 0 {
		t.Errorf("observed %d + dropped %d lines, want 5000 with some dropped", seen, lost)
	}
	if st.DroppedBy[AgentToClient].Load() != st.Dropped.Load() || st.DroppedBy[ClientToAgent].Load() != 0 {
		t.Errorf("drops by direction %d/%d of %d", st.DroppedBy[0].Load(), st.DroppedBy[1].Load(), st.Dropped.Load())
	}
}

// FuzzSplicedRelay relays arbitrary bytes, written in arbitrary pieces,
// pipe to pipe through the spliced path: the destination gets them byte
// for byte, and what the observer frames plus what was dropped is every
// newline of the input.
func FuzzSplicedRelay(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint16(3), false)
	f.Add([]byte("no newline"), uint16(1), true)
	f.Add(bytes.Repeat([]byte("x\n"), 40000), uint16(7919), true)
	f.Fuzz(func(t *testing.T, in []byte, piece uint16, tight bool) {
		// At most a few hundred writes: each is a round through the
		// kernel, and the fuzzer's time is better spent on more inputs.
		piece = max(piece, uint16(min(len(in)/256, 1<<15)))
		sr, sw := pipePair(t, false)
		dr, dw := pipePair(t, false)
		defer sr.Close()
		defer dr.Close()
		go func() {
			for b := in; len(b) > 0; {
				n := min(len(b), int(piece)+1)
				sw.Write(b[:n])
				b = b[n:]
			}
			sw.Close()
		}()
		got := make(chan []byte)
		go func() { b, _ := io.ReadAll(dr); got <- b }()
		st := &Stats{}
		q := newQueue(len(in)+2, 1<<40) // a chunk is at least a byte
		if tight {
			q = newQueue(2, 1<<40)
		}
		r := &relay{src: sr, dst: dw, q: q, max: 1 << 30, stats: st}
		handled, err := r.spliced()
		dw.Close()
		if !handled || err != nil {
			t.Fatalf("spliced: handled %v, err %v", handled, err)
		}
		if out := <-got; !bytes.Equal(out, in) {
			t.Fatalf("relayed %d bytes, not the %d sent", len(out), len(in))
		}
		o := &observer{q: q, stats: st, maxLine: 1 << 30}
		for len(q.ch) > 0 {
			it := <-q.ch
			o.frame(it)
			q.taken(it)
		}
		// Blank lines are not observed lines; count only the others.
		framed := int64(st.Lines.Load())
		nl := int64(bytes.Count(in, []byte{'\n'}))
		if framed+st.Dropped.Load() > nl+1 {
			t.Fatalf("framed %d + dropped %d lines of %d newlines", framed, st.Dropped.Load(), nl)
		}
		if !tight && st.Dropped.Load() != 0 {
			t.Fatalf("dropped %d with room for all", st.Dropped.Load())
		}
	})
}
