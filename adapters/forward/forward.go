// Package forward is the runtime behind `aep-hook forward <vendor>`: the
// pipe a plugin forwarder (the pi extension; any plugin whose vendor has a
// stream transport) writes its vendor's moments to, one JSON line each, in
// the transport's moment form (what `aep-hook map` reads). The plugin starts
// one forwarder and writes without waiting; the forwarder decodes each line
// with the transport's Decode and hands what has queued to the emitter in
// batches, until its input ends.
//
// Input is bounded: a line longer than MaxLine is skipped (and recorded as
// lost), so a hostile or broken writer costs bounded memory. A line
// {"aep_lost": N} is the plugin's own report of N moments it dropped (its
// bound on what a stuck forwarder leaves unread): it is recorded, never
// mapped. Nothing here writes anywhere but through the emitter and the
// error log.
package forward

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Defaults for the zero Forwarder fields.
const (
	DefaultMaxLine  = 32 << 20
	DefaultMaxBatch = 256
	// queue is how many read lines wait for the emitter.
	queue = 1024
)

// Forwarder reads one plugin's pipe.
type Forwarder struct {
	// Name is the adapter's name, for failures ("pi").
	Name string
	// Decode turns one line into its moments (adapters.Decode for the
	// vendor's transport).
	Decode func(line []byte) ([]mapping.Moment, error)
	// Handle emits a batch of moments.
	Handle shim.Handler
	// Errors keeps failures, without content; nil drops them.
	Errors shim.Recorder
	// Nonce mints each moment's nonce.
	Nonce func() string
	// Mode and Deltas are the channel posture given to every moment.
	Mode   mapping.Mode
	Deltas bool
	// MaxLine bounds one line; MaxBatch the moments handed over at once.
	MaxLine, MaxBatch int
	// Session, when set, reads a moment's session ("" for none): the
	// forwarder remembers the sessions its input named (at most
	// MaxSessions, the first seen) for Ended.
	Session func(mapping.Moment) string
	// Ended, when set, gives the moments the end of the input means for
	// those sessions: the plugin writes until the agent process exits, so
	// the end of its pipe is the end of that process (OpenCode and Kilo:
	// every turn still open was cut with the server).
	Ended func(sessions []string) []mapping.Moment

	sessions []string
	seen     map[string]bool
}

// MaxSessions bounds the sessions one forwarder remembers for Ended.
const MaxSessions = 4096

// Stats says what one Run did.
type Stats struct {
	Lines, Moments, Skipped, Lost int
}

// line is one read result: a line, or the size of one skipped as too long.
type line struct {
	data    []byte
	tooLong int
}

// Run reads r until it ends and emits every moment. It returns the read
// error that ended it (nil at the end of input).
func (f *Forwarder) Run(r io.Reader) (Stats, error) {
	var st Stats
	lines := make(chan line, queue)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(r, orInt(f.MaxLine, DefaultMaxLine), lines)
		close(lines)
	}()
	maxBatch := orInt(f.MaxBatch, DefaultMaxBatch)
	for l := range lines {
		batch := []line{l}
	more:
		for len(batch) < maxBatch {
			select {
			case l, ok := <-lines:
				if !ok {
					break more
				}
				batch = append(batch, l)
			default:
				break more
			}
		}
		f.take(batch, &st)
	}
	err := <-readErr
	if err != nil {
		f.fail(shim.Failure{Stage: "read", Error: fmt.Sprintf("read: %v", err)})
	}
	if f.Ended != nil && len(f.sessions) > 0 {
		f.emit(f.Ended(f.sessions), &st)
	}
	return st, err
}

// take decodes a batch of lines and emits their moments.
func (f *Forwarder) take(batch []line, st *Stats) {
	var ms []mapping.Moment
	for _, l := range batch {
		st.Lines++
		if l.tooLong > 0 {
			st.Skipped++
			f.fail(shim.Failure{Stage: "read", Bytes: l.tooLong, Lost: 1,
				Error: fmt.Sprintf("a line of %d bytes passed the %d-byte bound: skipped", l.tooLong, orInt(f.MaxLine, DefaultMaxLine))})
			continue
		}
		if n := gjson.GetBytes(l.data, "aep_lost"); n.Type == gjson.Number {
			st.Lost += int(n.Int())
			f.fail(shim.Failure{Stage: "plugin", Lost: int(n.Int()),
				Error: fmt.Sprintf("the %s plugin dropped %d moments: aep-hook fell behind or could not be started", f.Name, n.Int())})
			continue
		}
		got, err := f.Decode(l.data)
		if err != nil {
			st.Skipped++
			f.fail(shim.Failure{Stage: "parse", Bytes: len(l.data), Error: err.Error()})
		}
		for _, m := range got {
			f.note(m)
			ms = append(ms, m)
		}
	}
	f.emit(ms, st)
}

// note remembers the moment's session for Ended.
func (f *Forwarder) note(m mapping.Moment) {
	if f.Session == nil || len(f.sessions) >= MaxSessions {
		return
	}
	s := f.Session(m)
	if s == "" || f.seen[s] {
		return
	}
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	f.seen[s] = true
	f.sessions = append(f.sessions, s)
}

// emit gives the moments the channel's posture and a nonce each, and
// hands them to the emitter.
func (f *Forwarder) emit(ms []mapping.Moment, st *Stats) {
	if len(ms) == 0 {
		return
	}
	for i := range ms {
		if f.Nonce != nil {
			ms[i].Nonce = f.Nonce()
		}
		ms[i].Mode, ms[i].Deltas = f.Mode, f.Deltas
	}
	st.Moments += len(ms)
	res, err := f.Handle(ms)
	for _, x := range res {
		if x.Err != nil && !errors.Is(err, x.Err) {
			f.fail(shim.Failure{Hook: x.Hook, Stage: "map", Error: x.Err.Error()})
		}
	}
	if err != nil {
		f.fail(shim.Failure{Stage: "write", Lost: len(ms), Error: err.Error()})
	}
}

func (f *Forwarder) fail(x shim.Failure) {
	if f.Errors == nil {
		return
	}
	x.Adapter = f.Name
	f.Errors.Record(x)
}

// readLines sends r's lines (without their line ends; blank ones dropped)
// to out, each at most max bytes; a longer line is reported by its size.
func readLines(r io.Reader, max int, out chan<- line) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var cur []byte
	size := 0
	for {
		frag, err := br.ReadSlice('\n')
		size += len(frag)
		if size <= max+1 {
			cur = append(cur, frag...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil || (err == io.EOF && size > 0) {
			n := size
			if err == nil {
				n-- // the LF
			}
			if n > max {
				out <- line{tooLong: n}
			} else if data := trimEOL(cur); len(data) > 0 {
				out <- line{data: data}
			}
		}
		cur, size = nil, 0
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// trimEOL drops a trailing LF or CRLF.
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
