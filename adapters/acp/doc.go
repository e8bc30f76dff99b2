// Package acp is the stdio tee for the Agent Client Protocol: configured as
// an editor's agent command, it spawns the real agent, relays the editor's
// stdin to the agent and the agent's stdout back byte for byte (stderr is
// inherited untouched), and observes the newline-delimited JSON-RPC of both
// directions on the side.
//
// The relay never waits on observation: each chunk is written on as it
// arrives, after a copy of it is put in a bounded queue (bounded by lines
// and bytes) that never blocks but drops, and counts, what it cannot hold;
// the relay only counts the chunk's newlines. On Linux, between two pipes
// (as an editor spawns an agent), the stream does not pass through the
// tee's memory: tee(2) duplicates what the source pipe holds into a side
// pipe read into the observer's buffer and splice(2) moves it on, every
// pipe grown to 256 KiB first so a burst crosses in few strides; once the
// queue is nearly full, strides are spliced on unread, and counted in
// bytes. What the queue drops (lines) and what was relayed unread (bytes)
// are counted per direction and recorded in the error log, as is what the
// drain bound gives up at the end; nothing is lost unrecorded. One
// observer goroutine frames each direction's chunks into lines (a line
// longer than the bound, or not JSON, passes through unobserved and is
// recorded as a failure), classifies each line and joins responses to
// their requests by JSON-RPC id per direction, and hands the lines, a
// batch at a time, to the caller's shim.Handler (normally the emitter) as
// moments of the ACP table: Raw is the message as it travelled, and the
// facts (mapping.TransportACP) carry its kind, direction, method, id, the
// session of the joined request and the tee's token. A batch is a few
// dozen lines; between batches the observer lingers (at least a
// millisecond, and three times the processor time its last batch took;
// fifteen times once observation is losing lines or the queue is nearly
// full), so it is woken once per batch, not per line, and never takes
// more than a quarter of a processor from the relay, a sixteenth in a
// burst. The agent's exit
// status is the tee's; interrupt and terminate signals are forwarded to it.
package acp
