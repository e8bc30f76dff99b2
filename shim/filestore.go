package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Position is a place in a session's order.
type Position struct {
	Epoch, Seq int64
}

// FileStore keeps session states as JSON files under Dir, one per (agent,
// session), each guarded by an OS file lock shared by every process.
type FileStore struct {
	Dir string
	// Last returns the last position recorded for a session elsewhere (its
	// log), used when the state file is missing or corrupt. Nil means none.
	Last func(agent, session string) (Position, bool)
	// Now seeds a fresh epoch when a corrupt state cannot be recovered.
	Now func() time.Time
}

func (s *FileStore) paths(agent, session string) (dir, state string) {
	dir = filepath.Join(s.Dir, SafeName(agent))
	return dir, filepath.Join(dir, SafeName(session)+".state")
}

// Locked implements Store. The state file is its own lock: it is opened
// once, locked, read, and rewritten in place through the same descriptor
// (no temporary file: creating an inode per hook costs more than the rest of
// the hook). A write torn by a crash leaves a file that does not parse, which
// load treats as corrupt and recovers from with a higher epoch, so a torn
// write never leads to a reused position.
func (s *FileStore) Locked(agent, session string, fn func(*Tx) error) error {
	dir, path := s.paths(agent, session)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o700); err == nil {
			f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		}
	}
	if err != nil {
		return fmt.Errorf("state open: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	defer unlockFile(f)

	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("state read: %w", err)
	}
	st := s.load(agent, session, b)
	tx := &Tx{State: st, save: func() error { return rewrite(f, st) }}
	if err := fn(tx); err != nil {
		return err
	}
	if tx.saved {
		return nil
	}
	return tx.Save()
}

// load decodes a session's state. An empty file (a new session, or one
// whose state was lost) starts after the session's log (a higher epoch), or
// at epoch 0 when there is no log; a corrupt file does the same, or seeds the
// epoch from the clock when no log survives, so a position is never reused
// (AEP-0001 §7.2).
func (s *FileStore) load(agent, session string, b []byte) *SessionState {
	st := &SessionState{}
	if len(b) > 0 && json.Unmarshal(b, st) == nil && st.Epoch >= 0 && st.Next >= 0 {
		return st
	}
	corrupt := len(b) > 0
	st = &SessionState{}
	if s.Last != nil {
		if p, ok := s.Last(agent, session); ok {
			st.Epoch = p.Epoch + 1
			return st
		}
	}
	if corrupt && s.Now != nil {
		st.Epoch = s.Now().Unix()
	}
	return st
}

// rewrite replaces the content of the locked state file with v's JSON.
func rewrite(f *os.File, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state encode: %w", err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	return nil
}

// Sweep removes the state files of agent's sessions idle for longer than
// maxAge, at most max of them, skipping any that is locked. Sessions may
// never end (AEP-0002 §4.1), so state is bounded by recency rather than by
// session.ended; the logs are kept. A swept session that comes back starts a
// higher epoch from its log, so no position is ever reused.
func (s *FileStore) Sweep(agent string, maxAge time.Duration, max int) int {
	dir, _ := s.paths(agent, "")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	cutoff := time.Now().Add(-maxAge)
	removed := 0
	for _, e := range ents {
		if removed >= max {
			break
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) || filepath.Ext(e.Name()) != ".state" {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if tryLockFile(f) {
			if fi, err := f.Stat(); err == nil && fi.ModTime().Before(cutoff) && os.Remove(p) == nil {
				removed++
			}
			unlockFile(f)
		}
		f.Close()
	}
	return removed
}
