//go:build !linux

package realagents

import (
	"bytes"
	"os/exec"
	"syscall"
)

// runSignalled runs cmd and sends sig right after it starts: without
// Linux's FIONREAD the harness cannot see the input consumed.
func runSignalled(cmd *exec.Cmd, in []byte, sig syscall.Signal) error {
	cmd.Stdin = bytes.NewReader(in)
	if err := cmd.Start(); err != nil {
		return err
	}
	cmd.Process.Signal(sig)
	return cmd.Wait()
}
