package acp

import (
	"time"

	"golang.org/x/sys/unix"
)

// observerClock returns the clock the observer paces itself by: the
// processor time of the calling thread, which the observer reads only
// while its goroutine is locked to one (a batch). Paced by the wall clock,
// an observer on a loaded machine counts the time others ran as its own
// cost and backs off far more than it uses, dropping what it had the
// processor time to observe.
func observerClock() func() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return wallClock()
	}
	return func() time.Duration {
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}
}
