//go:build !unix && !windows

package hook

import "os"

// holdSignals defers nothing where the platform has no termination signals.
func holdSignals(ignore bool) (release func() bool, arrived <-chan os.Signal) {
	return deferSignals(ignore)
}
