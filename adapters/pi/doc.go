// Package pi is the pi transport: the extension shipped in the binary
// (`aep-hook plugin pi` prints it), which runs inside pi, subscribes to the
// notification events of pi's extension bus, and writes one JSON line per
// event to an `aep-hook forward pi` process it starts; and Decode, which
// turns such a line into the moment the pi table reads (TransportPi).
//
// The extension never slows pi unless the user opts in to its control
// gate: it registers only notification events and returns nothing from
// them, writes to the forwarder's pipe without waiting,
// drops (and counts, in a later {"aep_lost": N} line) what a stuck
// forwarder leaves unread past a bound, and gives up quietly when aep-hook
// cannot be started. It slims each event to what the table reads (the last
// assistant message of agent_end, no context preview on turn_end, a model's
// id), so a long session does not resend its history with every turn.
//
// The opt-in gate (AEP_CONTROL=1 and the tool in AEP_CONTROL_TOOLS, from
// pi's environment or the posture `aep-hook install pi --control` writes
// into the file) adds a tool_call handler, registered only then: for a
// gated call it starts `aep-hook forward pi --hold`, hands it the call as
// one forwarder line, and awaits its reply, pi's {block, reason} for a
// refusal over the control loop. Whatever goes wrong (aep-hook missing,
// no relay, the budget passed, the user aborts) the handler resolves with
// nothing and the call runs; it never throws, since pi blocks a call whose
// handler throws. Held decodes that line for the hook runner.
package pi
