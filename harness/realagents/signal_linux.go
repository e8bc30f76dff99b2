package realagents

import (
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runSignalled runs cmd with in on a pipe and sends sig once the process has
// read every byte of it (the pipe's unread count, FIONREAD alias TIOCINQ, drops to zero),
// or right away if it exits first.
func runSignalled(cmd *exec.Cmd, in []byte, sig syscall.Signal) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	go func() {
		w.Write(in)
		w.Close()
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fd := int(r.Fd())
	written := false
	for {
		select {
		case err := <-exited:
			return err
		default:
		}
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		if err != nil {
			break
		}
		if n > 0 {
			written = true
		}
		if written && n == 0 || len(in) == 0 {
			break
		}
		// Polling, not a threshold: the outcome does not depend on it.
		time.Sleep(200 * time.Microsecond)
	}
	cmd.Process.Signal(sig)
	return <-exited
}
