//go:build !unix

package tees

import (
	"os"
	"syscall"
)

// notifyStop catches nothing where processes are not signalled.
func notifyStop() <-chan os.Signal { return make(chan os.Signal) }

// dieBy exits 128+N where a process cannot die by a signal.
func dieBy(sig syscall.Signal) { os.Exit(128 + int(sig)) }
