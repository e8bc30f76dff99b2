package hook

import (
	"os"
	"os/signal"
)

// deferSignals catches sigs (so they no longer end the process) until
// release, which reports whether any arrived meanwhile. It is the runner's
// scoped hold; the process-wide hold that covers a hook process before Run
// starts is main's (cmd/aep-hook signals.go says why there are two).
//
// With ignore, the signals are ignored until release (which gives them
// their default action back and reports false): no signal-watching
// goroutine is started.
func deferSignals(ignore bool, sigs ...os.Signal) (release func() bool) {
	if len(sigs) == 0 {
		return func() bool { return false }
	}
	if ignore {
		signal.Ignore(sigs...)
		return func() bool {
			signal.Reset(sigs...)
			return false
		}
	}
	ch := make(chan os.Signal, len(sigs))
	signal.Notify(ch, sigs...)
	return func() bool {
		signal.Stop(ch)
		return len(ch) > 0
	}
}
