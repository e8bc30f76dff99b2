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
