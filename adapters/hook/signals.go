package hook

import (
	"os"
	"os/signal"
)

// deferSignals catches sigs (so they no longer end the process) until
// release, which reports whether any arrived meanwhile (and was not taken
// from arrived). It is the runner's scoped hold; the process-wide hold that
// covers a hook process before Run starts is main's (cmd/aep-hook
// signals.go says why there are two). A held moment waits on arrived: the
// agent giving up on its hook ends the wait at once.
//
// With ignore, the signals are ignored until release (which gives those
// not already ignored when the hold began their default action back, and
// reports false): no signal-watching goroutine is started, and arrived is
// nil. Signals ignored before the hold (the hook-only build's process-wide
// hold, or an inherited nohup) stay ignored: giving them back also cost
// every hook process a thread, the runtime's signal-mask thread that
// undoing an Ignore starts.
func deferSignals(ignore bool, sigs ...os.Signal) (release func() bool, arrived <-chan os.Signal) {
	if len(sigs) == 0 {
		return func() bool { return false }, nil
	}
	if ignore {
		var held []os.Signal // those this hold ignores, given back at release
		for _, s := range sigs {
			if !signal.Ignored(s) {
				held = append(held, s)
			}
		}
		signal.Ignore(sigs...)
		return func() bool {
			if len(held) > 0 {
				signal.Reset(held...)
			}
			return false
		}, nil
	}
	ch := make(chan os.Signal, len(sigs))
	signal.Notify(ch, sigs...)
	return func() bool {
		signal.Stop(ch)
		return len(ch) > 0
	}, ch
}
