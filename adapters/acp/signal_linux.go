package acp

import (
	"syscall"
	"unsafe"
)

// toDefault sets sig's disposition to SIG_DFL, bypassing the Go runtime's
// handler (which turns some signals into a panic or ignores them), so
// that raising it ends the process as it ended the agent.
func toDefault(sig syscall.Signal) bool {
	if sig == syscall.SIGKILL {
		return true // no disposition to change: it always kills
	}
	var act [4]uint64 // struct sigaction, zeroed: SIG_DFL, no flags, empty mask
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	return errno == 0
}

// raise sends sig to the calling thread, which delivers it before the
// call returns.
func raise(sig syscall.Signal) {
	syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
}
