package shim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Sink receives the encoded lines of one session, in seq order, while the
// session's lock is held.
type Sink interface {
	Write(agent, session string, lines [][]byte) error
}

// linesDone is a Sink that is done with the lines it is handed once Write
// returns (it has written or copied them) and says so: the emitter may then
// reuse their storage for its next batch. A sink that keeps them (a test's
// capture, a queue) does not implement it, or says false.
type linesDone interface {
	linesDoneOnReturn() bool
}

// sinkDoneOnReturn reports whether s is done with its lines once Write
// returns.
func sinkDoneOnReturn(s Sink) bool {
	d, ok := s.(linesDone)
	return ok && d.linesDoneOnReturn()
}

// JSONL is the local log: {Root}/{agent}/{session}.jsonl, names encoded with
// SafeName, appended with O_APPEND. A line is never split across writes: the
// lines of one call go out in as few writes as fit maxWrite, each write
// holding whole lines only. It is the record every other destination is
// shipped from, so it stays line-clean whatever the disk does: a write that
// fails partway (ENOSPC, a short write) is cut back to the last complete
// line, and a log that ends inside a line (a process killed mid-write) gets
// a newline before the next event. Appends are serialised by a lock on the
// log itself, so cutting back never cuts another writer's line. A log file
// replaced by a symbolic link is refused.
type JSONL struct {
	Root string
	// LockWait bounds the wait for another writer of the same log; past it
	// the lines are appended without the lock (and a failed write can then
	// only be closed with a newline, not cut back). 0 waits as long as it
	// takes.
	LockWait time.Duration

	joins sync.Pool // *[]byte: buffers that join a call's lines into writes
	kept  keptFiles // logs held open between writes
}

// maxWrite bounds one append of several lines; a single longer line is
// still written whole, in one write.
const maxWrite = 1 << 20

// Path returns the log file of (agent, session).
func (j *JSONL) Path(agent, session string) string {
	return filepath.Join(j.Root, SafeName(agent), SafeName(session)+".jsonl")
}

// LostError says how many of the lines given to a sink were not written.
type LostError struct {
	Lost int
	Err  error
}

func (e *LostError) Error() string { return fmt.Sprintf("%d lines not written: %v", e.Lost, e.Err) }

func (e *LostError) Unwrap() error { return e.Err }

// Lost is how many events err says were not written, given n were meant
// to be: a LostError's count, else all of them.
func Lost(err error, n int) int {
	var le *LostError
	if errors.As(err, &le) {
		return le.Lost
	}
	if err == nil {
		return 0
	}
	return n
}

// linesDoneOnReturn: the log has written the lines (or joined them into
// its own buffer) when Write returns.
func (*JSONL) linesDoneOnReturn() bool { return true }

// joinedSink is a Sink that can also be handed a call's lines together
// with the one buffer they lie in back to back, and then writes from that
// buffer instead of joining the lines into one of its own.
type joinedSink interface {
	writeJoined(agent, session string, lines [][]byte, joined []byte) error
}

// writeTo writes lines to s; joined is the lines back to back, for a sink
// that can write from it (joinedSink).
func writeTo(s Sink, agent, session string, lines [][]byte, joined []byte) error {
	if js, ok := s.(joinedSink); ok {
		return js.writeJoined(agent, session, lines, joined)
	}
	return s.Write(agent, session, lines)
}

// Write implements Sink. On failure the error is a *LostError.
func (j *JSONL) Write(agent, session string, lines [][]byte) error {
	return j.write(agent, session, lines, nil)
}

// writeJoined is Write with joined, the lines back to back: the lines of
// each append are written from it as they are, not copied.
func (j *JSONL) writeJoined(agent, session string, lines [][]byte, joined []byte) error {
	return j.write(agent, session, lines, joined)
}

// write is Write; joined, when not nil, is the lines back to back.
func (j *JSONL) write(agent, session string, lines [][]byte, joined []byte) error {
	p := j.Path(agent, session)
	f, fi, end, lerr, err := j.open(p)
	if err != nil {
		return &LostError{len(lines), err}
	}
	locked := lerr == nil
	kept := false
	defer func() {
		if locked {
			unlockFile(f)
		}
		if kept {
			j.kept.give(p, f, fi)
		} else {
			f.Close()
		}
	}()
	var fresh []byte
	if end.torn {
		fresh = []byte{'\n'} // the last line was left unfinished: start a new one
	}
	join, _ := j.joins.Get().(*[]byte)
	if join == nil {
		join = new([]byte)
	}
	defer func() {
		if cap(*join) <= 2*maxWrite {
			j.joins.Put(join)
		}
	}()
	written, off := 0, 0 // off: where lines[written] starts in joined
	for written < len(lines) {
		buf, n := lines[written], 1
		if fresh != nil {
			buf = append(fresh, buf...)
		}
		if len(lines)-written > 1 && joined != nil && fresh == nil {
			// The same lines in each write as joining them would give,
			// straight from where they already lie together.
			size := 0
			for n = 0; written+n < len(lines); n++ {
				l := len(lines[written+n])
				if n > 0 && size+l > maxWrite {
					break
				}
				size += l
			}
			buf = joined[off : off+size]
		} else if len(lines)-written > 1 {
			buf = append((*join)[:0], fresh...)
			for n = 0; written+n < len(lines); n++ {
				l := lines[written+n]
				if n > 0 && len(buf)+len(l) > maxWrite {
					break
				}
				buf = append(buf, l...)
			}
			*join = buf[:0] // kept (grown) for the next write and call
		}
		w, err := f.Write(buf)
		if err == nil && w < len(buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			if w > 0 {
				// Cut back to the last complete line; without the lock (or
				// if cutting fails) the next writer starts a fresh line.
				if !locked || f.Truncate(end.size) != nil {
					end.torn = true
				}
			}
			return &LostError{len(lines) - written, fmt.Errorf("log write: %d of %d lines written: %w", written, len(lines), err)}
		}
		end.size += int64(w)
		fresh = nil
		for _, l := range lines[written : written+n] {
			off += len(l)
		}
		written += n
	}
	// Kept open for the next write only after a locked one that went as
	// it should: a descriptor that saw an error is not trusted again.
	kept = locked
	return nil
}

// open opens the log at p for an append and locks it: a log kept open
// since the last write, or just opened, is used if p still names it once
// it is locked (a log rotated, removed or replaced by a link since is
// opened afresh, so the lines go where p says; a path that changes at every
// open is an error after openAttempts, not lines written where nobody
// reads them). lerr is why the log is not locked (the lock
// wait ran out: the lines are appended without it); err says that it
// cannot be written at all. end is where it ends.
func (j *JSONL) open(p string) (f *os.File, fi fs.FileInfo, end logTail, lerr, err error) {
	if f, fi := j.kept.take(p); f != nil {
		lerr := lockWithin(f, j.LockWait, fileProgress(f))
		if lerr == nil {
			if now, ok := current(p, fi); ok {
				// Locked, so the size cannot change but by this writer.
				if end, err := tailAt(f, now.Size()); err == nil {
					return f, fi, end, nil, nil
				}
			}
			unlockFile(f)
		}
		if !errors.Is(lerr, ErrLockTimeout) {
			f.Close()
		} else {
			// The waiter keeps f (see lockWithin). The lock has been
			// waited for once already: append without it.
			if f, fi, end, err = appendUnlocked(p, nil, nil); err != nil {
				return nil, nil, logTail{}, nil, err
			}
			return f, fi, end, lerr, nil
		}
	}
	for range openAttempts {
		if f, fi, err = openDirFileStat(p, os.O_CREATE|os.O_RDWR|os.O_APPEND); err != nil {
			return nil, nil, logTail{}, nil, fmt.Errorf("log open: %w", err)
		}
		if openedUnlocked != nil {
			openedUnlocked(p)
		}
		lerr = lockWithin(f, j.LockWait, fileProgress(f))
		if lerr == nil {
			// A log removed, rotated or replaced between the open and the
			// lock gets nothing more: the lines go to the file at p, opened
			// again. The look gives the log's size (locked, it changes only
			// by this writer), so it replaces the stat that would read it.
			if now, ok := current(p, fi); ok {
				if end, err = tailAt(f, now.Size()); err == nil {
					return f, fi, end, nil, nil
				}
			}
			unlockFile(f)
			f.Close()
			continue
		}
		// Appended without the lock: nothing keeps p from changing, so
		// there is no point in looking. The waiter of a lock that timed
		// out keeps that descriptor: append through another.
		if errors.Is(lerr, ErrLockTimeout) {
			f, fi = nil, nil
		}
		if f, fi, end, err = appendUnlocked(p, f, fi); err != nil {
			return nil, nil, logTail{}, nil, err
		}
		return f, fi, end, lerr, nil
	}
	return nil, nil, logTail{}, nil, fmt.Errorf("log open: %s was removed or replaced each time it was opened, %d times", p, openAttempts)
}

// logTail is where a log ends and whether its last line is unfinished.
type logTail struct {
	size int64
	torn bool
}

func logEnd(f *os.File) (logTail, error) {
	fi, err := f.Stat()
	if err != nil {
		return logTail{}, err
	}
	return tailAt(f, fi.Size())
}

// appendUnlocked is the log at p to append to without its lock, f when
// given, else opened again, and where it ends.
func appendUnlocked(p string, f *os.File, fi fs.FileInfo) (*os.File, fs.FileInfo, logTail, error) {
	if f == nil {
		var err error
		if f, fi, err = openDirFileStat(p, os.O_RDWR|os.O_APPEND); err != nil {
			return nil, nil, logTail{}, fmt.Errorf("log open: %w", err)
		}
	}
	end, err := logEnd(f)
	if err != nil {
		f.Close()
		return nil, nil, logTail{}, fmt.Errorf("log stat: %w", err)
	}
	return f, fi, end, nil
}

// tailAt is the end of f, a log size bytes long.
func tailAt(f *os.File, size int64) (logTail, error) {
	t := logTail{size: size}
	if t.size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], t.size-1); err == nil {
			t.torn = last[0] != '\n'
		}
	}
	return t, nil
}

// Size returns the size of the session's log, 0 when there is none.
func (j *JSONL) Size(agent, session string) int64 {
	fi, err := os.Lstat(j.Path(agent, session))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Last returns the position of the last complete event in the session's
// log, reading only its tail.
func (j *JSONL) Last(agent, session string) (Position, bool) {
	f, err := os.Open(j.Path(agent, session))
	if err != nil {
		return Position{}, false
	}
	defer f.Close()
	const tail = 256 << 10
	fi, err := f.Stat()
	if err != nil {
		return Position{}, false
	}
	off := max(fi.Size()-tail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return Position{}, false
	}
	var best Position
	found := false
	for _, line := range bytes.Split(buf, []byte{'\n'}) {
		var e struct {
			Seq   *int64 `json:"seq"`
			Epoch *int64 `json:"epoch"`
		}
		if json.Unmarshal(line, &e) != nil || e.Seq == nil {
			continue
		}
		p := Position{Seq: *e.Seq}
		if e.Epoch != nil {
			p.Epoch = *e.Epoch
		}
		if !found || p.Epoch > best.Epoch || p.Epoch == best.Epoch && p.Seq > best.Seq {
			best, found = p, true
		}
	}
	return best, found
}

// WriterSink writes every line to W (the map verb's stdout), serialised.
type WriterSink struct {
	mu sync.Mutex
	W  io.Writer
}

// linesDoneOnReturn: an io.Writer must not retain what it is handed.
func (*WriterSink) linesDoneOnReturn() bool { return true }

// Write implements Sink.
func (w *WriterSink) Write(_, _ string, lines [][]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range lines {
		if _, err := w.W.Write(l); err != nil {
			return err
		}
	}
	return nil
}

// Sinks writes to each sink in order, stopping at the first failure: the
// first is the record, so nothing is shipped that the record lacks.
type Sinks []Sink

// linesDoneOnReturn: every sink of ss is done with the lines.
func (ss Sinks) linesDoneOnReturn() bool {
	for _, s := range ss {
		if !sinkDoneOnReturn(s) {
			return false
		}
	}
	return true
}

// Write implements Sink.
func (ss Sinks) Write(agent, session string, lines [][]byte) error {
	return ss.writeJoined(agent, session, lines, nil)
}

// writeJoined is Write, handing joined on to the sinks that can use it.
func (ss Sinks) writeJoined(agent, session string, lines [][]byte, joined []byte) error {
	for _, s := range ss {
		var err error
		if joined != nil {
			err = writeTo(s, agent, session, lines, joined)
		} else {
			err = s.Write(agent, session, lines)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
