//go:build !linux

package acp

// spliced is the Linux pipe-to-pipe relay; elsewhere the relay copies.
func (r *relay) spliced() (handled bool, err error) { return false, nil }

// halt ends the Linux spliced relay's waits; the copying relay's waits are
// Go's poller's, which closing the file ends.
type halt struct{}

func newHalt() *halt { return nil }
func (*halt) fire()  {}
func (*halt) close() {}
