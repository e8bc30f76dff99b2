package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Defaults for a Shipper's zero fields.
const (
	DefaultBatchEvents = 500
	DefaultBatchBytes  = 1 << 20
	DefaultMaxLine     = 64 << 20
	DefaultQueueBytes  = 16 << 20
	DefaultBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
	// DefaultHookDeadline bounds the hook path's delivery, well inside the
	// 1 s a vendor like Codex grants a SessionEnd hook.
	DefaultHookDeadline = 300 * time.Millisecond
)

// Shipper delivers the local JSONL logs to destinations through
// per-(destination, log) cursors. Its methods are safe for concurrent use
// once configured.
type Shipper struct {
	Home    string // $AEP_HOME: cursors/, rejected/
	LogRoot string // the JSONL log root ($AEP_HOME/logs)
	Dests   []Destination
	Token   string // bearer token for every destination (never logged)
	// LocalToken, when Token is empty, is sent to destinations on this
	// machine alone: the user's own token, which their listeners accept.
	LocalToken string
	Client     *http.Client // nil: a client with RequestTimeout
	Errors     *shim.ErrorLog
	Now        func() time.Time // nil: time.Now

	BatchEvents int // lines per request; 0: DefaultBatchEvents
	BatchBytes  int // bytes per request; 0: DefaultBatchBytes
	MaxLine     int // longer lines are put aside; 0: DefaultMaxLine
	MaxCapture  redact.Level
	// RequestTimeout bounds one request when Client is nil; 0: 30 s.
	RequestTimeout time.Duration

	// RetryFor bounds how long a failing destination is retried before it
	// is given up for this run: the clock runs from its first failure,
	// across all its logs, and stops at a success, so a collector that is
	// down costs a run RetryFor however many logs wait for it. 0 means
	// until ctx ends, -1 means never retry (the hook path: the next shipper
	// will).
	RetryFor time.Duration
	// LockWait bounds the wait for a log another shipper is delivering;
	// 0 means try once and skip (the holder will deliver it), -1 means
	// until ctx ends.
	LockWait time.Duration
	// Backoff is the first retry delay (doubling, jittered, capped at
	// MaxBackoff); 0: DefaultBackoff.
	Backoff, MaxBackoff time.Duration

	// Pressure turns on AEP-0003 §8.4 backpressure (ship --follow): when a
	// log's undelivered backlog beyond the batch in hand exceeds
	// QueueBytes, debug and info events are skipped and counted; notice
	// and above are always delivered.
	Pressure   bool
	QueueBytes int64

	mu      sync.Mutex
	senders map[string]Sender
	failing map[string]failing // per destination, while it fails
	stats   stats
}

// failing is a destination's run of failures: since when, and the last.
type failing struct {
	since time.Time
	err   error
}

// failed notes a retryable failure of d and returns since when d has been
// failing.
func (s *Shipper) failed(d Destination, err error) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[string]failing{}
	}
	f, ok := s.failing[d.Raw]
	if !ok {
		f.since = s.now()
	}
	f.err = err
	s.failing[d.Raw] = f
	return f.since
}

// recovered ends d's run of failures.
func (s *Shipper) recovered(d Destination) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.failing, d.Raw)
}

// givenUp is the error d was given up with: it has failed for RetryFor.
func (s *Shipper) givenUp(d Destination) error {
	if s.RetryFor <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.failing[d.Raw]
	if !ok || s.now().Sub(f.since) < s.RetryFor {
		return nil
	}
	return fmt.Errorf("given up after failing for %s: %w", s.RetryFor, f.err)
}

func (s *Shipper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// sender returns (and caches) the client of d.
func (s *Shipper) sender(d Destination) Sender {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.senders == nil {
		s.senders = map[string]Sender{}
	}
	if c, ok := s.senders[d.Raw]; ok {
		return c
	}
	client := s.Client
	if client == nil {
		client = NewClient(orDefault(s.RequestTimeout, 30*time.Second))
	}
	tok := s.Token
	if tok == "" && Loopback(d.Host) {
		tok = s.LocalToken
	}
	c := NewSender(d, tok, client)
	if o, ok := c.(*OTLPClient); ok && s.MaxCapture != 0 {
		o.MaxCapture = s.MaxCapture
	}
	s.senders[d.Raw] = c
	return c
}

// SetSender replaces the client of d (tests, benchmarks).
func (s *Shipper) SetSender(d Destination, c Sender) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.senders == nil {
		s.senders = map[string]Sender{}
	}
	s.senders[d.Raw] = c
}

// Progress is what one delivery pass did for one (destination, log).
type Progress struct {
	Delivered int // lines accepted by the destination
	Rejected  int // lines put aside
	Dropped   int // debug/info lines skipped under backpressure
	Busy      bool
	// Offset is the log offset the cursor stood at when the pass ended:
	// everything before it is delivered (or put aside or dropped). Lines a
	// writer appended during or after the pass lie beyond it.
	Offset int64
}

// LogRel is the path of (agent, session)'s log relative to the log root,
// as shim.JSONL lays it out.
func LogRel(agent, session string) string {
	return shim.SafeName(agent) + "/" + shim.SafeName(session) + ".jsonl"
}

// Logs lists every log under the root, relative, slash-separated, sorted.
func (s *Shipper) Logs() ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.LogRoot, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if p == s.LogRoot && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return nil // an unreadable folder is skipped, not fatal
		}
		if de.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		rel, err := filepath.Rel(s.LogRoot, p)
		if err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// ShipAll delivers every log's backlog to every destination (destinations
// in parallel, logs in turn) and flushes the status. It returns the first
// error of each destination that could not be delivered.
func (s *Shipper) ShipAll(ctx context.Context) error {
	for _, d := range s.Dests {
		s.recovered(d) // a new run: every destination gets its RetryFor
	}
	logs, err := s.Logs()
	if err != nil {
		return fmt.Errorf("list logs: %w", err)
	}
	errs := make([]error, len(s.Dests))
	var wg sync.WaitGroup
	for i, d := range s.Dests {
		wg.Go(func() {
			for _, rel := range logs {
				if _, err := s.ShipLog(ctx, d, rel); err != nil {
					errs[i] = fmt.Errorf("%s: %w", d.Raw, err)
					if classOf(err) == Fatal || ctx.Err() != nil {
						break
					}
				}
			}
			s.Flush(ctx, d, false)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Hook is the hook path: it delivers the named logs (relative paths) to
// every destination within ctx (the caller sets a short deadline), and
// records every failure in the error log instead of returning it. A log
// another shipper holds is left to that shipper once ctx ends.
func (s *Shipper) Hook(ctx context.Context, adapter string, rels []string) {
	var wg sync.WaitGroup
	for _, d := range s.Dests {
		wg.Go(func() {
			for _, rel := range rels {
				_, err := s.ShipLog(ctx, d, rel)
				if err == nil {
					continue
				}
				var busy errBusy
				if errors.As(err, &busy) {
					continue // the holder delivers these lines
				}
				if ctx.Err() != nil {
					err = fmt.Errorf("not delivered within the hook's deadline (left for `aep-hook ship`): %w", err)
				}
				s.record(shim.Failure{Adapter: adapter, Stage: "deliver", Error: fmt.Sprintf("deliver to %s: %v", d.Raw, err)})
				break
			}
			// The status write gets its own short bound: the hook is done.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 50*time.Millisecond)
			s.Flush(fctx, d, true)
			cancel()
		})
	}
	wg.Wait()
}

// Flush writes d's accumulated counters and last outcome to its status
// file. With onlyIfNews, a plain success is written only when it clears a
// recorded error.
func (s *Shipper) Flush(ctx context.Context, d Destination, onlyIfNews bool) {
	delta := s.stats.take(d)
	if err := flushStatus(ctx, s.Home, d, delta, onlyIfNews); err != nil {
		var busy errBusy
		if !errors.As(err, &busy) {
			s.record(shim.Failure{Stage: "deliver", Error: fmt.Sprintf("status of %s: %v", d.Raw, err)})
		}
		// Keep the counters for the next flush.
		s.stats.update(d, func(sd *statusDelta) {
			sd.rejected += delta.rejected
			sd.dropped += delta.dropped
			if sd.err == "" {
				sd.err, sd.errTime = delta.err, delta.errTime
			}
			if sd.success.IsZero() {
				sd.success = delta.success
			}
		})
	}
}

func (s *Shipper) record(f shim.Failure) {
	if s.Errors != nil {
		s.Errors.Record(f)
	}
}

// batch is the lines in hand for one request, with where each starts.
type batch struct {
	lines [][]byte
	ats   []int64 // each line's start offset
	end   int64   // offset past the last line read (sent, skipped or dropped)
}

// through is the offset just past the first n lines: the end of the n-th,
// or, when all are through, the end of everything the batch read (lines
// skipped after the last one included).
func (b *batch) through(n int) int64 {
	if n == len(b.lines) {
		return b.end
	}
	return b.ats[n-1] + int64(len(b.lines[n-1]))
}

// shipping is one ShipLog call's state: the log, its cursor and what the
// call has done.
type shipping struct {
	d       Destination
	rel     string
	f       *os.File
	curPath string
	cur     Cursor
	snd     Sender
	pr      Progress
}

// ShipLog delivers one log's undelivered lines to d, from its cursor to
// the end of the file as it grows during the pass, under the
// (destination, log) lock. The cursor moves only past lines the destination
// accepted (or that were put aside or dropped), so a crash at any point
// only causes redelivery.
func (s *Shipper) ShipLog(ctx context.Context, d Destination, rel string) (Progress, error) {
	if err := s.givenUp(d); err != nil {
		return Progress{}, err
	}
	curPath, lockP := cursorPaths(s.Home, d, rel)
	l, err := s.lock(ctx, lockP)
	if err != nil {
		var busy errBusy
		return Progress{Busy: errors.As(err, &busy)}, err
	}
	defer l.unlock()

	f, err := os.Open(filepath.Join(s.LogRoot, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Progress{}, nil
		}
		return Progress{}, fmt.Errorf("open log: %w", err)
	}
	defer f.Close()

	sh := &shipping{d: d, rel: rel, f: f, curPath: curPath, cur: loadCursor(curPath), snd: s.sender(d)}
	for {
		// The file may grow while a pass runs: go round again until a
		// pass finds nothing new.
		progressed, err := s.pass(ctx, sh)
		if err != nil || !progressed {
			sh.pr.Offset = sh.cur.Offset
			return sh.pr, err
		}
	}
}

// lock takes the (destination, log) lock, waiting at most LockWait
// (forever when negative).
func (s *Shipper) lock(ctx context.Context, path string) (*fileLock, error) {
	if s.LockWait >= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.LockWait)
		defer cancel()
	}
	return lockPath(ctx, path)
}

// pass delivers the log from the cursor to its size at the start of the
// pass, one batch at a time, and reports whether the cursor moved.
func (s *Shipper) pass(ctx context.Context, sh *shipping) (bool, error) {
	fi, err := sh.f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat log: %w", err)
	}
	size := fi.Size()
	off, head, err := resume(sh.cur, sh.f, size)
	if err != nil {
		return false, fmt.Errorf("read log: %w", err)
	}
	if off != sh.cur.Offset || head != sh.cur.Head {
		sh.cur = Cursor{Offset: off, Head: head}
	}
	lr := newLineReader(sh.f, off, size, orDefault(s.MaxLine, DefaultMaxLine))
	progressed := false
	for off < size {
		b, err := s.readBatch(lr, sh.d, sh.rel, size, &sh.pr)
		if err != nil {
			return progressed, fmt.Errorf("read log: %w", err)
		}
		if len(b.lines) == 0 && b.end == sh.cur.Offset {
			break
		}
		if err := s.send(ctx, sh, &b); err != nil {
			return progressed, err
		}
		progressed, off = true, b.end
	}
	return progressed, nil
}

// send delivers one batch, retrying what is left of it after a retryable
// failure (with backoff, while the destination has failed for less than
// RetryFor) until all of it is through,
// and moves the cursor past what went through.
func (s *Shipper) send(ctx context.Context, sh *shipping, b *batch) error {
	for attempt := 0; ; attempt++ {
		n, err := s.deliver(ctx, sh.d, sh.snd, sh.rel, b.lines, b.ats, &sh.pr)
		if n > 0 || (err == nil && len(b.lines) == 0) {
			sh.cur.Offset = b.through(n)
			sh.cur.Events += int64(n)
			if werr := saveCursor(sh.curPath, sh.cur, s.now()); werr != nil {
				return fmt.Errorf("save cursor: %w", werr)
			}
			b.lines, b.ats = b.lines[n:], b.ats[n:]
			attempt = 0
			s.recovered(sh.d)
		}
		if err == nil {
			s.stats.update(sh.d, func(sd *statusDelta) { sd.success = s.now() })
			s.recovered(sh.d)
			return nil
		}
		s.stats.update(sh.d, func(sd *statusDelta) { sd.err, sd.errTime = err.Error(), s.now() })
		if classOf(err) != Retry || s.RetryFor < 0 {
			return err
		}
		wait := s.backoff(attempt, err)
		if s.RetryFor > 0 {
			left := s.RetryFor - s.now().Sub(s.failed(sh.d, err))
			if left <= 0 {
				return err
			}
			wait = min(wait, left)
		}
		if !s.sleep(ctx, wait) {
			return err
		}
	}
}

// readBatch reads the next batch from lr, putting aside overlong lines and
// applying backpressure. It returns an empty batch at the end.
func (s *Shipper) readBatch(lr *lineReader, d Destination, rel string, size int64, pr *Progress) (batch, error) {
	maxN := orDefault(s.BatchEvents, DefaultBatchEvents)
	maxB := orDefault(s.BatchBytes, DefaultBatchBytes)
	b := batch{end: lr.off}
	bytesIn := 0
	dropped := 0
	for len(b.lines) < maxN && (bytesIn < maxB || len(b.lines) == 0) {
		line, at, err := lr.next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errTooLong) {
			b.end = lr.off
			s.putAside(d, rel, at, nil, 0, fmt.Sprintf("line longer than %d bytes; not sent", lr.max))
			pr.Rejected++
			continue
		}
		if err != nil {
			return b, err
		}
		b.end = lr.off
		if len(line) <= 1 || (len(line) == 2 && line[0] == '\r') {
			continue // a blank line carries nothing
		}
		if s.Pressure && size-lr.off > orDefault(s.QueueBytes, DefaultQueueBytes) && lowSeverity(line) {
			dropped++
			continue
		}
		b.lines = append(b.lines, line)
		b.ats = append(b.ats, at)
		bytesIn += len(line)
	}
	if dropped > 0 {
		pr.Dropped += dropped
		s.stats.update(d, func(sd *statusDelta) { sd.dropped += int64(dropped) })
		s.record(shim.Failure{Stage: "backpressure", Lost: dropped,
			Error: fmt.Sprintf("%d debug/info events of %s not delivered to %s: backlog over %d bytes (they stay in the local log)", dropped, rel, d.Raw, orDefault(s.QueueBytes, DefaultQueueBytes))})
	}
	return b, nil
}

// lowSeverity reports a debug or info event (severity absent means info).
func lowSeverity(line []byte) bool {
	switch gjson.GetBytes(line, "severity").String() {
	case "", "debug", "info":
		return true
	}
	return false
}

// deliver sends lines, splitting on 413 and isolating refused lines on
// 400, and returns how many leading lines are done (accepted or put
// aside). On error the rest are still to send.
func (s *Shipper) deliver(ctx context.Context, d Destination, snd Sender, rel string, lines [][]byte, ats []int64, pr *Progress) (int, error) {
	if len(lines) == 0 {
		return 0, nil
	}
	err := snd.Send(ctx, lines)
	if err == nil {
		pr.Delivered += len(lines)
		return len(lines), nil
	}
	var se *SendError
	if !errors.As(err, &se) {
		return 0, err
	}
	switch se.Class {
	case TooLarge:
		if len(lines) == 1 {
			s.putAside(d, rel, ats[0], lines[0], se.Status, "the destination refused the event as too large")
			pr.Rejected++
			return 1, nil
		}
		return s.split(ctx, d, snd, rel, lines, ats, len(lines)/2, pr)
	case Reject:
		if len(lines) == 1 {
			s.putAside(d, rel, ats[0], lines[0], se.Status, se.Detail)
			pr.Rejected++
			return 1, nil
		}
		at := len(lines) / 2
		if se.Index == 0 {
			at = 1
		} else if se.Index > 0 {
			at = se.Index
		}
		return s.split(ctx, d, snd, rel, lines, ats, at, pr)
	}
	return 0, err
}

func (s *Shipper) split(ctx context.Context, d Destination, snd Sender, rel string, lines [][]byte, ats []int64, at int, pr *Progress) (int, error) {
	n, err := s.deliver(ctx, d, snd, rel, lines[:at], ats[:at], pr)
	if err != nil || n < at {
		return n, err
	}
	m, err := s.deliver(ctx, d, snd, rel, lines[at:], ats[at:], pr)
	return at + m, err
}

// Rejection is one line a destination refused, as kept in
// $AEP_HOME/rejected/<destination>.jsonl.
type Rejection struct {
	Time        string          `json:"time"`
	Destination string          `json:"destination"`
	Log         string          `json:"log"`
	Offset      int64           `json:"offset"`
	Status      int             `json:"status,omitempty"`
	Detail      string          `json:"detail,omitempty"`
	Event       json.RawMessage `json:"event,omitempty"`
	Line        string          `json:"line,omitempty"` // when the line is not JSON
}

// RejectedPath is the file d's refused lines are put aside in.
func RejectedPath(home string, d Destination) string {
	return filepath.Join(home, "rejected", d.Key()+".jsonl")
}

// putAside records a refused line in the destination's rejected file and
// notes it, without content, in the error log.
func (s *Shipper) putAside(d Destination, rel string, at int64, line []byte, status int, detail string) {
	if len(detail) > 4096 {
		detail = detail[:4096]
	}
	r := Rejection{Time: stamp(s.now()), Destination: d.Raw, Log: rel, Offset: at, Status: status, Detail: detail}
	trimmed := []byte(strings.TrimRight(string(line), "\r\n"))
	if json.Valid(trimmed) {
		r.Event = trimmed
	} else if len(trimmed) > 0 {
		r.Line = string(trimmed)
	}
	b, _ := json.Marshal(r)
	path := RejectedPath(s.Home, d)
	err := shim.AppendFile(path, append(b, '\n'))
	s.stats.update(d, func(sd *statusDelta) { sd.rejected++ })
	// Nothing is lost: the local log keeps the event whatever happens to
	// the rejected file, so the failure counts no lost events. at is a
	// byte offset, said as one (not a line number).
	msg := fmt.Sprintf("event at byte %d of %s refused by %s (status %d); put aside in %s", at, rel, d.Raw, status, path)
	if err != nil {
		msg = fmt.Sprintf("event at byte %d of %s refused by %s (status %d); could not put it aside (%v); the local log keeps it", at, rel, d.Raw, status, err)
	}
	agent, _, _ := strings.Cut(rel, "/")
	s.record(shim.Failure{Adapter: agent, Stage: "deliver", Error: msg})
}

// backoff is the delay before retry attempt n: exponential, jittered,
// capped, and at least the server's Retry-After.
func (s *Shipper) backoff(n int, err error) time.Duration {
	base := orDefault(s.Backoff, DefaultBackoff)
	ceil := orDefault(s.MaxBackoff, DefaultMaxBackoff)
	d := base << min(n, 20)
	if d > ceil || d <= 0 {
		d = ceil
	}
	d = d/2 + rand.N(d/2+1)
	var se *SendError
	if errors.As(err, &se) && se.RetryAfter > d {
		d = min(se.RetryAfter, ceil)
	}
	return d
}

// sleep waits d or until ctx ends; it reports whether d elapsed.
func (s *Shipper) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
