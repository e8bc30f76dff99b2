package acp

import (
	"errors"
	"io"
	"os"
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
// with), a stride is spliced through the side pipe unread instead: reading
// it would only count lines the queue must refuse, and copying a burst to
// count it was a third of the relay's cost. Those bytes are counted
// (Stats.Unread), their lines are not.
//
// Every pipe on the way is grown first (growPipe): at the default 64 KiB
// a burst crosses the tee in 64 KiB strides, each one a wake-up of the
// writer, the tee and the reader in turn, and on a busy machine those
// hand-offs, not the bytes, are what the tee costs.
func (r *relay) spliced() (handled bool, err error) {
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
	var side [2]int
	if unix.Pipe2(side[:], unix.O_CLOEXEC) != nil {
		return false, nil
	}
	defer unix.Close(side[0])
	defer unix.Close(side[1])
	srcRC.Control(func(fd uintptr) { growPipe(fd) })
	dstRC.Control(func(fd uintptr) { growPipe(fd) })
	// A tee takes at most what the side pipe holds: one wake-up's worth.
	size := growPipe(uintptr(side[1]))
	if size <= 0 {
		size = readSize
	}
	srcBlocking, dstBlocking := blocking(srcRC), blocking(dstRC)
	first := true
	buf := make([]byte, size)
	for {
		if r.q.nearlyFull() {
			n, err := spliceFrom(srcRC, srcBlocking, side[1], size)
			if first && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)) {
				return false, nil
			}
			first = false
			if err != nil || n == 0 {
				r.end()
				return true, err
			}
			r.skip(n)
			if err := spliceTo(side[0], dstRC, dstBlocking, n); err != nil {
				return true, err
			}
			r.stats.Bytes[r.dir].Add(int64(n))
			continue
		}
		n, err := teeFrom(srcRC, srcBlocking, side[1], size)
		if first && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)) {
			return false, nil
		}
		first = false
		if err != nil {
			r.end()
			return true, err
		}
		if n == 0 {
			r.end()
			return true, nil
		}
		if err := readFull(side[0], buf[:n]); err != nil {
			// The side pipe is the tee's own: this does not happen, and if
			// it did the bytes still in it would be another read's.
			r.end()
			return true, err
		}
		r.observeAll(buf[:n])
		if err := spliceAll(srcRC, dstRC, dstBlocking, n); err != nil {
			return true, err
		}
		r.stats.Bytes[r.dir].Add(int64(n))
	}
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

// isPipe reports whether f is a pipe (or FIFO).
func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// blocking reports whether the descriptor is in blocking mode, in which
// case Go's poller does not wait on it and the relay polls it itself.
func blocking(rc syscall.RawConn) bool {
	fl := 0
	rc.Control(func(fd uintptr) { fl, _ = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	return fl&unix.O_NONBLOCK == 0
}

// teeFrom duplicates up to size bytes of what src holds into the side
// pipe w, waiting for src to hold something; 0 is the end of src.
func teeFrom(src syscall.RawConn, srcBlocking bool, w, size int) (int, error) {
	return fromPipe(src, srcBlocking, func(fd int) (int64, error) { return unix.Tee(fd, w, size, 0) })
}

// spliceFrom moves up to size bytes of what src holds into the side pipe
// w (empty, so it never waits for room), waiting for src to hold
// something; 0 is the end of src.
func spliceFrom(src syscall.RawConn, srcBlocking bool, w, size int) (int, error) {
	return fromPipe(src, srcBlocking, func(fd int) (int64, error) {
		return unix.Splice(fd, nil, w, nil, size, unix.SPLICE_F_MOVE)
	})
}

// fromPipe runs op on src until it has something to say, waiting for src
// to be readable (by poll when src is blocking, the poller when not).
func fromPipe(src syscall.RawConn, srcBlocking bool, op func(fd int) (int64, error)) (int, error) {
	var n int64
	var terr error
	err := src.Read(func(fd uintptr) bool {
		for {
			n, terr = op(int(fd))
			switch {
			case terr == unix.EINTR:
				continue
			case terr == unix.EAGAIN && srcBlocking:
				if perr := waitFd(int(fd), unix.POLLIN); perr != nil {
					terr = perr
					return true
				}
				continue
			case terr == unix.EAGAIN:
				return false // the poller waits for src
			}
			return true
		}
	})
	if err != nil {
		return 0, err
	}
	return int(n), terr
}

// spliceAll moves n bytes from src (which holds them) to dst, waiting for
// room in dst.
func spliceAll(src, dst syscall.RawConn, dstBlocking bool, n int) error {
	var serr error
	cerr := src.Control(func(sfd uintptr) { serr = spliceTo(int(sfd), dst, dstBlocking, n) })
	if cerr != nil {
		return cerr
	}
	return serr
}

// spliceTo moves n bytes from the pipe descriptor sfd, which holds them
// (the source, or the side pipe a stride went through unread), to dst,
// waiting for room in dst (by poll when dst is blocking, the poller when
// not).
func spliceTo(sfd int, dst syscall.RawConn, dstBlocking bool, n int) error {
	var serr error
	for n > 0 && serr == nil {
		werr := dst.Write(func(dfd uintptr) bool {
			for {
				m, e := unix.Splice(sfd, nil, int(dfd), nil, n, unix.SPLICE_F_MOVE)
				switch {
				case e == unix.EINTR:
					continue
				case e == unix.EAGAIN && dstBlocking:
					if perr := waitFd(int(dfd), unix.POLLOUT); perr != nil {
						serr = perr
						return true
					}
					continue
				case e == unix.EAGAIN:
					return false // the poller waits for room in dst
				case e != nil:
					serr = e
				case m == 0:
					serr = io.ErrUnexpectedEOF // sfd held them a moment ago
				default:
					n -= int(m)
				}
				return true
			}
		})
		if werr != nil && serr == nil {
			serr = werr
		}
	}
	return serr
}

// waitFd blocks until fd is ready for events (or in error, which the next
// call reports).
func waitFd(fd int, events int16) error {
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: events}}, -1)
		if err != unix.EINTR {
			return err
		}
	}
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
