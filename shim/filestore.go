package shim

import (
	"encoding/json"
	"errors"
	"fmt"
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

func (s *FileStore) paths(agent, session string) (dir, state, lock string) {
	dir = filepath.Join(s.Dir, SafeName(agent))
	base := SafeName(session)
	return dir, filepath.Join(dir, base+".json"), filepath.Join(dir, base+".lock")
}

// Locked implements Store.
func (s *FileStore) Locked(agent, session string, fn func(*Tx) error) error {
	dir, statePath, lockPath := s.paths(agent, session)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	lf, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	defer lf.Close()
	if err := lockFile(lf); err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	defer unlockFile(lf)

	st := s.load(agent, session, statePath)
	tx := &Tx{State: st, save: func() error { return writeAtomic(statePath, st) }}
	if err := fn(tx); err != nil {
		return err
	}
	if tx.saved {
		return nil
	}
	return tx.Save()
}

// load reads a session's state. A missing file starts after the session's
// log (a higher epoch) or at epoch 0 when there is no log; a corrupt file
// does the same, or seeds the epoch from the clock when no log survives, so
// a position is never reused (AEP-0001 §7.2).
func (s *FileStore) load(agent, session, path string) *SessionState {
	b, err := os.ReadFile(path)
	st := &SessionState{}
	if err == nil && json.Unmarshal(b, st) == nil && st.Epoch >= 0 && st.Next >= 0 {
		return st
	}
	corrupt := err == nil || !errors.Is(err, fs.ErrNotExist)
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

// writeAtomic replaces path with v's JSON via a temporary file and rename.
func writeAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state encode: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("state write: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	return nil
}
