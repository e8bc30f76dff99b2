// Package a2a observes A2A (Agent2Agent) servers for the AEP-0002 Annex
// A.17 table (mapping.A2A), over the protocol's JSON-RPC binding, both
// generations (v1.0 and v0.3):
//
//   - Proxy is the tee in front of an A2A server (`aep-hook a2a --listen
//     ADDR --upstream URL`): an http.Handler that relays every request and
//     answer byte for byte (JSON-RPC, its SSE streams, the agent card, any
//     other path) and observes, beside the relay, the JSON-RPC requests,
//     their JSON answers and each event of their streams;
//   - Follower is the task follower (`aep-hook follow a2a --url URL --task
//     ID`), a follow.Source: it subscribes to a task's event stream
//     (SubscribeToTask, v0.3 tasks/resubscribe) and catches up with GetTask
//     after every connect;
//   - Decode turns the JSON moment form (`aep-hook map a2a`, the pins) into
//     the moments either would hand over.
//
// Each moment carries the facts mapping.TransportA2A documents: a request
// is handed over with its answer, once the answer has named the context
// and the task the request belongs to.
package a2a
