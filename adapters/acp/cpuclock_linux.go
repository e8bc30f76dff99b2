package acp

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// observerClock returns the clock the observer paces itself by, and its
// release: the processor time of the observer's own thread (the goroutine
// is locked to it until release). Paced by the wall clock, an observer on a
// loaded machine counts the time others ran as its own cost and backs off
// far more than it uses, dropping what it had the processor time to
// observe.
func observerClock() (now func() time.Duration, release func()) {
	runtime.LockOSThread()
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		runtime.UnlockOSThread()
		return wallClock()
	}
	return func() time.Duration {
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}, runtime.UnlockOSThread
}
