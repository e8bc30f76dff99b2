package agui

import (
	"bytes"
)

// sseParser frames a Server-Sent Events byte stream into the data payloads
// of its events (WHATWG HTML §9.2.6): lines end at CR, LF or CRLF; "data:"
// lines of one event join with LF; a blank line dispatches. Comments and
// other fields are ignored. One event's data is bounded: a longer event is
// reported by size only.
type sseParser struct {
	max     int
	line    []byte // the current line so far
	lineLen int    // its length, counting what was discarded past max
	data    []byte // the current event's data so far
	hasData bool
	over    int // > 0: the current event passed the bound; its size so far
	lastCR  bool
	emit    func(data []byte, tooLong int)
}

// feed parses the next bytes of the stream.
func (p *sseParser) feed(b []byte) {
	for len(b) > 0 {
		if p.lastCR {
			p.lastCR = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.appendLine(b)
			return
		}
		p.appendLine(b[:i])
		p.lastCR = b[i] == '\r'
		p.endLine()
		b = b[i+1:]
	}
}

func (p *sseParser) appendLine(b []byte) {
	p.lineLen += len(b)
	if room := p.max + len("data: ") - len(p.line); room > 0 {
		p.line = append(p.line, b[:min(room, len(b))]...)
	}
}

func (p *sseParser) endLine() {
	line, n := p.line, p.lineLen
	p.line, p.lineLen = p.line[:0], 0
	if n == 0 {
		p.dispatch()
		return
	}
	if n > len(line) {
		// Truncated past the bound: a data line makes the event too long;
		// any other field is ignored anyway.
		if bytes.HasPrefix(line, []byte("data")) {
			p.over += n + len(p.data)
			p.data = p.data[:0]
		}
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte{' '})
	}
	if string(field) != "data" {
		return
	}
	if p.over > 0 {
		p.over += len(value) + 1
		return
	}
	if p.hasData {
		p.data = append(p.data, '\n')
	}
	p.data = append(p.data, value...)
	p.hasData = true
	if len(p.data) > p.max {
		p.over = len(p.data)
		p.data = p.data[:0]
	}
}

// dispatch ends the current event.
func (p *sseParser) dispatch() {
	switch {
	case p.over > 0:
		p.emit(nil, p.over)
	case p.hasData && len(p.data) > 0:
		p.emit(bytes.Clone(p.data), 0)
	}
	p.over, p.hasData = 0, false
	if cap(p.data) > 1<<20 {
		p.data = nil
	} else {
		p.data = p.data[:0]
	}
	if cap(p.line) > 1<<20 {
		p.line = nil
	}
}
