package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// holdSignals makes a hook process finish recording the moment it has read
// whatever termination signal arrives: Claude Code in -p mode sends SIGTERM
// to its StopFailure hook about 50 ms after starting it, which killed the
// hook before it wrote run.failed. The hook's own deadline (the runner's
// watchdog) still bounds the process, so ignoring them never hangs the
// agent; SIGKILL still ends it.
//
// There are two holds on purpose, one after the other, not one written
// twice. This one covers the process from the moment it knows it is a hook
// (before flags, configuration and the emitter are set up) until
// hook.Runner.Run starts; it is process-wide and says nothing about what
// arrived, and only main may change the process's signal disposition like
// that. Run then takes its own scoped hold (adapters/hook holdSignals:
// Notify, which replaces this Ignore) for exactly the recording, reports
// through Interrupted whether a signal came meanwhile (the hook then skips
// delivery), and on return gives the signals their default action back: the
// record is written, so an agent that asked the hook to stop now gets its
// way. Runner stays usable in-process (tests, other embedders) without
// leaving the caller deaf to signals.
func holdSignals() {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
}

// enterHook runs the OnHook callback as the process enters hook mode.
func (s *Streams) enterHook() {
	if s.OnHook != nil {
		s.OnHook()
	}
}

// untilInterrupted is the context of a long-running verb (proxies, followers,
// the OTLP receiver, ship, tail): done at the first Ctrl-C or SIGTERM, so
// the verb shuts down in order; the signals keep being caught until stop
// (the verb's deferred call) gives them their default action back.
func untilInterrupted() (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
