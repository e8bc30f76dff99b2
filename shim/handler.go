package shim

import "github.com/aep-hook/aep-hook/mapping"

// Handler takes the moments a transport observed together (one or more, in
// wire order) and emits them: Emitter.HandleBatch with the table bound
// (Emitter.Handler). Results are by index; a moment that failed carries its
// error there. A transport that observes a stream hands over what it has
// queued in one call, so a busy stream costs one session lock, one state
// save and one sink write per batch, not per message.
type Handler func(ms []mapping.Moment) ([]Result, error)

// Handler returns a Handler emitting through e with v's table.
func (e *Emitter) Handler(v mapping.Vendor) Handler {
	return func(ms []mapping.Moment) ([]Result, error) { return e.HandleBatch(v, ms) }
}

// Recorder keeps internal failures, without content (*ErrorLog is one).
type Recorder interface {
	Record(Failure) bool
}
