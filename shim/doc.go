// Package shim is the runtime every adapter shares: configuration, the AEP
// event envelope and its JSON encoding, ULID ids, the per-session state store
// (seq, epoch, references, mapping table state) with cross-process locking,
// the emitter, the sinks, and the internal error log.
//
// The flow is one-way: an adapter reads a vendor moment, the emitter runs the
// vendor's mapping table, turns each draft into an envelope, passes its
// payload through the capture gate (package redact, the only way content
// leaves), assigns the session position and writes the lines to the sink.
// The mapping, gating and encoding are done on a snapshot of the session's
// state before its lock is taken and adopted under it when the state has
// not moved; a lock whose holder is stuck, or a state file that cannot be
// used, does not cost the event (it is written in a fresh epoch). The package
// knows no vendor.
package shim
