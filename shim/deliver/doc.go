// Package deliver ships the local JSONL logs to destinations beyond the
// machine: AEP collectors over the AEP HTTP binding (AEP-0003 §3.2) and
// OpenTelemetry endpoints as OTLP LogRecords over OTLP/HTTP protobuf
// (AEP-0005 §3), with nothing lost. The relay follows the logs with the
// same machinery, as a destination of its own (a Sender it sets, cursors
// under its folder, SeekEnd for logs it has not read yet).
//
// # The log is the record; delivery is a cursor over it
//
// The emitter always writes the JSONL log first. Delivery never sees an
// event the log lacks: for each (destination, log file) a Cursor records
// the byte offset delivered so far, in
// $AEP_HOME/cursors/<SafeName(destination)>/<agent>/<session>.json,
// replaced atomically (temporary file + rename) after the destination has
// accepted the lines before it (AEP-0003 §7: JSONL resumes by offset).
// Only whole lines are read; a trailing fragment waits for its newline.
// A crash between a POST and the cursor write causes a redelivery with the
// same ids, never a loss: delivery is at-least-once and in seq order per
// session, since each log is one session written in seq order and is read
// front to back. A cursor also fingerprints the file's first line, so a
// log that was truncated or replaced is shipped again from its start.
//
// One shipper at a time works on a (destination, log): ShipLog takes an
// OS lock beside the cursor. The hook path waits briefly and otherwise
// leaves the log to the holder (which re-reads to the end before it lets
// go); `ship --follow` skips a busy log and comes back to it.
//
// # Three ways to run
//
//   - Shipper.Hook: a hook process delivers the logs it just wrote within a
//     short deadline (DefaultHookDeadline, 300 ms) and gives up quietly,
//     recording the failure in the shim's error log.
//   - Shipper.ShipAll: `aep-hook ship` delivers every backlog and returns.
//   - Shipper.Follow: `aep-hook ship --follow` keeps delivering as logs
//     grow, woken by file-system notifications on the log folders with a
//     periodic rescan as a safety net.
//
// # Failures
//
// Network errors, 408, 429 and 5xx are retried with jittered exponential
// backoff (honouring Retry-After) and the same lines. 401/403 and 426 stop
// delivery to that destination with an actionable error (426 names the
// versions the collector offered). A 400 isolates the refused line (using
// the collector's line index as a hint, else by bisection), puts it aside
// in $AEP_HOME/rejected/<destination>.jsonl with the collector's detail,
// and delivery continues. A 413 splits the batch; a single event that is
// still too large is put aside. The error log never receives content.
//
// # Backpressure (AEP-0003 §8.4)
//
// With file cursors there is no in-memory queue to overflow: the log on
// disk is the buffer, and a destination that is down simply stops its
// cursor. What is bounded in memory is the batch in hand (BatchEvents,
// BatchBytes). The long-running path (`ship --follow`, Shipper.Pressure)
// adds the §8.4 policy on top: the queue of work for a destination is the
// undelivered backlog of each log, bounded by QueueBytes; while the
// backlog beyond the batch in hand exceeds that bound, debug and info
// events are skipped (the cursor moves past them) and counted, in the
// error log and in the destination's status (`aep-hook doctor`, `ship
// --status`). Notice and above are never skipped. The hook path and a
// one-shot `ship` never skip anything. Skipped events remain in the local
// log, the record.
//
// # OTLP
//
// The OTLP exporter builds records with pdata's plog and marshals them
// with plog's own protobuf marshaler, posting to {base}/v1/logs with
// net/http; plogotlp is not linked, since it pulls gRPC into every hook
// process. OTLP over gRPC is not offered for the same reason.
package deliver
