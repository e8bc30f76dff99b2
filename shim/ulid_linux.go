package shim

import (
	"crypto/rand"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// osRandom fills b from the kernel's CSPRNG with the getrandom system call
// itself (flags 0: it blocks until the pool is initialised, then never
// fails for reads this small), the source crypto/rand reads on Linux too.
// Called directly because crypto/rand's first read costs a hook process
// more than its ids: it arms a one-minute warning timer, and its vDSO
// getrandom maps and touches per-thread state pages, page faults that
// dominate a short process's start. Falls back to crypto/rand where the
// system call is missing (kernels before 3.17) or fails otherwise.
func osRandom(b []byte) {
	for len(b) > 0 {
		n, _, errno := syscall.Syscall(unix.SYS_GETRANDOM, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 || n == 0 {
			rand.Read(b)
			return
		}
		b = b[n:]
	}
}
