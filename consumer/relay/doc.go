// Package relay serves the record: `aep-hook relay`, one long-running
// process that takes in what this machine's hooks, tees, bridges and
// sidecar write under $AEP_HOME/logs (followed from a persisted position)
// and what remote emitters send, and serves it over the AEP-0003 bindings
// with the AEP security model's identities, scopes and tenants, routing
// AEP-0004 control commands to the one emitter connection that claims
// their session.
//
// # What comes in
//
//   - The local logs: the delivery machinery of shim/deliver follows
//     $AEP_HOME/logs with file-system notifications and a cursor per log
//     under $AEP_HOME/relay/cursors, so a restart resumes where the last
//     run stopped; no hook waits on the relay.
//   - POST /events (one event, or an NDJSON batch) and event frames on
//     the WebSocket /socket. These are written to the relay's own JSONL
//     store ($AEP_HOME/relay/store, package store) before they are
//     acknowledged.
//
// Every event passes the admission check (package event), the posting
// token's identity and tenant (package auth), and admission dedupe on
// (source, id). Sequenced events enter a bounded per-session replay
// buffer (package buffer); every event is fanned out live, as received
// (AEP-0003 §5: a redelivery traverses the relay, consumers dedupe).
//
// # What goes out
//
//   - GET /stream: Server-Sent Events (AEP-0003 §3.3) with filter,
//     capture, from (positions or all), live=0, Last-Event-ID, heartbeats.
//   - /socket: the WebSocket binding (AEP-0003 §3.5): hello, roles,
//     multiplexed subscriptions, the roster, ping/pong, closing, and
//     control commands routed by session (AEP-0004 §4).
//   - GET /events and /.well-known/aep: the discovery document (§3.4);
//     GET /healthz: liveness, with counts for an authorized caller.
//   - Options.Console, when set, is served at / (the fleet console); its
//     requests carry the relay as a Snapshotter (SnapshotterFrom), the
//     from:"all" replay a grant would get, taken at one instant.
//
// Each delivery is filtered with attr-match, limited to what the
// subscriber's token may see (its tenant, its subscribe and read scopes),
// and down-leveled to the lower of the subscription's and the token's
// capture ceiling; otherwise it is the ingested bytes unchanged.
//
// # Bounds
//
// Bodies, batches, frames, resume lists, subscriptions per connection and
// connections are bounded; each connection has a bounded queue, and a
// consumer that lets it fill is cut (a closing frame with its delivered
// positions on WebSocket, the end of the stream on SSE) so it never slows
// ingest or another consumer, and resumes exactly. On shutdown every
// stream is drained within Options.Drain.
//
// # Security
//
// Every listener goes through internal/guard (Host, Origin, bearer token
// in constant time; the access_token query parameter is accepted for
// browsers and never logged). Without a tokens file the relay serves
// loopback only and one token, the user's own (auth.User); with Tokens nil
// (--open) it asks none and is watch-only: control is refused. The audit log
// ($AEP_HOME/relay/audit.jsonl) records connections and their identities,
// subscriptions, every command routed or refused and every event
// rejected, never event content or a token.
package relay
