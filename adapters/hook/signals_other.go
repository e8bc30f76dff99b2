//go:build !unix && !windows

package hook

// holdSignals defers nothing where the platform has no termination signals.
func holdSignals(bool) (release func() bool) { return deferSignals(false) }
