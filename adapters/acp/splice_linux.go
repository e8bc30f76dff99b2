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
	// One read's worth at a time, as the copying relay reads.
	size := readSize
	if got, err := unix.FcntlInt(uintptr(side[1]), unix.F_SETPIPE_SZ, readSize); err == nil && got < size {
		size = got
	}
	srcBlocking, dstBlocking := blocking(srcRC), blocking(dstRC)
	first := true
	buf := getChunk()
	defer func() { putChunk(buf) }()
	for {
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
		if r.observeOwned(buf[:n], true) {
			buf = getChunk()
		}
		if err := spliceAll(srcRC, dstRC, dstBlocking, n); err != nil {
			return true, err
		}
		r.stats.Bytes[r.dir].Add(int64(n))
	}
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
	var n int64
	var terr error
	err := src.Read(func(fd uintptr) bool {
		for {
			n, terr = unix.Tee(int(fd), w, size, 0)
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
	cerr := src.Control(func(sfd uintptr) {
		for n > 0 && serr == nil {
			werr := dst.Write(func(dfd uintptr) bool {
				for {
					m, e := unix.Splice(int(sfd), nil, int(dfd), nil, n, unix.SPLICE_F_MOVE)
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
						serr = io.ErrUnexpectedEOF // src held them a moment ago
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
	})
	if cerr != nil {
		return cerr
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
