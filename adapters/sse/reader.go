package sse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aep-hook/aep-hook/shim"
)

// DefaultMaxEvent is the largest event data a Reader keeps when its limit
// is not set: 8 MiB.
const DefaultMaxEvent = 8 << 20

// readSize is how much a Reader asks its source for at a time.
const readSize = 32 << 10

// Event is one dispatched event.
type Event struct {
	// ID is the stream's last-event-id when the event was dispatched: the
	// "id:" field as last set (it persists across events until changed),
	// "" while the stream never set one.
	ID string
	// Name is the "event:" field; "" means the default type, "message".
	Name string
	// Data is the event's data lines joined with LF.
	Data []byte
	// Retry is the reconnection time a "retry:" field of this event asked
	// for, 0 when it carried none.
	Retry time.Duration
}

// TooLongError reports an event whose data passed the reader's limit; the
// event was skipped.
type TooLongError struct {
	// Size is the event's data size, counted as far as it was read.
	Size int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("sse: event data of %d bytes over the limit; skipped", e.Size)
}

// Failure is how a follower records the skipped event: one event lost,
// the stream going on.
func (e *TooLongError) Failure(adapter string) shim.Failure {
	return shim.Failure{Adapter: adapter, Stage: "oversized", Lost: 1, Bytes: e.Size,
		Error: fmt.Sprintf("%s stream event of %d bytes or more is over the bound: skipped, following goes on after it", adapter, e.Size)}
}

// Reader reads events from a stream. It is not safe for concurrent use.
type Reader struct {
	src  io.Reader
	max  int
	buf  []byte // buf[pos:] is read but not yet parsed
	pos  int
	err  error  // the source's error, returned once buf is drained
	bom  bool   // the byte-order mark check is done
	cr   bool   // the last line ended at CR: a following LF belongs to it
	line []byte // the current line, up to the limit
	n    int    // the current line's whole length

	lastID string
	name   string
	id     string
	idSet  bool
	data   []byte
	has    bool // a data line was seen
	over   int  // > 0: the current event's data passed the limit
	retry  time.Duration
}

// NewReader returns a Reader over src keeping at most max bytes of one
// event's data (max <= 0 means DefaultMaxEvent).
func NewReader(src io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	return &Reader{src: src, max: max}
}

// LastEventID is the stream's last-event-id: the id of the last event that
// set one (what a client sends back as Last-Event-ID when it reconnects).
func (rd *Reader) LastEventID() string { return rd.lastID }

// Next returns the next event. At the end of the stream it returns io.EOF
// (an event cut off by the end is dropped, as the format says); a read
// error is returned as it came. An event over the limit returns a
// *TooLongError and no event; calling Next again goes on with the stream.
func (rd *Reader) Next() (Event, error) {
	for {
		line, ok, err := rd.nextLine()
		if err != nil {
			return Event{}, err
		}
		if ev, ok, err := rd.apply(line, ok); ok || err != nil {
			return ev, err
		}
	}
}

// Feed frames the next bytes of a stream that is pushed rather than
// pulled (a body relayed to someone else as it arrives) and calls emit
// with each event it completes, or with a *TooLongError for one over the
// limit. A Reader made with a nil source is fed this way only; the events
// are the same however the stream is split into Feed calls.
func (rd *Reader) Feed(b []byte, emit func(Event, error)) {
	for len(b) > 0 {
		used, ended := rd.scan(b)
		b = b[used:]
		if !ended {
			continue
		}
		line, ok, _ := rd.endLine()
		if ev, ok, err := rd.apply(line, ok); ok || err != nil {
			emit(ev, err)
		}
	}
}

// apply takes one whole line (ok is false for one over the limit, already
// accounted): a blank line dispatches the event, any other sets a field.
func (rd *Reader) apply(line []byte, ok bool) (Event, bool, error) {
	switch {
	case !ok:
		return Event{}, false, nil
	case len(line) == 0:
		return rd.dispatch()
	}
	rd.field(line)
	return Event{}, false, nil
}

// nextLine returns the next complete line without its terminator. ok is
// false for a line that passed the limit (consumed, not returned).
func (rd *Reader) nextLine() (line []byte, ok bool, err error) {
	for {
		if rd.pos < len(rd.buf) {
			used, ended := rd.scan(rd.buf[rd.pos:])
			rd.pos += used
			if ended {
				return rd.endLine()
			}
			continue
		}
		if rd.err != nil {
			return nil, false, rd.err
		}
		rd.fill()
	}
}

// scan adds the head of b (not empty) to the current line, up to and
// including its terminator: used is how many bytes it took, ended whether
// the line is complete.
func (rd *Reader) scan(b []byte) (used int, ended bool) {
	if rd.cr {
		rd.cr = false
		if b[0] == '\n' {
			return 1, false // the LF of a CRLF
		}
	}
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		rd.appendLine(b)
		return len(b), false
	}
	rd.appendLine(b[:i])
	rd.cr = b[i] == '\r'
	return i + 1, true
}

// fill reads the next chunk of the source into buf.
func (rd *Reader) fill() {
	if rd.src == nil {
		rd.err = io.EOF // a Reader that is fed has nothing to pull
		return
	}
	if cap(rd.buf) < readSize {
		rd.buf = make([]byte, readSize)
	}
	rd.buf = rd.buf[:cap(rd.buf)]
	for tries := 0; ; tries++ {
		n, err := rd.src.Read(rd.buf)
		rd.buf, rd.pos = rd.buf[:n], 0
		if err != nil {
			rd.err = err
		}
		if n > 0 || err != nil {
			break
		}
		if tries == 100 {
			rd.err = io.ErrNoProgress
			break
		}
		rd.buf = rd.buf[:cap(rd.buf)]
	}
}

// lineCap is the longest line a Reader keeps whole: a full data line.
func (rd *Reader) lineCap() int { return rd.max + len("\xEF\xBB\xBFdata: ") }

// appendLine adds b to the current line, keeping at most lineCap bytes
// (the head tells what a longer line was) and counting its whole length.
func (rd *Reader) appendLine(b []byte) {
	rd.n += len(b)
	if room := rd.lineCap() - len(rd.line); room > 0 {
		rd.line = append(rd.line, b[:min(room, len(b))]...)
	}
}

// endLine ends the current line: the line (ok false when it passed the
// limit, a data line marking its event as too long).
func (rd *Reader) endLine() ([]byte, bool, error) {
	line, n := rd.line, rd.n
	rd.line, rd.n = rd.line[:0], 0
	if !rd.bom {
		rd.bom = true
		if bytes.HasPrefix(line, []byte("\xEF\xBB\xBF")) {
			line, n = line[3:], n-3
		}
	}
	if n <= rd.lineCap()-3 {
		return line, true, nil
	}
	if value, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		// A data line past the limit: the event is reported by size,
		// never half kept. Any other field that long is ignored anyway.
		size := n - len("data:")
		if bytes.HasPrefix(value, []byte{' '}) {
			size--
		}
		rd.has = true
		if rd.over == 0 {
			rd.over = len(rd.data)
		}
		rd.over += size
		rd.data = rd.data[:0]
	}
	return nil, false, nil
}

// field applies one "name: value" line.
func (rd *Reader) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte{' '})
	}
	switch string(name) {
	case "": // a comment: keep-alives
	case "data":
		rd.has = true
		if rd.over > 0 {
			rd.over += len(value) + 1
			return
		}
		rd.data = append(append(rd.data, value...), '\n')
		if len(rd.data) > rd.max+1 {
			rd.over = len(rd.data)
			rd.data = rd.data[:0]
		}
	case "event":
		rd.name = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			rd.id, rd.idSet = string(value), true
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
			rd.retry = time.Duration(ms) * time.Millisecond
		}
	}
}

// dispatch ends the current event; ok is false when there was nothing to
// dispatch (no data line).
func (rd *Reader) dispatch() (ev Event, ok bool, err error) {
	if rd.idSet {
		rd.lastID = rd.id
	}
	switch {
	case rd.over > 0:
		err = &TooLongError{Size: rd.over}
	case rd.has:
		ev = Event{ID: rd.lastID, Name: rd.name, Retry: rd.retry, Data: bytes.Clone(bytes.TrimSuffix(rd.data, []byte{'\n'}))}
		ok = true
	}
	rd.name, rd.id, rd.idSet, rd.retry, rd.over, rd.has = "", "", false, 0, 0, false
	if cap(rd.data) > 1<<20 {
		rd.data = nil
	} else {
		rd.data = rd.data[:0]
	}
	return ev, ok, err
}
