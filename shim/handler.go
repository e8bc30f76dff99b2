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

// Deliver hands ms to h and calls failed for each moment that was not
// emitted, with its error: its own result's, or the call's error for a
// moment the results do not reach.
func (h Handler) Deliver(ms []mapping.Moment, failed func(m mapping.Moment, err error)) {
	results, err := h(ms)
	for i, m := range ms {
		ferr := err
		if i < len(results) {
			ferr = results[i].Err
		}
		if ferr != nil {
			failed(m, ferr)
		}
	}
}
