package acp

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// spliced relays a pipe to a pipe without carrying the stream through the
// tee's memory: tee(2) duplicates what the source pipe holds into a side
// pipe, the side pipe is read into the observer's buffer, and splice(2)
// moves the same bytes on to the destination. The stream reaches the peer
// byte for byte as it arrived, in the same order, and is never held up by
// observation: the side pipe is emptied before the next tee, so it is never
// full. handled is false, having relayed nothing, when either end is not a
// pipe or the kernel refuses tee on it; run then copies as before.
//
// When the queue is nearly full (a burst the observer cannot keep up
// with), a stride is spliced from the source straight to the destination
// unread instead: reading it would only count lines the queue must refuse,
// and copying a burst to count it was a third of the relay's cost. Those
// bytes are counted (Stats.Unread), their lines are not.
//
// Every pipe on the way is grown first (growPipe): at the default 64 KiB
// a burst crosses the tee in 64 KiB strides, each one a wake-up of the
// writer, the tee and the reader in turn, and on a busy machine those
// hand-offs, not the bytes, are what the tee costs. For the same reason the
// relay waits for its pipes by poll(2) (see splicer), never Go's poller.
//
// A stride that follows a short one (the source held less than a stride:
// a message, not a burst) is read and written instead: the
// observer needs its bytes in memory anyway, and for a message's few
// hundred bytes the copy back costs nothing. What it gains is the peer's
// wake-up: write(2) wakes a pipe's reader with the kernel's hint that the
// writer is about to wait, which keeps the reader on the writer's
// processor, where splice(2) wakes it without, and the scheduler then
// prefers an idle processor; on a virtual machine that is a halted one,
// which takes tens of microseconds to wake. A stride that fills the buffer
// is a burst's first, and the next is teed again.
func (r *relay) spliced() (handled bool, err error) {
	if r.halt != nil && !r.halt.usable() {
		// A wait on the agent's end could not be ended by closing it.
		return false, nil
	}
	src, ok := r.src.(*os.File)
	if !ok || !isPipe(src) {
		return false, nil
	}
	dst, ok := r.dst.(*os.File)
	if !ok || !isPipe(dst) {
		return false, nil
	}
	srcRC, err := src.SyscallConn()
	if err != nil {
		return false, nil
	}
	dstRC, err := dst.SyscallConn()
	if err != nil {
		return false, nil
	}
	s := &splicer{src: srcRC, dst: dstRC}
	if unix.Pipe2(s.side[:], unix.O_CLOEXEC) != nil {
		return false, nil
	}
	defer unix.Close(s.side[0])
	defer unix.Close(s.side[1])
	// The halt is for the agent's end, the one the tee closes.
	if r.dir == ClientToAgent {
		s.dstHalt = r.halt
	} else {
		s.srcHalt = r.halt
	}
	// A write to a blocking end waits in the kernel, where no halt ends
	// it: such an end, when it has one, is spliced to.
	s.copies = s.dstHalt == nil || nonBlocking(dstRC)
	srcRC.Control(func(fd uintptr) { growPipe(fd) })
	dstRC.Control(func(fd uintptr) { growPipe(fd) })
	// A tee takes at most what the side pipe holds: one wake-up's worth.
	size := growPipe(uintptr(s.side[1]))
	if size <= 0 {
		size = readSize
	}
	first := true
	buf := make([]byte, size)
	for {
		if r.q.nearlyFull() {
			n, err := s.pass(size)
			if first && refused(err) {
				return false, nil
			}
			first = false
			if err != nil || n == 0 {
				// Past an unread stride the observer skips to the next
				// newline anyway: nothing is left in progress to lose,
				// whichever end failed.
				r.end()
				return true, err
			}
			r.skip(n)
			r.stats.Bytes[r.dir].Add(int64(n))
			continue
		}
		// After a short stride the next is read and written (see above),
		// else teed, read from the side pipe and spliced on.
		copied := s.short && s.copies
		var n int
		if copied {
			n, err = s.read(buf)
		} else {
			n, err = s.tee(size)
			if first && refused(err) {
				return false, nil
			}
			first = false
			if err == nil && n > 0 {
				// The side pipe is the tee's own: a failed read does not
				// happen, and if it did the bytes still in it would be
				// another read's.
				err = readFull(s.side[0], buf[:n])
			}
		}
		if err != nil || n == 0 {
			r.end()
			return true, err
		}
		// Queued before the peer can see it, as on every path.
		r.observeAll(buf[:n])
		if copied {
			err = s.write(buf[:n])
		} else {
			err = s.move(n)
		}
		if err != nil {
			return true, err
		}
		r.stats.Bytes[r.dir].Add(int64(n))
	}
}

// refused reports whether the kernel refused the first tee or splice
// (not every pipe-like file supports them), so that the relay copies.
func refused(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)
}

// pipeSize is the capacity the spliced relay asks of each pipe it touches.
// Kernel memory is charged to the user by capacity, and a user past
// fs.pipe-user-pages-soft (64 MiB by default) gets minimal pipes
// everywhere, so a tee must not ask for much: five pipes of 256 KiB (its
// editor's two, its agent's two, its side pipe) are 1.25 MiB, where 1 MiB
// each measured no faster.
const pipeSize = 256 << 10

// growPipe raises the pipe's capacity to pipeSize, or as near as the
// system allows (fs.pipe-max-size, the user's quota, which the kernel
// checks), never lowering it, and returns the capacity it has (0 when
// that cannot be read).
func growPipe(fd uintptr) int {
	cur, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return 0
	}
	for want := pipeSize; want > cur; want /= 2 {
		if got, err := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, want); err == nil {
			return got
		}
	}
	return cur
}

// nonBlocking reports whether rc's descriptor is in non-blocking mode.
func nonBlocking(rc syscall.RawConn) bool {
	flags := 0
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		return false
	}
	return flags&unix.O_NONBLOCK != 0
}

// isPipe reports whether f is a pipe (or FIFO).
func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// splicer moves a relay's stream from its source pipe to its destination
// pipe. Each tee or splice is asked not to block (SPLICE_F_NONBLOCK, so an
// end's own blocking mode does not matter), and when one finds an end not
// ready the relay waits for that end alone by poll(2), on its own thread.
// The kernel then wakes that thread the moment the peer writes or reads.
// Go's poller was measured slower for this: on two busy processors its
// wake-up is a hand-off through the scheduler for every stride, and a
// 16 MiB burst through the tee took about a third longer than with poll.
//
// The short strides' read and write are plain calls, in the end's own
// blocking mode: a read only once poll(2) found src readable; a write to a
// blocking end waits in the kernel for room, as the poll would, and so is
// never made to an end a halt is for (the agent's, which are the tee's
// own non-blocking pipes in any case).
//
// A wait holds only the end it waits on, and an operation both ends for
// the one call, so that closing the other end never waits for it. Closing
// an *os.File waits until no call uses its descriptor, so the tee fires
// the end's halt first: a wait on the agent's end also polls the halt and
// returns errHalted once it fires.
type splicer struct {
	src, dst         syscall.RawConn
	srcHalt, dstHalt *halt // nil: nothing closes that end while the relay runs
	side             [2]int
	fds              [2]unix.PollFd // poll's argument, kept to not allocate it per wait
	// short says the last pass, tee or read moved less than it could: src
	// was then empty or dst full, so the next one waits first rather than
	// trying once only to be told to (a syscall a stride, in a burst).
	short bool
	// copies says a short stride's successor may be read and written.
	copies bool
}

// errHalted ends a relay whose agent end the tee closed while it waited.
var errHalted = errors.New("acp tee: relay halted: the agent's end of the pipe was closed")

// pass moves up to max bytes straight from src to dst, waiting for src to
// hold something and for dst to have room; 0 is the end of src.
func (s *splicer) pass(max int) (int, error) {
	if s.short {
		s.short = false
		if _, err := s.await(); err != nil {
			return 0, err
		}
	}
	for {
		var n int64
		var serr error
		if err := s.both(func(sfd, dfd int) {
			n, serr = unix.Splice(sfd, nil, dfd, nil, max, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
		}); err != nil {
			return 0, err
		}
		switch serr {
		case nil:
			s.short = n < int64(max)
			return int(n), nil
		case unix.EINTR:
		case unix.EAGAIN:
			if _, err := s.await(); err != nil {
				return 0, err
			}
		default:
			return 0, serr
		}
	}
}

// tee duplicates up to max bytes of what src holds into the side pipe,
// waiting for src to hold something (the side pipe is empty: it is never
// full); 0 is the end of src.
func (s *splicer) tee(max int) (int, error) {
	return s.take(max, func(fd int) (int, error) {
		n, err := unix.Tee(fd, s.side[1], max, unix.SPLICE_F_NONBLOCK)
		return int(n), err
	})
}

// read reads what src holds into b, waiting for it to hold something; 0
// is the end of src.
func (s *splicer) read(b []byte) (int, error) {
	return s.take(len(b), func(fd int) (int, error) { return unix.Read(fd, b) })
}

// take runs op, which takes up to max bytes from src's descriptor, until
// src holds something for it: first waiting when the last stride was
// short (it took all src held, so src is likely empty now), and again
// whenever op finds src empty. short then says whether op took less than
// max.
func (s *splicer) take(max int, op func(fd int) (int, error)) (int, error) {
	if s.short {
		s.short = false
		if err := s.wait(s.src, unix.POLLIN, s.srcHalt); err != nil {
			return 0, err
		}
	}
	for {
		var n int
		var oerr error
		if err := s.src.Control(func(fd uintptr) { n, oerr = op(int(fd)) }); err != nil {
			return 0, err
		}
		switch oerr {
		case nil:
			s.short = n < max
			return n, nil
		case unix.EINTR:
		case unix.EAGAIN:
			if err := s.wait(s.src, unix.POLLIN, s.srcHalt); err != nil {
				return 0, err
			}
		default:
			return 0, oerr
		}
	}
}

// write writes b to dst, waiting for room in it.
func (s *splicer) write(b []byte) error {
	for len(b) > 0 {
		var n int
		var werr error
		if err := s.dst.Control(func(fd uintptr) { n, werr = unix.Write(int(fd), b) }); err != nil {
			return err
		}
		switch werr {
		case nil:
			b = b[n:]
		case unix.EINTR:
		case unix.EAGAIN:
			if err := s.wait(s.dst, unix.POLLOUT, s.dstHalt); err != nil {
				return err
			}
		default:
			return werr
		}
	}
	return nil
}

// move moves n bytes, which src holds (they were teed), on to dst, waiting
// for room in dst.
func (s *splicer) move(n int) error {
	for n > 0 {
		var m int64
		var serr error
		if err := s.both(func(sfd, dfd int) {
			m, serr = unix.Splice(sfd, nil, dfd, nil, n, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
		}); err != nil {
			return err
		}
		switch {
		case serr == unix.EINTR:
		case serr == unix.EAGAIN:
			srcEmpty, err := s.await()
			if err != nil {
				return err
			}
			if srcEmpty {
				// Something else read src, which held them a moment ago.
				return io.ErrUnexpectedEOF
			}
		case serr != nil:
			return serr
		case m == 0:
			return io.ErrUnexpectedEOF // likewise
		default:
			n -= int(m)
		}
	}
	return nil
}

// await waits after a splice found an end not ready, which splice does not
// say: when src holds nothing it waits for src (srcEmpty), else dst is
// full and it waits for room in dst.
func (s *splicer) await() (srcEmpty bool, err error) {
	held := 0
	var ierr error
	if err := s.src.Control(func(fd uintptr) { held, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		return false, err
	}
	if ierr != nil {
		// Every Linux pipe answers it; without it, waiting on the wrong end
		// would spin.
		return false, ierr
	}
	if held == 0 {
		return true, s.wait(s.src, unix.POLLIN, s.srcHalt)
	}
	return false, s.wait(s.dst, unix.POLLOUT, s.dstHalt)
}

// both runs op on the descriptors of src and dst, holding each for the one
// call.
func (s *splicer) both(op func(sfd, dfd int)) error {
	var derr error
	serr := s.src.Control(func(sfd uintptr) {
		derr = s.dst.Control(func(dfd uintptr) { op(int(sfd), int(dfd)) })
	})
	if serr != nil {
		return serr
	}
	return derr
}

// wait blocks until the end rc is ready for events, or in error or hung up
// (which the next call reports), or h fires.
func (s *splicer) wait(rc syscall.RawConn, events int16, h *halt) error {
	var perr error
	if err := rc.Control(func(fd uintptr) {
		s.fds[0] = unix.PollFd{Fd: int32(fd), Events: events}
		s.fds[1] = unix.PollFd{Fd: -1} // poll skips a negative descriptor
		if h != nil {
			s.fds[1] = unix.PollFd{Fd: int32(h.fd), Events: unix.POLLIN}
		}
		for {
			_, perr = unix.Poll(s.fds[:], -1)
			if perr != unix.EINTR {
				break
			}
		}
		if perr == nil && s.fds[1].Revents != 0 {
			perr = errHalted
		}
	}); err != nil {
		return err
	}
	return perr
}

// readFull reads len(b) bytes from fd.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}

// halt ends a spliced relay's waits on one end of its pipes, the agent's,
// before the tee closes that end: a poll of it returns only when the peer
// acts, which a peer that is gone or stuck never does, and the close would
// wait for the poll. It is an eventfd, readable once fired.
type halt struct {
	mu sync.Mutex
	fd int // -1 once closed, or when it could not be made
}

// newHalt makes a relay's halt (not usable when the descriptor could not
// be made: the relay then copies, through Go's poller, which a close does
// end).
func newHalt() *halt {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		fd = -1
	}
	return &halt{fd: fd}
}

// usable reports whether the halt can end a wait.
func (h *halt) usable() bool { return h.fd >= 0 }

// fire ends every wait on the halt, now and later; nil and closed halts
// ignore it.
func (h *halt) fire() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		unix.Write(h.fd, []byte{1, 0, 0, 0, 0, 0, 0, 0}) // eventfd adds this uint64: nonzero in either byte order
	}
}

// close releases the halt once its relay has ended.
func (h *halt) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
}
