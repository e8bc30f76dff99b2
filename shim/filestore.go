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

// after reports whether the next position of st comes after p.
func (st *SessionState) after(p Position) bool {
	return st.Epoch > p.Epoch || st.Epoch == p.Epoch && st.Next > p.Seq
}

// LogView is what the store reads of a session's log (JSONL is one): its
// size, and the position of its last complete event.
type LogView interface {
	Size(agent, session string) int64
	Last(agent, session string) (Position, bool)
}

// openedUnlocked, when set (by tests only), is called with the path of a
// state file, log or fallback lock just opened afresh and not yet locked:
// the moment a sweep or a rotation may take the path away from the open
// file, which the tests make happen there.
var openedUnlocked func(path string)

// FileStore keeps session states as JSON files under Dir, one per (agent,
// session), each guarded by an OS file lock shared by every process.
type FileStore struct {
	Dir string
	// Log is the sessions' log, which the stored positions are reconciled
	// with: a state that is missing, corrupt, rolled back or behind
	// events written without the lock resumes after the log's last
	// position, in a new epoch. Nil means none.
	Log LogView
	// Now is the clock of the one rule for a session whose state is not
	// there to say which positions it used (new, swept, truncated, corrupt)
	// and for a write that could not take the lock (Unlocked): the epoch is
	// the clock's microseconds, above the log's last (see clockEpoch).
	Now func() time.Time
	// LockWait bounds the wait for a session's lock while its holders
	// show no progress (each rewrites the state file); past it Locked gives
	// ErrLockTimeout (the caller may write through Unlocked). A lock passed
	// on from holder to holder is waited for. 0 waits as long as it takes.
	LockWait time.Duration

	kept keptFiles // state files held open between writes
}

// StateError says a session's state file cannot be used at all (it is a
// folder, a link, unreadable): the caller may write through Unlocked.
type StateError struct{ Err error }

func (e *StateError) Error() string { return "state: " + e.Err.Error() }

func (e *StateError) Unwrap() error { return e.Err }

func (s *FileStore) paths(agent, session string) (dir, state string) {
	dir = filepath.Join(s.Dir, SafeName(agent))
	return dir, filepath.Join(dir, SafeName(session)+".state")
}

func (s *FileStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Locked implements Store. The state file is its own lock: it is opened
// once, locked, read, and rewritten in place through the same descriptor
// (no temporary file: creating an inode per hook costs more than the rest of
// the hook). A write torn by a crash leaves a file that does not parse, which
// load treats as corrupt and recovers from with a higher epoch, so a torn
// write never leads to a reused position.
func (s *FileStore) Locked(agent, session string, fn func(*Tx) error) error {
	_, path := s.paths(agent, session)
	f, b, err := s.lockState(path)
	if err != nil {
		return err
	}
	kept := false
	defer func() {
		unlockFile(f.File)
		if kept {
			s.kept.give(path, f.File, f.fi)
		} else {
			f.Close()
		}
	}()
	st, clean := load(b)
	size := len(b) // the file's length, which a rewrite shorter than it cuts
	tx := &Tx{State: st, save: func() error {
		enc := encodeState(st)
		err := rewrite(f.File, enc, size)
		size = max(size, len(enc))
		if err == nil {
			size = len(enc)
		}
		return err
	}}
	changed, err := s.reconcile(agent, session, st, !clean || len(b) == 0)
	if err != nil {
		return err
	}
	switch {
	case clean && len(b) == 0:
		tx.version = lostVersion(st)
	case clean && !changed:
		tx.version = b
	}
	tx.logBase = st.Log
	if err := fn(tx); err != nil {
		return err
	}
	if !tx.saved {
		err = tx.Save()
	}
	// Kept for the next write only when every step went as it should: a
	// descriptor that saw an error is not trusted again.
	kept = err == nil
	return err
}

// lockedFile is a locked state file and what it was when opened.
type lockedFile struct {
	*os.File
	fi fs.FileInfo
}

// lockState opens (or takes from those kept open) the state file at path,
// locks it and reads it. A file, kept or just opened, is used only if path
// still names it once it is locked: a state file swept or replaced since is
// opened afresh, so the lock taken is always the one on the file at path
// and the state saved is the one the next writer reads.
func (s *FileStore) lockState(path string) (lockedFile, []byte, error) {
	if f, fi := s.kept.take(path); f != nil {
		if err := lockWithin(f, s.LockWait, fileProgress(f)); err != nil {
			if errors.Is(err, ErrLockTimeout) {
				// The waiter keeps f (see lockWithin).
				return lockedFile{}, nil, fmt.Errorf("state lock (waited %s): %w", s.LockWait, err)
			}
			f.Close()
			// Opened afresh below, which reports what is wrong.
		} else {
			if b, at, err := readIfAt(f, path, fi); at && err == nil {
				return lockedFile{f, fi}, b, nil
			}
			unlockFile(f)
			f.Close()
		}
	}
	for range openAttempts {
		f, fi, err := openDirFileStat(path, os.O_CREATE|os.O_RDWR)
		if err != nil {
			return lockedFile{}, nil, &StateError{err}
		}
		if openedUnlocked != nil {
			openedUnlocked(path)
		}
		if err := lockWithin(f, s.LockWait, fileProgress(f)); err != nil {
			if errors.Is(err, ErrLockTimeout) {
				return lockedFile{}, nil, fmt.Errorf("state lock (waited %s): %w", s.LockWait, err)
			}
			f.Close()
			return lockedFile{}, nil, fmt.Errorf("state lock: %w", err)
		}
		// Between the open and the lock a sweep may have removed the file
		// (it removes only under the lock, so once locked the path stays
		// as this look finds it): a file no longer at path is opened again
		// rather than written unlinked, which would lose the state.
		b, at, err := readIfAt(f, path, fi)
		if at && err == nil {
			return lockedFile{f, fi}, b, nil
		}
		unlockFile(f)
		f.Close()
		if at {
			return lockedFile{}, nil, &StateError{fmt.Errorf("read: %w", err)}
		}
	}
	return lockedFile{}, nil, &StateError{fmt.Errorf("%s was removed or replaced each time it was opened, %d times", path, openAttempts)}
}

// readIfAt reads the locked state file f whole if path still names it
// (at). The look at path gives the size, which cannot change while the lock
// is held, so one read of exactly that much replaces the read to the end
// and its closing empty read: the check costs no system call.
func readIfAt(f *os.File, path string, fi fs.FileInfo) (b []byte, at bool, err error) {
	now, ok := current(path, fi)
	if !ok {
		return nil, false, nil
	}
	b = make([]byte, now.Size())
	if n, err := f.ReadAt(b, 0); err != nil && (err != io.EOF || int64(n) != now.Size()) {
		return nil, true, err
	}
	return b, true, nil
}

// openAttempts bounds the opens of a state file, log or fallback lock
// that a sweep or a rotation takes away between the open and the lock.
// One retry is all a sweep can cause (it removes an idle file once); more
// means something removes the file as fast as it is made, and the writer
// says so instead of spinning.
const openAttempts = 4

// Peek returns a session's stored state and its version without taking
// the lock, for work to be prepared outside it: Tx.Current tells, under
// the lock, whether the state is still that version. A state file that
// does not parse (or is being rewritten) gives an error.
func (s *FileStore) Peek(agent, session string) (*SessionState, []byte, error) {
	_, path := s.paths(agent, session)
	b := []byte{}
	if f, err := openNoFollow(path, os.O_RDONLY, 0); err == nil {
		b, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	st, clean := load(b)
	if !clean {
		return nil, nil, errors.New("state does not parse")
	}
	if len(b) == 0 {
		// A session without a state: the work is prepared on the state
		// Locked will start it from (the clock epoch, past the log), and
		// adopted when the state is still missing and the log unchanged.
		if _, err := s.reconcile(agent, session, st, true); err != nil {
			return nil, nil, err
		}
		return st, lostVersion(st), nil
	}
	return st, b, nil
}

// lostVersion is the version of a state started from nothing: two such
// states are the same work when they saw the same log.
func lostVersion(st *SessionState) []byte {
	return fmt.Appendf(nil, "\x00lost %d", st.Log)
}

// Unlocked runs fn for a write that cannot take the session's lock (its
// holder is stuck, or the state file is unusable), with an honest position
// (AEP-0001 §7): a new epoch seeded from the clock in microseconds, above
// the stored state's and the log's, never reused, with a best-effort copy
// of the stored state for the table. Nothing fn changes is saved; writes of
// the same session through Unlocked are serialised by a lock of their own,
// and the locked writers move past the epoch once they see its events in
// the log.
func (s *FileStore) Unlocked(agent, session string, fn func(*Tx) error) error {
	dir, path := s.paths(agent, session)
	if lf := s.lockFallback(filepath.Join(dir, SafeName(session)+".fallback")); lf != nil {
		defer lf.Close()
		defer unlockFile(lf)
	}
	st := &SessionState{}
	if f, err := openNoFollow(path, os.O_RDONLY, 0); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, 16<<20))
		f.Close()
		if got, clean := load(b); clean {
			st = got
		}
	}
	epoch := s.clockEpoch()
	if e, err := nextEpoch(st.Epoch); err == nil {
		epoch = max(epoch, e)
	}
	if s.Log != nil {
		if p, ok := s.Log.Last(agent, session); ok {
			e, err := nextEpoch(p.Epoch)
			if err != nil {
				return err
			}
			epoch = max(epoch, e)
		}
	}
	st.Epoch, st.Next = epoch, 0
	return fn(&Tx{State: st})
}

// lockFallback opens and locks the lock file that serialises the writes of
// a session through Unlocked, or returns nil when it cannot be had (the
// write then goes ahead without it). A lock file the sweep removed between
// the open and the lock is opened again, so that two writers never hold
// locks on two different files of one path.
func (s *FileStore) lockFallback(path string) *os.File {
	for range openAttempts {
		lf, fi, err := openDirFileStat(path, os.O_CREATE|os.O_RDWR)
		if err != nil {
			return nil
		}
		if openedUnlocked != nil {
			openedUnlocked(path)
		}
		switch err := lockWithin(lf, s.LockWait, nil); {
		case errors.Is(err, ErrLockTimeout):
			return nil // the waiter keeps lf (see lockWithin)
		case err != nil:
			lf.Close()
			return nil
		}
		if _, ok := current(path, fi); ok {
			return lf
		}
		unlockFile(lf)
		lf.Close()
	}
	return nil
}

// load decodes a stored state; clean is false for one that does not parse
// or holds impossible positions (torn by a crash, tampered with).
func load(b []byte) (st *SessionState, clean bool) {
	st = &SessionState{}
	if len(b) == 0 {
		return st, true
	}
	fast, ok := decodeState(b)
	if ok {
		st = fast
	}
	if (ok || json.Unmarshal(b, st) == nil) && st.Epoch >= 0 && st.Next >= 0 && st.Log >= 0 {
		return st, true
	}
	return &SessionState{}, false
}

// clockEpoch is the epoch of a session whose state cannot say which
// positions it used, and of a write that could not take the lock: the
// clock's microseconds. Any epoch such a session used before came from the
// same clock, earlier, or counts up from a small number (a state's own
// epochs), so this one is above all of them; the log's last position,
// where there is a log, is taken into account besides (reconcile). In
// microseconds it stays within the 2^53 a JSON number holds exactly for
// consumers that read it as a double (I-JSON, RFC 7493), and writes through
// Unlocked (serialised, each above the log's last) get distinct ones.
func (s *FileStore) clockEpoch() int64 { return s.now().UnixMicro() }

// reconcile moves st past the session's log when the log was written by
// someone else since st was saved (its size differs), or when st is lost
// (empty: a new session, a swept or truncated state; or corrupt): a lost
// state starts at the clock epoch (clockEpoch), and if the log's last
// position is at or after st's next, st starts a new epoch after it
// (AEP-0001 §7.2). A session seen for the first time starts at the clock
// too: nothing tells it apart from one whose state was swept and whose log
// was rotated away, which has used positions nobody remembers. It reports
// whether st changed.
func (s *FileStore) reconcile(agent, session string, st *SessionState, lost bool) (bool, error) {
	if lost {
		*st = SessionState{Epoch: s.clockEpoch()}
	}
	if s.Log == nil {
		return lost, nil
	}
	size := s.Log.Size(agent, session)
	if !lost && size == st.Log {
		return false, nil
	}
	if p, ok := s.Log.Last(agent, session); ok && !st.after(p) {
		e, err := nextEpoch(p.Epoch)
		if err != nil {
			return false, err
		}
		st.Epoch, st.Next = e, 0
	}
	st.Log = size
	return true, nil
}

// rewrite replaces the content of the locked state file, old bytes long,
// with b. A state at least as long as the old one covers it entirely, so
// the file is cut only when the new state is shorter.
func rewrite(f *os.File, b []byte, old int) error {
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("state write: %w", err)
	}
	if len(b) >= old {
		return nil
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
// higher epoch from its log, so no position is ever reused. A file is
// removed only while the sweep holds its lock and the path still names it,
// so a writer that finds its locked file at the path is not swept under.
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
		if ext := filepath.Ext(e.Name()); err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) || ext != ".state" && ext != ".fallback" {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := openNoFollow(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if openedUnlocked != nil {
			openedUnlocked(p)
		}
		if tryLockFile(f) {
			// Removed only while its lock is held and only if p still
			// names it: a file another sweep removed since the open is not
			// the one at p, which a writer may have made and locked (this
			// lock does not guard it). Every remover keeping to this, a
			// writer that locks a file and finds p naming it knows that no
			// sweep removes it until it unlocks.
			if fi, err := f.Stat(); err == nil && fi.ModTime().Before(cutoff) {
				if _, ok := current(p, fi); ok && os.Remove(p) == nil {
					removed++
				}
			}
			unlockFile(f)
		}
		f.Close()
	}
	return removed
}
