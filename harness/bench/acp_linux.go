package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe asks the kernel to make the pipe f size bytes, as the tee does
// with its own; where it refuses, f stays as it is.
func growPipe(f *os.File, size int) {
	unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, size)
}
