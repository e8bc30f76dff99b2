//go:build unix

package tees

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// notifyStop catches the signals an editor stops its agent with, so the
// scripted agent dies by them where the recording says.
func notifyStop() <-chan os.Signal {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	return c
}

// dieBy ends the process by sig, as the recorded agent ended.
func dieBy(sig syscall.Signal) {
	signal.Reset()
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Minute)
	os.Exit(1)
}
