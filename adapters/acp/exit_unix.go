//go:build unix

package acp

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// exitCode is the agent's status as a shell reports it: 128+N when signal
// N ended it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return ExitCannotRun
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// exitSignal is the signal that ended the agent, nil when it exited.
func exitSignal(ps *os.ProcessState) os.Signal {
	if ps == nil {
		return nil
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return nil
}

// Reraise ends the calling process by sig, so that its parent sees the
// same wait status the agent's death gave the tee (an editor reading
// {signal: "SIGTERM"} rather than exit 143). It returns only when the
// signal could not be made fatal here; the caller then exits 128+N.
// Everything the process must finish (logs, the error log) must be done
// before the call.
func Reraise(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return
	}
	signal.Reset(s)
	if !toDefault(s) {
		return
	}
	runtime.LockOSThread()
	raise(s)
	// Delivery is asynchronous on some systems: give it a moment.
	time.Sleep(100 * time.Millisecond)
}
