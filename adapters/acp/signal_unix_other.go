//go:build unix && !linux

package acp

import "syscall"

// toDefault reports whether raising sig ends the process here: without a
// portable way past the Go runtime's handlers, only the signals whose
// runtime default is to die by them (and SIGKILL) qualify.
func toDefault(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL:
		return true
	}
	return false
}

// raise sends sig to the process.
func raise(sig syscall.Signal) {
	syscall.Kill(syscall.Getpid(), sig)
}
