//go:build windows

package hook

import (
	"os"
	"syscall"
)

// holdSignals defers Ctrl-C, Ctrl-Break and the console close, logoff and
// shutdown events until release is called, so the hook finishes recording
// what it has read within its own deadline. release reports whether one
// arrived meanwhile.
func holdSignals() (release func() bool, arrived <-chan os.Signal) {
	return deferSignals(os.Interrupt, syscall.SIGTERM)
}
