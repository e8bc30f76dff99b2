// Package agui is the HTTP tee for AG-UI agents: a reverse proxy the UI
// talks to instead of the agent. It forwards every request and response
// unchanged (net/http/httputil.ReverseProxy, flushing event-stream responses
// as they arrive) and observes each text/event-stream response on the side:
// the SSE framing is parsed off the bytes as the client receives them, and
// each event's JSON is queued, bounded and without ever blocking the stream,
// for one observer per stream. The observer stamps the stream's threadId
// and runId (from the run input the UI posted, then from RUN_STARTED) onto
// events that do not carry them and hands each event to the caller's
// handler as a moment of the AG-UI mapping table.
package agui
