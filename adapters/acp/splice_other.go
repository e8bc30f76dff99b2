//go:build !linux

package acp

// spliced is the Linux pipe-to-pipe relay; elsewhere the relay copies.
func (r *relay) spliced() (handled bool, err error) { return false, nil }

// stopper ends the spliced relay's own waits; the copying relay waits
// through Go's poller, which Close interrupts, and needs none.
type stopper struct{}

func newStopper() *stopper { return nil }

func (*stopper) stop()  {}
func (*stopper) close() {}
