// Package store is the relay's durable side: its own JSONL store of the
// events it received over the network (written before they are
// acknowledged, so nothing is held only in memory), laid out like the
// local logs ({root}/{agent}/{session}.jsonl, names encoded with
// shim.SafeName), the reading of a log's tail to refill replay buffers at
// start, and the lock that keeps one relay per home.
package store

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/aep-hook/aep-hook/shim"
)

// maxOpen bounds the store files kept open between writes.
const maxOpen = 64

// Store appends events to per-session JSONL files under Root.
type Store struct {
	Root string
	// Sync makes every Append wait for the disk (fsync) before it
	// returns. Without it an appended event survives the relay's crash
	// (it is in the operating system's hands), not the machine's.
	Sync bool

	mu    sync.Mutex
	open  map[string]*list.Element // path -> element of lru holding *file
	lru   *list.List
	bytes int64
}

type file struct {
	path string
	f    *os.File
}

// Path is the file of (agent, session); session "" (an agent-scoped event)
// has a file of its own that no session name can take.
func (s *Store) Path(agent, session string) string {
	return filepath.Join(s.Root, shim.SafeName(agent), shim.SafeName(session)+".jsonl")
}

// Append writes lines (without newlines) to (agent, session)'s file in one
// write.
func (s *Store) Append(agent, session string, lines ...[]byte) error {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	buf := make([]byte, 0, n)
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.file(s.Path(agent, session))
	if err != nil {
		return err
	}
	if _, err := f.Write(buf); err != nil {
		s.closeFile(f.Name())
		return fmt.Errorf("store: write: %w", err)
	}
	if s.Sync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("store: sync: %w", err)
		}
	}
	s.bytes += int64(n)
	return nil
}

// Written is how many bytes this Store has appended.
func (s *Store) Written() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

func (s *Store) file(path string) (*os.File, error) {
	if s.open == nil {
		s.open = map[string]*list.Element{}
		s.lru = list.New()
	}
	if e, ok := s.open[path]; ok {
		s.lru.MoveToFront(e)
		return e.Value.(*file).f, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	s.open[path] = s.lru.PushFront(&file{path: path, f: f})
	for s.lru.Len() > maxOpen {
		s.closeFile(s.lru.Back().Value.(*file).path)
	}
	return f, nil
}

func (s *Store) closeFile(path string) {
	if e, ok := s.open[path]; ok {
		e.Value.(*file).f.Close()
		s.lru.Remove(e)
		delete(s.open, path)
	}
}

// Close closes the open files.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for p, e := range s.open {
		errs = append(errs, e.Value.(*file).f.Close())
		delete(s.open, p)
	}
	if s.lru != nil {
		s.lru.Init()
	}
	return errors.Join(errs...)
}

// Tail returns the last n complete lines of the file at path (without
// their newlines; a final line still missing its newline is not one yet),
// oldest first, and whether the file holds earlier lines. Lines longer
// than maxLine are skipped. It reads backwards from the end, so its cost
// is that of the lines returned (at most limit bytes), not of the file.
func Tail(path string, n, maxLine int, limit int64) (lines [][]byte, more bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	const chunk = 64 << 10
	pos := fi.Size()
	var acc []byte
	for pos > 0 && bytes.Count(acc, []byte{'\n'}) <= n && int64(len(acc)) < limit {
		size := min(int64(chunk), pos)
		pos -= size
		b := make([]byte, size, int(size)+len(acc))
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return nil, false, err
		}
		acc = append(b, acc...)
	}
	// The final fragment without its newline is not a line yet.
	if i := bytes.LastIndexByte(acc, '\n'); i >= 0 {
		acc = acc[:i]
	} else {
		return nil, pos > 0, nil
	}
	parts := bytes.Split(acc, []byte{'\n'})
	if pos > 0 {
		parts = parts[1:] // the first is (the end of) a line begun before
		more = true
	}
	if len(parts) > n {
		parts, more = parts[len(parts)-n:], true
	}
	for _, p := range parts {
		if len(p) > 0 && len(p) <= maxLine {
			lines = append(lines, bytes.Clone(p))
		}
	}
	return lines, more, nil
}

// Lock takes the relay's lock in dir (one relay per home: two would each
// think they own the store and the log positions). It is held until the
// returned file is closed.
func Lock(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("relay dir: %w", err)
	}
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("relay lock: %w", err)
	}
	ok, err := shim.TryLockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("relay lock: %w", err)
	}
	if !ok {
		f.Close()
		return nil, fmt.Errorf("another relay is serving this home (%s is locked)", path)
	}
	return f, nil
}
