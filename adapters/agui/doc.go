// Package agui is the HTTP tee for AG-UI agents: a reverse proxy the UI
// talks to instead of the agent. It forwards every request and response
// unchanged (net/http/httputil.ReverseProxy, flushing event-stream responses
// as they arrive) and observes each text/event-stream response on the side:
// the SSE framing is parsed off the bytes as the client receives them, and
// each event's JSON is queued, bounded and without ever blocking the stream,
// for one observer per stream. The observer hands each event, unchanged, to
// the caller's shim.Handler (a batch at a time) as a moment of the AG-UI
// table, with the stream's identity as facts (mapping.TransportAGUI): the
// event's type, and its threadId and runId, or the stream's (from the run
// input the UI posted, then from RUN_STARTED) where the event has none.
package agui
