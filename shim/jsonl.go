package shim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Sink receives the encoded lines of one session, in seq order, while the
// session's lock is held.
type Sink interface {
	Write(agent, session string, lines [][]byte) error
}

// JSONL is the local log: {Root}/{agent}/{session}.jsonl, names encoded with
// SafeName, appended with O_APPEND. A line is never split across writes: the
// lines of one call go out in as few writes as fit maxWrite, each write
// holding whole lines only. It is the record every other destination is
// shipped from.
type JSONL struct {
	Root string
}

// maxWrite bounds one append of several lines; a single longer line is
// still written whole, in one write.
const maxWrite = 1 << 20

// Path returns the log file of (agent, session).
func (j *JSONL) Path(agent, session string) string {
	return filepath.Join(j.Root, SafeName(agent), SafeName(session)+".jsonl")
}

// Write implements Sink.
func (j *JSONL) Write(agent, session string, lines [][]byte) error {
	p := j.Path(agent, session)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("log dir: %w", err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log open: %w", err)
	}
	written := 0
	for written < len(lines) {
		buf, n := lines[written], 1
		if len(lines)-written > 1 {
			buf = nil
			for n = 0; written+n < len(lines); n++ {
				l := lines[written+n]
				if n > 0 && len(buf)+len(l) > maxWrite {
					break
				}
				buf = append(buf, l...)
			}
		}
		if w, err := f.Write(buf); err != nil {
			if w > 0 && w < len(buf) {
				f.Write([]byte{'\n'}) // end a torn line so the next append starts clean
			}
			f.Close()
			return fmt.Errorf("log write: %d of %d lines written: %w", written, len(lines), err)
		}
		written += n
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("log close: %w", err)
	}
	return nil
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

// Write implements Sink.
func (ss Sinks) Write(agent, session string, lines [][]byte) error {
	for _, s := range ss {
		if err := s.Write(agent, session, lines); err != nil {
			return err
		}
	}
	return nil
}
