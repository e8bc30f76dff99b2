package acp

import (
	"bytes"
	"io"
	"sync"
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
	Bytes   [2]atomic.Int64 // relayed, per Direction
	Lines   atomic.Int64    // complete lines framed for observation
	Dropped atomic.Int64    // lines the full queue could not take (counted by newline), both directions
	// DroppedBy splits Dropped per Direction: a message relayed both ways
	// (an echoing agent) is two lines, one each way.
	DroppedBy [2]atomic.Int64
	// Unread is the bytes, per Direction, the spliced relay moved on
	// without reading them at all because the queue was (nearly) full: a
	// burst beyond what the observer can take costs it no copy. Their
	// lines are in neither Lines nor Dropped.
	Unread [2]atomic.Int64
	// Undrained is the lines still queued when the drain bound gave them
	// up (Result.Drained false).
	Undrained atomic.Int64
	TooLong   atomic.Int64 // lines over the bound, passed through unobserved
	Invalid   atomic.Int64 // lines that are not JSON, passed through unobserved
	Observed  atomic.Int64 // messages handed to the handler
	Failed    atomic.Int64 // handler errors
}

// drop counts n lines of direction d the observer will never see.
func (s *Stats) drop(d Direction, n int64) {
	if n > 0 {
		s.Dropped.Add(n)
		s.DroppedBy[d].Add(n)
	}
}

// lost is a count that grows whenever observation loses something: lines
// dropped, bytes relayed unread. The observer backs off while it grows.
func (s *Stats) lost() int64 {
	return s.Dropped.Load() + s.Unread[ClientToAgent].Load() + s.Unread[AgentToClient].Load()
}

// item is one queued observation: a copy of a relayed chunk, framed into
// lines by the observer.
type item struct {
	dir   Direction
	chunk []byte
	lines int // the newlines in chunk, counted against the queue's bound
	// gap says chunks of this direction were dropped just before this one:
	// the observer forgets the line in progress; cut says the dropped bytes
	// ended inside a line, whose tail (up to this chunk's first newline) it
	// skips too.
	gap, cut bool
	// eof says the direction ended after this chunk (which may be empty):
	// a last line without a newline is complete.
	eof bool
}

// queue is the bounded hand-off from the relays to the observer, bounded by
// lines (what observing costs) and bytes (what holding costs). Offers never
// block: a full queue refuses the chunk.
type queue struct {
	ch                 chan item
	lines, bytes       atomic.Int64
	maxLines, maxBytes int64
}

func newQueue(lines int, maxBytes int64) *queue {
	return &queue{ch: make(chan item, lines), maxLines: int64(lines), maxBytes: maxBytes}
}

// room reports whether the queue can take a chunk of n bytes and lines
// lines now (a hint: the observer may free room or another relay take it;
// offer decides).
func (q *queue) room(n, lines int) bool {
	return len(q.ch) < cap(q.ch) && q.bytes.Load()+int64(n) <= q.maxBytes && q.lines.Load()+int64(lines) <= q.maxLines
}

// nearlyFull reports whether the queue is within an eighth of its line
// bound, or cannot take another piece's bytes: the spliced relay then
// passes the stream on unread rather than read it only to count the
// lines the queue would refuse.
func (q *queue) nearlyFull() bool {
	return len(q.ch) == cap(q.ch) || q.lines.Load() > q.maxLines-q.maxLines/8 || q.bytes.Load()+pieceSize > q.maxBytes
}

// offer queues it unless the queue is full. A chunk costs its capacity:
// a pooled buffer holds all of it however little it carries.
func (q *queue) offer(it item) bool {
	n, l := int64(cap(it.chunk)), int64(it.lines)
	if q.bytes.Add(n) > q.maxBytes || q.lines.Add(l) > q.maxLines {
		q.bytes.Add(-n)
		q.lines.Add(-l)
		return false
	}
	select {
	case q.ch <- it:
		return true
	default:
		q.bytes.Add(-n)
		q.lines.Add(-l)
		return false
	}
}

// taken releases an item's share of the bound once the observer is done
// with it.
func (q *queue) taken(it item) {
	q.bytes.Add(-int64(cap(it.chunk)))
	q.lines.Add(-int64(it.lines))
	if cap(it.chunk) == pieceSize {
		putChunk(it.chunk)
	}
}

// pieceSize is the most of a relayed span queued as one chunk. The
// observer takes whole chunks, and how long it holds a processor in one go
// grows with the chunk (see maxBatchLines): a burst's 64 KiB reads were
// some 200 lines, two milliseconds of observing, each.
const pieceSize = 16 << 10

// chunks recycles the relays' piece-sized observation buffers: a burst
// queues one per piece, and allocating each anew (zeroed, faulted in, then
// collected) costs the relay more than the copy itself.
var chunks = sync.Pool{New: func() any { return new([pieceSize]byte) }}

// getChunk returns a piece-sized buffer (its contents are garbage).
func getChunk() []byte { return chunks.Get().(*[pieceSize]byte)[:] }

// putChunk returns a buffer from getChunk once nothing refers to it.
func putChunk(b []byte) { chunks.Put((*[pieceSize]byte)(b[:pieceSize])) }

// smallChunk is the size under which a queued copy is allocated to fit
// rather than pooled: a paced stream's reads are a line or two each, and a
// queue of such reads must not hold a pooled buffer apiece.
const smallChunk = 8 << 10

// copyChunk is the observer's copy of a relayed chunk.
func copyChunk(b []byte) []byte {
	if len(b) < smallChunk {
		return bytes.Clone(b)
	}
	c := getChunk()
	return c[:copy(c, b)]
}

// relay copies src to dst chunk by chunk as it arrives, queueing a copy of
// each chunk for the observer on the way. It only counts a chunk's
// newlines (a vector scan); framing is the observer's, off the relay's path.
type relay struct {
	dir     Direction
	src     io.Reader
	dst     io.Writer
	q       *queue
	max     int // the line bound
	stats   *Stats
	buf     []byte
	lineLen int  // bytes relayed since the last newline
	gap     bool // a chunk was dropped since the last one queued
	cut     bool // and the last one dropped ended inside a line
	unread  int  // the spans relayed unread (see Stats.Unread), for tests
	// halt, when the tee closes an end of the relay's (the agent's) while it
	// runs, ends the spliced relay's waits on that end first (see splicer);
	// nil when nothing does.
	halt *halt
}

// skip accounts for n bytes relayed unread: the observer forgets the line
// in progress and, not knowing where in a line the span ended, skips
// through the next newline it is given (a line lost there is counted
// then).
func (r *relay) skip(n int) {
	r.stats.Unread[r.dir].Add(int64(n))
	r.gap, r.cut, r.lineLen = true, true, 0
	r.unread++
}

// readSize is the relay's read chunk.
const readSize = 64 << 10

// run relays until src ends or dst fails, returning the first error (nil at
// EOF). The end is queued too, so a last line without a newline is
// observed.
func (r *relay) run() error {
	defer r.halt.close()
	if ok, err := r.spliced(); ok {
		return err
	}
	if r.buf == nil {
		r.buf = make([]byte, readSize)
	}
	for {
		n, err := r.src.Read(r.buf)
		if n > 0 {
			// Queueing first keeps the join causal: a line is queued before
			// the peer can see it, so a response is never observed before
			// the request it answers. Queueing never blocks (offers drop).
			r.observeAll(r.buf[:n])
			if _, werr := r.dst.Write(r.buf[:n]); werr != nil {
				return werr
			}
			r.stats.Bytes[r.dir].Add(int64(n))
		}
		if err != nil {
			r.end()
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// observe queues a copy of a relayed chunk (of at most pieceSize bytes),
// or counts the lines it ends when the queue is full. The inside of a line
// already past the bound is not queued at all: the observer has given up
// on that line.
func (r *relay) observe(b []byte) {
	lines := bytes.Count(b, []byte{'\n'})
	if lines == 0 {
		past := r.lineLen > r.max
		r.lineLen += len(b)
		if past {
			return
		}
	} else {
		r.lineLen = len(b) - 1 - bytes.LastIndexByte(b, '\n')
	}
	cost := len(b)
	if len(b) >= smallChunk {
		cost = pieceSize
	}
	if r.q.room(cost, lines) {
		c := copyChunk(b)
		if r.q.offer(item{dir: r.dir, chunk: c, lines: lines, gap: r.gap, cut: r.cut}) {
			r.gap = false
			return
		}
		if cap(c) == pieceSize {
			putChunk(c)
		}
	}
	r.gap, r.cut = true, r.lineLen > 0
	r.stats.drop(r.dir, int64(lines))
}

// observeAll observes a relayed span of any length a piece at a time.
func (r *relay) observeAll(b []byte) {
	for len(b) > 0 {
		k := min(len(b), pieceSize)
		r.observe(b[:k])
		b = b[k:]
	}
}

// end queues the direction's end; when the queue cannot take it, a line in
// progress is lost, and counted.
func (r *relay) end() {
	if !r.q.offer(item{dir: r.dir, gap: r.gap, cut: r.cut, eof: true}) && r.lineLen > 0 {
		r.stats.drop(r.dir, 1)
	}
}
