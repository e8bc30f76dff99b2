// Package follow is the runtime every stream bridge shares: the OpenCode and
// Kilo Code SSE bridges (adapters/opencode) today, the WebSocket bridges
// (Kimi web, OpenHands, OpenClaw, A2A) next. A Runner keeps one live stream
// of a Source open for as long as its context lives:
//
//   - it connects (Source.Open) and, after every connect, catches up with
//     what the stream may have missed while it was down (Source.CatchUp,
//     the bridge's REST snapshot since the last cursor) before the items
//     read meanwhile are handled;
//   - it hands the moments of the items to the emitter in batches
//     (shim.Handler: one lock, state save and sink write per session per
//     batch), dropping items whose Key it handled recently (a window of
//     keys: the vendor's event ids, so duplicate deliveries and overlaps
//     with the catch-up are recorded once);
//   - it notices a dead stream (the read ends, or nothing, not even a
//     keep-alive item, arrives for Stall) and reconnects with jittered
//     exponential backoff;
//   - it keeps the Cursor of the last item handled (persisted through a
//     CursorStore, so a restarted bridge catches up from where it stopped);
//   - it stops cleanly when its context ends: the stream is closed, what was
//     already read is handed over and the cursor saved.
//
// Failures (a refused connect, a catch-up that failed, a batch the emitter
// could not write) go to the shim.Recorder without content; the Runner
// itself never gives up while its context lives.
//
// # Writing a bridge
//
// Implement Source for the vendor's transport: Open dials the stream and
// returns a Stream whose Next decodes one wire message into an Item (its
// moments with the typed facts of the vendor's mapping.Transport, its dedupe
// Key, its Cursor; an Item without moments for keep-alives, so the stall
// watch sees them); CatchUp turns the vendor's REST or replay surface into
// moments since a cursor, which the table must treat idempotently (the same
// moment twice changes nothing). A WebSocket bridge's Stream wraps its
// connection's reads exactly as the SSE bridge's wraps sse.Reader; the
// reconnect, backoff, dedupe, batching, cursor and shutdown come from here.
package follow
