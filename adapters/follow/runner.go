package follow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aep-hook/aep-hook/internal/lru"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Item is one wire message of a stream, decoded by the bridge.
type Item struct {
	// Moments are what the message means to the table (none for a
	// keep-alive or a message the bridge drops).
	Moments []mapping.Moment
	// Key identifies the message for dedupe ("" never counts as a
	// duplicate): the vendor's event id.
	Key string
	// Cursor is the stream position this message reached, "" when it
	// moves none; the Runner keeps the last one (see CursorStore).
	Cursor string
}

// Stream is one open connection's messages.
type Stream interface {
	// Next blocks for the next message. It returns io.EOF when the peer
	// ended the stream, any other error when it broke; Close unblocks it.
	Next() (Item, error)
	// Close ends the connection.
	Close() error
}

// Source is a vendor's stream surface.
type Source interface {
	// Open connects a new stream.
	Open(ctx context.Context) (Stream, error)
	// CatchUp returns, in order, the moments that bring the record up to
	// date with what happened since cursor ("" when the Runner has none),
	// typically from the vendor's REST surface. It is called after every
	// successful Open, while the new stream's messages queue.
	CatchUp(ctx context.Context, cursor string) ([]mapping.Moment, error)
}

// CursorStore keeps the Runner's cursor across restarts.
type CursorStore interface {
	Load() (string, error)
	Save(cursor string) error
}

// Defaults for the zero Runner fields.
const (
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	DefaultWindow     = 4096
	DefaultMaxBatch   = 256
	DefaultQueue      = 4096
	// cursorEvery bounds how often the cursor is written while items flow.
	cursorEvery = time.Second
)

// Runner follows one Source until its context ends.
type Runner struct {
	Name   string // the bridge's name, for failures and status lines ("opencode")
	Source Source
	Handle shim.Handler
	Errors shim.Recorder
	// Cursor, when set, persists the cursor (loaded at start).
	Cursor CursorStore
	// MinBackoff and MaxBackoff bound the wait between connect attempts.
	MinBackoff, MaxBackoff time.Duration
	// Stall, when positive, reconnects a stream that delivered nothing,
	// not even a keep-alive, for this long.
	Stall time.Duration
	// Window is how many recent Keys are remembered for dedupe (0 means
	// DefaultWindow; so for the other zero fields).
	Window int
	// MaxBatch bounds the items handed to Handle at once.
	MaxBatch int
	// Status, when set, receives one line per connection change.
	Status func(line string)

	stats Stats
}

// Stats counts what a Runner did; read it with Runner.Stats.
type Stats struct {
	Connects   atomic.Int64 // streams opened
	Items      atomic.Int64 // messages read
	Duplicates atomic.Int64 // messages dropped as already handled
	Moments    atomic.Int64 // moments handed to the emitter
	CaughtUp   atomic.Int64 // moments from catch-ups
	Failures   atomic.Int64 // failures recorded
}

// Snapshot is a copy of the counters.
type Snapshot struct {
	Connects, Items, Duplicates, Moments, CaughtUp, Failures int64
}

// Stats returns the counters so far.
func (r *Runner) Stats() Snapshot {
	s := &r.stats
	return Snapshot{s.Connects.Load(), s.Items.Load(), s.Duplicates.Load(), s.Moments.Load(), s.CaughtUp.Load(), s.Failures.Load()}
}

// read is one result of a stream's reader goroutine.
type read struct {
	item Item
	err  error
}

// Run follows the source until ctx ends. It returns nil then; it never
// returns early for a broken stream or a refused connect.
func (r *Runner) Run(ctx context.Context) error {
	if r.Source == nil || r.Handle == nil {
		return errors.New("follow: a Runner needs a Source and a Handle")
	}
	window := lru.New[string](cmp.Or(r.Window, DefaultWindow))
	cursor := ""
	if r.Cursor != nil {
		c, err := r.Cursor.Load()
		if err != nil {
			r.fail("cursor", fmt.Sprintf("load cursor: %v", err), 0)
		}
		cursor = c
	}
	run := &session{r: r, window: window, cursor: cursor}
	defer run.saveCursor()
	attempt := 0
	for ctx.Err() == nil {
		st, err := r.Source.Open(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			r.fail("connect", err.Error(), 0)
			if attempt == 0 || attempt%10 == 0 {
				r.status(fmt.Sprintf("cannot connect (attempt %d): %v", attempt+1, err))
			}
			if !sleep(ctx, r.backoff(attempt)) {
				break
			}
			attempt++
			continue
		}
		r.stats.Connects.Add(1)
		if attempt > 0 || r.stats.Connects.Load() > 1 {
			r.status("reconnected")
		} else {
			r.status("connected")
		}
		attempt = 0
		broke := run.follow(ctx, st)
		if ctx.Err() != nil {
			break
		}
		r.status(fmt.Sprintf("stream ended (%v); reconnecting", broke))
		if !sleep(ctx, r.backoff(0)) {
			break
		}
	}
	return nil
}

// session is one Runner's running state across connections.
type session struct {
	r         *Runner
	window    *lru.Set[string]
	cursor    string
	saved     string
	lastSaved time.Time
}

// follow handles one open stream until it ends or ctx does, and returns
// why it ended.
func (s *session) follow(ctx context.Context, st Stream) error {
	r := s.r
	reads := make(chan read, DefaultQueue)
	var once sync.Once
	closeStream := func() { once.Do(func() { st.Close() }) }
	defer closeStream()
	go func() {
		defer close(reads)
		for {
			it, err := st.Next()
			if err != nil {
				reads <- read{err: err}
				return
			}
			reads <- read{item: it}
		}
	}()
	// Catch up while the new stream's messages queue: both may carry the
	// same facts; the tables are idempotent and the window drops repeats.
	ms, err := r.Source.CatchUp(ctx, s.cursor)
	if err != nil && ctx.Err() == nil {
		r.fail("catchup", err.Error(), 0)
	}
	if len(ms) > 0 {
		r.stats.CaughtUp.Add(int64(len(ms)))
		s.handle(ms, nil)
	}
	var stall *time.Timer
	var stalled <-chan time.Time
	if r.Stall > 0 {
		stall = time.NewTimer(r.Stall)
		defer stall.Stop()
		stalled = stall.C
	}
	maxBatch := cmp.Or(r.MaxBatch, DefaultMaxBatch)
	var why error
	for {
		select {
		case <-ctx.Done():
			closeStream()
			s.drain(reads)
			return ctx.Err()
		case <-stalled:
			why = fmt.Errorf("no message for %v", r.Stall)
			r.fail("stall", why.Error(), 0)
			closeStream()
			s.drain(reads)
			return why
		case rd, ok := <-reads:
			if !ok {
				return io.ErrUnexpectedEOF
			}
			if stall != nil {
				stall.Reset(r.Stall)
			}
			batch := []read{rd}
			for len(batch) < maxBatch {
				select {
				case more, ok := <-reads:
					if ok {
						batch = append(batch, more)
						continue
					}
				default:
				}
				break
			}
			if why = s.take(batch); why != nil {
				if !errors.Is(why, io.EOF) {
					r.fail("read", why.Error(), 0)
				}
				return why
			}
		}
	}
}

// drain hands over what the reader had already read before the stream
// was closed.
func (s *session) drain(reads <-chan read) {
	var batch []read
	for rd := range reads {
		batch = append(batch, rd)
	}
	s.take(batch)
}

// take handles a batch of reads in order and returns the stream's error,
// if the batch ends with one.
func (s *session) take(batch []read) error {
	var ms []mapping.Moment
	var keys []string
	var end error
	for _, rd := range batch {
		if rd.err != nil {
			end = rd.err
			break
		}
		s.r.stats.Items.Add(1)
		it := rd.item
		if it.Key != "" && !s.window.Add(it.Key) {
			s.r.stats.Duplicates.Add(1)
			continue
		}
		if len(it.Moments) > 0 {
			ms = append(ms, it.Moments...)
			if it.Key != "" {
				keys = append(keys, it.Key)
			}
		}
		if it.Cursor != "" {
			s.cursor = it.Cursor
		}
	}
	s.handle(ms, keys)
	if time.Since(s.lastSaved) >= cursorEvery {
		s.saveCursor()
	}
	return end
}

// handle hands moments to the emitter; keys of a batch that could not be
// written are forgotten, so a redelivery may write them.
func (s *session) handle(ms []mapping.Moment, keys []string) {
	if len(ms) == 0 {
		return
	}
	r := s.r
	r.stats.Moments.Add(int64(len(ms)))
	res, err := r.Handle(ms)
	for _, x := range res {
		if x.Err != nil && !errors.Is(x.Err, err) {
			r.fail("map", x.Err.Error(), 0)
		}
	}
	if err != nil {
		r.fail("emit", err.Error(), len(ms))
		for _, k := range keys {
			s.window.Remove(k)
		}
	}
}

func (s *session) saveCursor() {
	s.lastSaved = time.Now()
	if s.r.Cursor == nil || s.cursor == s.saved {
		return
	}
	if err := s.r.Cursor.Save(s.cursor); err != nil {
		s.r.fail("cursor", fmt.Sprintf("save cursor: %v", err), 0)
		return
	}
	s.saved = s.cursor
}

func (r *Runner) fail(stage, msg string, lost int) {
	r.stats.Failures.Add(1)
	if r.Errors != nil {
		r.Errors.Record(shim.Failure{Adapter: r.Name, Stage: stage, Error: msg, Lost: lost})
	}
}

func (r *Runner) status(line string) {
	if r.Status != nil {
		r.Status(line)
	}
}

// backoff is the wait before connect attempt n+1: exponential from
// MinBackoff to MaxBackoff, with up to a fifth of jitter either way.
func (r *Runner) backoff(n int) time.Duration {
	lo, hi := cmp.Or(r.MinBackoff, DefaultMinBackoff), cmp.Or(r.MaxBackoff, DefaultMaxBackoff)
	d := lo
	for i := 0; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	jitter := time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
	return max(d+jitter, time.Millisecond)
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
