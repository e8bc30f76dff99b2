//go:build !unix

package acp

import "os"

// exitCode is the agent's exit status.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return ExitCannotRun
	}
	if c := ps.ExitCode(); c >= 0 {
		return c
	}
	return 1
}

// exitSignal is always nil: no signal ends a process here.
func exitSignal(*os.ProcessState) os.Signal { return nil }

// Reraise does nothing where processes do not die by signals; the caller
// exits with the agent's status.
func Reraise(os.Signal) {}
