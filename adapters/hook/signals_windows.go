//go:build windows

package hook

import (
	"os"
	"syscall"
)

// holdSignals defers Ctrl-C, Ctrl-Break and the console close, logoff and
// shutdown events until release is called, so the hook finishes recording
// what it has read within its own deadline. release reports whether one
// arrived meanwhile (never, with ignore: see deferSignals).
func holdSignals(ignore bool) (release func() bool, arrived <-chan os.Signal) {
	return deferSignals(ignore, os.Interrupt, syscall.SIGTERM)
}
