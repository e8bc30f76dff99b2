package notify

import "time"

// Clock is the notifier's time: when a request was seen, how long it has
// waited, and when a delayed delivery or a reminder falls due. Tests give
// one they move by hand, so a ten-minute reminder is tested without
// waiting ten minutes.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop
	// cancels it and reports whether it did so before f was called.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// wallClock is the real clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
