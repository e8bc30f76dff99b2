package main

import (
	"os/signal"
	"syscall"
)

// holdSignals makes a hook process finish recording the moment it has read
// whatever termination signal arrives: Claude Code in -p mode sends SIGTERM
// to its StopFailure hook about 50 ms after starting it, which killed the
// hook before it wrote run.failed. The hook's own deadline (the runner's
// watchdog) still bounds the process, so ignoring them never hangs the
// agent; SIGKILL still ends it.
func holdSignals() {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
}

// enterHook runs the OnHook callback as the process enters hook mode.
func (s *Streams) enterHook() {
	if s.OnHook != nil {
		s.OnHook()
	}
}
