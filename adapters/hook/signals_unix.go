//go:build unix

package hook

import (
	"os"
	"os/signal"
	"syscall"
)

// holdSignals defers the termination signals an agent may send its hook
// (Claude Code sends SIGTERM to a hook it stops waiting for) until release
// is called, so the hook finishes recording what it has read within its
// own deadline. A write to a closed stdout returns EPIPE instead of killing
// the process with SIGPIPE (ignored last: once SIGPIPE shows as ignored,
// the termination signals are already held). release reports whether a
// termination signal arrived meanwhile (never, with ignore: see
// deferSignals).
func holdSignals(ignore bool) (release func() bool, arrived <-chan os.Signal) {
	release, arrived = deferSignals(ignore, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	signal.Ignore(syscall.SIGPIPE)
	return release, arrived
}
