// Package shim is the runtime every adapter shares: configuration, the AEP
// event envelope and its JSON encoding, ULID ids, the per-session state store
// (seq, epoch, references, mapping table state) with cross-process locking,
// the emitter, the sinks, and the internal error log.
//
// The flow is one-way: an adapter reads a vendor moment, the emitter runs the
// vendor's mapping table under the session's lock, turns each draft into an
// envelope, passes its payload through the capture gate (package redact, the
// only way content leaves), assigns the session position and writes the lines
// to the sink. The package knows no vendor.
package shim
