package acp

import (
	"bytes"
	"io"
	"sync/atomic"
)

// Direction says which way a line travelled.
type Direction uint8

// The two directions of an ACP connection.
const (
	ClientToAgent Direction = iota // the editor's stdin, relayed to the agent
	AgentToClient                  // the agent's stdout, relayed to the editor
)

// String names the direction for logs.
func (d Direction) String() string {
	if d == ClientToAgent {
		return "client->agent"
	}
	return "agent->client"
}

// Stats counts what the tee saw. Fields are updated atomically while the
// tee runs; read them after Run returns.
type Stats struct {
	Bytes    [2]atomic.Int64 // relayed, per Direction
	Lines    atomic.Int64    // complete lines offered to the observer
	Dropped  atomic.Int64    // lines the full queue could not take
	TooLong  atomic.Int64    // lines over the bound, passed through unobserved
	Invalid  atomic.Int64    // lines that are not JSON, passed through unobserved
	Observed atomic.Int64    // messages handed to the handler
	Failed   atomic.Int64    // handler errors
}

// item is one queued observation: a copied line, or a too-long marker.
type item struct {
	dir     Direction
	line    []byte
	tooLong int // the size of a line over the bound; line is nil then
}

// queue is the bounded hand-off from the relays to the observer. Offers
// never block: a full queue drops the line and counts it.
type queue struct {
	ch       chan item
	bytes    atomic.Int64
	maxBytes int64
	stats    *Stats
}

func newQueue(lines int, maxBytes int64, st *Stats) *queue {
	return &queue{ch: make(chan item, lines), maxBytes: maxBytes, stats: st}
}

// room reports whether the queue can take a line now (a hint: another
// relay may fill it first, and offer still checks).
func (q *queue) room() bool {
	return len(q.ch) < cap(q.ch) && q.bytes.Load() < q.maxBytes
}

// offer queues it unless the queue is full (by count or by bytes).
func (q *queue) offer(it item) {
	n := int64(len(it.line))
	if q.bytes.Add(n) > q.maxBytes {
		q.bytes.Add(-n)
		q.stats.Dropped.Add(1)
		return
	}
	select {
	case q.ch <- it:
	default:
		q.bytes.Add(-n)
		q.stats.Dropped.Add(1)
	}
}

// taken releases an item's bytes once the observer has it.
func (q *queue) taken(it item) { q.bytes.Add(-int64(len(it.line))) }

// relay copies src to dst chunk by chunk as it arrives, handing copies of
// the chunk's complete lines to the observer queue on the way.
type relay struct {
	dir     Direction
	src     io.Reader
	dst     io.Writer
	q       *queue
	max     int // the line bound
	stats   *Stats
	buf     []byte
	partial []byte // the current line's bytes seen so far
	over    int    // > 0: the current line passed the bound; its size so far
}

// readSize is the relay's read chunk.
const readSize = 64 << 10

// run relays until src ends or dst fails, returning the first error (nil at
// EOF). A last line without a newline is offered too.
func (r *relay) run() error {
	if r.buf == nil {
		r.buf = make([]byte, readSize)
	}
	for {
		n, err := r.src.Read(r.buf)
		if n > 0 {
			// Framing first keeps the join causal: a line is queued before
			// the peer can see it, so a response is never observed before
			// the request it answers. Framing never blocks (offers drop).
			r.frame(r.buf[:n])
			if _, werr := r.dst.Write(r.buf[:n]); werr != nil {
				return werr
			}
			r.stats.Bytes[r.dir].Add(int64(n))
		}
		if err != nil {
			if len(r.partial) > 0 || r.over > 0 {
				r.end(nil)
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// frame splits a relayed chunk into lines. The lines that lie wholly in
// the chunk share one copy of it (one allocation per chunk, not per line),
// made only when the queue has room.
func (r *relay) frame(b []byte) {
	var shared []byte // a copy of b[base:] the chunk's own lines slice into
	base := 0
	for off := 0; off < len(b); {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			r.accumulate(b[off:])
			return
		}
		if len(r.partial) > 0 || r.over > 0 || i > r.max {
			r.end(b[off : off+i])
		} else if r.q.room() {
			if shared == nil {
				base = off
				shared = bytes.Clone(b[off : off+bytes.LastIndexByte(b[off:], '\n')])
			}
			lo := off - base
			r.send(shared[lo : lo+i : lo+i])
		} else {
			r.skip(b[off : off+i])
		}
		off += i + 1
	}
}

// accumulate keeps part of a line that continues in a later chunk.
func (r *relay) accumulate(p []byte) {
	switch {
	case r.over > 0:
		r.over += len(p)
	case len(r.partial)+len(p) > r.max:
		r.over = len(r.partial) + len(p)
		r.partial = r.release(r.partial)
	default:
		r.partial = append(r.partial, p...)
	}
}

// end completes the current (partial) line with its last piece and offers
// a copy.
func (r *relay) end(last []byte) {
	if r.over > 0 || len(r.partial)+len(last) > r.max {
		size := r.over + len(r.partial) + len(last)
		r.over, r.partial = 0, r.release(r.partial)
		r.stats.TooLong.Add(1)
		r.q.offer(item{dir: r.dir, tooLong: size})
		return
	}
	line := append(bytes.Clone(r.partial), last...)
	r.partial = r.release(r.partial)
	r.send(line)
}

// send offers one complete line, skipping blank ones.
func (r *relay) send(line []byte) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	r.stats.Lines.Add(1)
	r.q.offer(item{dir: r.dir, line: line})
}

// skip counts a line the full queue cannot take, without copying it.
func (r *relay) skip(line []byte) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	r.stats.Lines.Add(1)
	r.stats.Dropped.Add(1)
}

// release empties the line buffer, dropping a large one so one huge line
// does not pin its memory for the connection's life.
func (r *relay) release(b []byte) []byte {
	if cap(b) > 1<<20 {
		return nil
	}
	return b[:0]
}
