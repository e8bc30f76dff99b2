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

// lockWithin takes the exclusive lock on f, waiting at most wait (0 waits
// as long as it takes). The wait is a blocking lock on another goroutine,
// so the lock is taken the moment it is released. When the wait runs out
// (ErrLockTimeout) that goroutine keeps f: it releases the lock should it
// still get it, and closes f; the caller must not use or close f again.
func lockWithin(f *os.File, wait time.Duration) error {
	if wait <= 0 {
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
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		if state.CompareAndSwap(waiting, abandoned) {
			return ErrLockTimeout
		}
		return <-done
	}
}
