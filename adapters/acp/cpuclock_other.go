//go:build !linux

package acp

import "time"

// observerClock is the wall clock where a thread's processor time is not
// read here.
func observerClock() func() time.Duration { return wallClock() }
