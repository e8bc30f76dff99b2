// Package pi is the pi transport: the extension shipped in the binary
// (`aep-hook plugin pi` prints it), which runs inside pi, subscribes to the
// notification events of pi's extension bus, and writes one JSON line per
// event to an `aep-hook forward pi` process it starts; and Decode, which
// turns such a line into the moment the pi table reads (TransportPi).
//
// The extension never slows pi: it registers only notification events and
// returns nothing from them, writes to the forwarder's pipe without waiting,
// drops (and counts, in a later {"aep_lost": N} line) what a stuck
// forwarder leaves unread past a bound, and gives up quietly when aep-hook
// cannot be started. It slims each event to what the table reads (the last
// assistant message of agent_end, no context preview on turn_end, a model's
// id), so a long session does not resend its history with every turn.
package pi
