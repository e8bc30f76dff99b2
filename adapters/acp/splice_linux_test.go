package acp

import (
	"bytes"
	"errors"
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

// TestSplicedDropsCounted relays through a queue of about two pieces'
// lines that nothing takes from: nothing of
// the stream is lost, every line the queue could not take is counted, on
// the relay's direction, and so is every byte relayed unread once the
// queue was full (their lines, of a known length here, are what is
// missing from the count, give or take the line each unread span began or
// ended inside).
func TestSplicedDropsCounted(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n")
	const total = 5000
	in := bytes.Repeat(line, total)
	sr, sw := pipePair(t, false)
	dr, dw := pipePair(t, false)
	defer sr.Close()
	defer dr.Close()
	go func() { sw.Write(in); sw.Close() }()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(dr); got <- b }()
	st := &Stats{}
	q := newQueue(2*pieceSize/len(line)+1, 1<<30)
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
	seen, lost, unread := int64(len(o.lines)), st.Dropped.Load(), st.Unread[AgentToClient].Load()
	if lost+unread == 0 {
		t.Fatal("nothing dropped or unread through a queue of two pieces")
	}
	if r.unread == 0 || unread == 0 {
		t.Errorf("%d spans (%d bytes) relayed unread: the full queue should have been passed by", r.unread, unread)
	}
	missing := total - seen - lost - unread/int64(len(line))
	if slack := int64(r.unread) + 1; missing < -slack || missing > slack {
		t.Errorf("observed %d + dropped %d lines + %d bytes unread (%d lines): %d of %d unaccounted",
			seen, lost, unread, unread/int64(len(line)), missing, total)
	}
	if st.DroppedBy[AgentToClient].Load() != st.Dropped.Load() || st.DroppedBy[ClientToAgent].Load() != 0 || st.Unread[ClientToAgent].Load() != 0 {
		t.Errorf("drops by direction %d/%d of %d, unread %d/%d", st.DroppedBy[0].Load(), st.DroppedBy[1].Load(), st.Dropped.Load(),
			st.Unread[0].Load(), st.Unread[1].Load())
	}
	if st.Bytes[AgentToClient].Load() != int64(len(in)) {
		t.Errorf("Bytes %d, want %d", st.Bytes[AgentToClient].Load(), len(in))
	}
}

// FuzzSplicedRelay relays arbitrary bytes, written in arbitrary pieces,
// pipe to pipe through the spliced path while an observer takes the queue:
// the destination gets them byte for byte, what the observer frames plus
// what was dropped is at most every newline of the input, and with a
// queue too small for the input (so that stretches are relayed unread)
// every framed line is one of the input's, whole, in order.
func FuzzSplicedRelay(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint16(3), false)
	f.Add([]byte("no newline"), uint16(1), true)
	f.Add(bytes.Repeat([]byte("x\n"), 3*pieceSize/4), uint16(7919), true)
	f.Fuzz(func(t *testing.T, in []byte, piece uint16, tight bool) {
		// Each execution costs a few pipes and a round through the kernel
		// per write, and the fuzzer runs a new interesting input again for
		// every byte it tries to remove: unbounded, mutants of a large
		// seed kept it minimizing (no new executions) for longer than a
		// make fuzz run lasts. Two pieces' worth, in at most 32 writes,
		// reaches every branch of the relay.
		if len(in) > 2*pieceSize {
			in = in[:2*pieceSize]
		}
		piece = max(piece, uint16(min(len(in)/32, 1<<15)))
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
		// Room for all, with the eighth the relay keeps free to spare.
		q := newQueue(2*len(in)+16, 1<<40)
		if tight {
			q = newQueue(2, 1<<40)
		}
		r := &relay{src: sr, dst: dw, q: q, max: 1 << 30, stats: st}
		// The observer's framing, concurrently, as the tee runs it; the
		// lines are copied out since their chunks go back to the pool.
		o := &observer{q: q, stats: st, maxLine: 1 << 30}
		var framed [][]byte
		stop, done := make(chan struct{}), make(chan struct{})
		take := func(it item) {
			o.frame(it)
			for _, l := range o.lines {
				framed = append(framed, bytes.Clone(l.b))
			}
			o.lines = o.lines[:0]
			q.taken(it)
		}
		go func() {
			defer close(done)
			for {
				select {
				case it := <-q.ch:
					take(it)
				case <-stop:
					for len(q.ch) > 0 {
						take(<-q.ch)
					}
					return
				}
			}
		}()
		handled, err := r.spliced()
		dw.Close()
		close(stop)
		<-done
		if !handled || err != nil {
			t.Fatalf("spliced: handled %v, err %v", handled, err)
		}
		if out := <-got; !bytes.Equal(out, in) {
			t.Fatalf("relayed %d bytes, not the %d sent", len(out), len(in))
		}
		// Blank lines are not observed lines; count only the others.
		nl := int64(bytes.Count(in, []byte{'\n'}))
		if n := st.Lines.Load(); n+st.Dropped.Load() > nl+1 {
			t.Fatalf("framed %d + dropped %d lines of %d newlines", n, st.Dropped.Load(), nl)
		}
		if st.Unread[ClientToAgent].Load() > int64(len(in)) {
			t.Fatalf("%d bytes unread of %d", st.Unread[ClientToAgent].Load(), len(in))
		}
		if !tight {
			if st.Dropped.Load() != 0 || st.Unread[ClientToAgent].Load() != 0 {
				t.Fatalf("dropped %d lines, %d bytes unread, with room for all", st.Dropped.Load(), st.Unread[ClientToAgent].Load())
			}
			return
		}
		var want [][]byte
		for _, l := range bytes.Split(in, []byte{'\n'}) {
			l = bytes.TrimSuffix(l, []byte{'\r'})
			if len(bytes.TrimSpace(l)) > 0 {
				want = append(want, l)
			}
		}
		k := 0
		for _, g := range framed {
			for k < len(want) && !bytes.Equal(want[k], g) {
				k++
			}
			if k == len(want) {
				t.Fatalf("framed %q, which was not sent whole in that order", g)
			}
			k++
		}
	})
}

// TestSplicedHalt: a spliced relay waiting on the agent's end of its pipes
// (for room in the agent's stdin, which the agent does not read; for the
// agent's stdout, which it holds open and does not write) ends when the
// end's halt fires, with errHalted, and that end then closes at once:
// closing a file waits for the calls using it, and those waits would
// otherwise never end. Either end's blocking mode, and either the read or
// the unread path, must not matter.
func TestSplicedHalt(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n")
	for _, blocking := range []bool{false, true} {
		for _, tight := range []bool{false, true} {
			name := fmt.Sprintf("blocking=%v,tight=%v", blocking, tight)
			t.Run("to-agent/"+name, func(t *testing.T) {
				sr, sw := pipePair(t, blocking)
				dr, dw := pipePair(t, blocking) // the agent's stdin, never read
				defer sr.Close()
				defer sw.Close()
				defer dr.Close()
				// More than the grown pipes hold: the relay ends up waiting
				// for room in dw. The writer may stay blocked: sw is closed
				// at the end, which its peer sr is too.
				go sw.Write(bytes.Repeat(line, 3*pipeSize/len(line)))
				r := spliceUntilHalted(t, ClientToAgent, sr, dw, tight)
				if n := r.stats.Bytes[ClientToAgent].Load(); n == 0 {
					t.Errorf("relayed %d bytes before waiting", n)
				}
			})
			t.Run("from-agent/"+name, func(t *testing.T) {
				sr, sw := pipePair(t, blocking) // the agent's stdout, open and silent
				dr, dw := pipePair(t, blocking)
				defer sw.Close()
				defer dr.Close()
				defer dw.Close()
				if _, err := sw.Write(line); err != nil {
					t.Fatal(err)
				}
				spliceUntilHalted(t, AgentToClient, sr, dw, tight)
				got := make([]byte, len(line))
				if _, err := io.ReadFull(dr, got); err != nil || !bytes.Equal(got, line) {
					t.Errorf("relayed %q, %v; want the line written", got, err)
				}
			})
		}
	}
}

// TestSplicedHaltWhileWriting: after a message, the next stride is read
// and written (on a non-blocking agent's end) or teed and spliced (on a
// blocking one); either way, a relay waiting for room in the agent's stdin
// after it observed that stride ends when the halt fires, having relayed
// only what fit.
func TestSplicedHaltWhileWriting(t *testing.T) {
	first := []byte(`{"jsonrpc":"2.0","method":"session/new","params":{}}` + "\n")
	second := []byte(`{"jsonrpc":"2.0","method":"session/prompt","params":{}}` + "\n")
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprintf("dst-blocking=%v", blocking), func(t *testing.T) {
			sr, sw := pipePair(t, false)
			dr, dw := pipePair(t, blocking) // the agent's stdin
			defer sr.Close()
			defer sw.Close()
			defer dr.Close()
			q := newQueue(1<<20, 1<<30)
			r := &relay{dir: ClientToAgent, src: sr, dst: dw, q: q, max: 1 << 20, stats: &Stats{}, halt: newHalt()}
			done := make(chan error, 1)
			go func() { done <- r.run() }()
			if _, err := sw.Write(first); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(first))
			if _, err := io.ReadFull(dr, got); err != nil || !bytes.Equal(got, first) {
				t.Fatalf("relayed %q, %v; want the first message", got, err)
			}
			// The agent stops reading: fill its stdin, then send the next.
			fillPipe(t, dw)
			if _, err := sw.Write(second); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				<-q.ch // the second is observed, so read: the relay now writes
			}
			r.halt.fire()
			if err := <-done; !errors.Is(err, errHalted) {
				t.Fatalf("relay ended with %v, want errHalted", err)
			}
			if n := r.stats.Bytes[ClientToAgent].Load(); n != int64(len(first)) {
				t.Errorf("Bytes %d, want the first message's %d", n, len(first))
			}
			if err := dw.Close(); err != nil {
				t.Fatalf("closing the agent's end: %v", err)
			}
		})
	}
}

// fillPipe writes to w until its pipe is full, without blocking (a
// blocking end is made non-blocking for the while).
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			t.Errorf("flags: %v", err)
			return
		}
		unix.FcntlInt(fd, unix.F_SETFL, flags|unix.O_NONBLOCK)
		defer unix.FcntlInt(fd, unix.F_SETFL, flags)
		for {
			_, err := unix.Write(int(fd), chunk)
			if err == nil {
				continue
			}
			if err == unix.EAGAIN {
				return
			}
			if err != unix.EINTR {
				t.Errorf("filling the pipe: %v", err)
				return
			}
		}
	})
}

// spliceUntilHalted runs a spliced relay of direction dir from src to dst,
// with a queue that has room for all or for nothing (tight), fires its
// halt, and requires the relay to end with errHalted and the agent's end
// (dst to the agent, src from it) to close; a relay that does not end
// fails the test by its timeout.
func spliceUntilHalted(t *testing.T, dir Direction, src, dst *os.File, tight bool) *relay {
	t.Helper()
	q := newQueue(1<<20, 1<<30)
	if tight {
		q = newQueue(1, 1<<30)
	}
	r := &relay{dir: dir, src: src, dst: dst, q: q, max: 1 << 20, stats: &Stats{}, halt: newHalt()}
	done := make(chan error, 1)
	go func() { done <- r.run() }()
	// Firing before the relay waits must end it just the same: a fired
	// halt stays fired.
	r.halt.fire()
	if err := <-done; !errors.Is(err, errHalted) {
		t.Fatalf("relay ended with %v, want errHalted", err)
	}
	end := dst
	if dir == AgentToClient {
		end = src
	}
	if err := end.Close(); err != nil {
		t.Fatalf("closing the agent's end: %v", err)
	}
	return r
}
