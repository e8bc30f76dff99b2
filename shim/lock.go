package shim

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// ErrLockTimeout says a lock stayed held past the wait allowed for it: its
// holder is stuck (a stopped process, a hung disk) or very slow.
var ErrLockTimeout = errors.New("lock still held by another process")

// lockWithin takes the exclusive lock on f. A lock passed from holder to
// holder (a queue of hooks of one busy session) is waited for as long as it
// takes; a stuck holder is not: the wait ends when progress reports no
// change for stall (stall 0 waits as long as it takes; a nil progress never
// changes, so stall bounds the whole wait). The wait is a blocking lock on another
// goroutine, so the lock is taken the moment it is released. When the wait
// ends without it (ErrLockTimeout) that goroutine keeps f: it releases the
// lock should it still get it, and closes f; the caller must not use or
// close f again.
func lockWithin(f *os.File, stall time.Duration, progress func() int64) error {
	if stall <= 0 {
		return lockFile(f)
	}
	if tryLockFile(f) {
		return nil
	}
	const (
		waiting int32 = iota
		taken
		abandoned
	)
	var state atomic.Int32
	done := make(chan error, 1)
	go func() {
		err := lockFile(f)
		if !state.CompareAndSwap(waiting, taken) {
			if err == nil {
				unlockFile(f)
			}
			f.Close()
			return
		}
		done <- err
	}()
	seen := func() int64 {
		if progress == nil {
			return 0
		}
		return progress()
	}
	last, quiet := seen(), time.Now()
	tick := time.NewTicker(max(stall/2, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case now := <-tick.C:
			if p := seen(); p != last {
				last, quiet = p, now
			}
			if now.Sub(quiet) < stall {
				continue
			}
			if state.CompareAndSwap(waiting, abandoned) {
				return ErrLockTimeout
			}
			return <-done
		}
	}
}

// fileProgress is a progress function for lockWithin: it changes whenever
// f is rewritten (every holder of a session's lock saves its state), and
// all the time while the lock's holder is a process that is not stopped
// (where that can be told: Linux), so a holder slowed down by a loaded
// machine is waited for and only a stopped one is given up on.
func fileProgress(f *os.File) func() int64 {
	return func() int64 {
		if stopped, ok := holderStopped(f); ok && !stopped {
			return time.Now().UnixNano()
		}
		fi, err := f.Stat()
		if err != nil {
			return 0
		}
		return fi.ModTime().UnixNano() ^ fi.Size()
	}
}
