// Package sse reads Server-Sent Events streams (the text/event-stream
// format of WHATWG HTML §9.2): the framing every SSE bridge shares, and
// nothing about what the events mean.
//
// A Reader pulls one event at a time off any io.Reader (an HTTP response
// body): lines end at CR, LF or CRLF, a leading byte-order mark is
// skipped, "data:" lines of one event join with LF, "id:", "event:" and
// "retry:" set the event's fields, comments (":" lines, the usual
// keep-alives) and unknown fields are ignored, and a blank line dispatches.
// A stream relayed elsewhere as it arrives (a tee) is pushed instead:
// Reader.Feed frames the bytes it is given and hands over each event as it
// completes, the same events Next would return.
// Input is bounded: an event whose data passes the limit is skipped whole
// and reported as a *TooLongError, so a hostile stream costs bounded
// memory, and the reader goes on with the next event.
package sse
