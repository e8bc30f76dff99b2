//go:build unix

package acp

import (
	"os"
	"syscall"
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
