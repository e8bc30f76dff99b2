package shim

import (
	"bytes"
	"errors"
	"math"
	"sync"

	"github.com/aep-hook/aep-hook/mapping"
)

// SessionState is what one (agent, session) keeps between hook processes:
// its order position, the event references the emitter links causes and
// subjects through, and the mapping table's own state.
type SessionState struct {
	// Epoch is the restart generation of the seq counter (AEP-0001 §7).
	Epoch int64 `json:"epoch"`
	// Next is the next seq to assign in Epoch.
	Next int64 `json:"next"`
	// Refs maps reference keys ("run:ID", "tool:CALL", a draft's Mark) to
	// event ids; recency-pruned.
	Refs mapping.State `json:"refs"`
	// Table is the vendor mapping's state.
	Table mapping.State `json:"table"`
	// Log is the size the session's log had after the last write this
	// state made: a log of another size was written by someone else (a
	// writer that could not take the lock) or this state was rolled back,
	// and the store reconciles the position with the log's before use.
	Log int64 `json:"log,omitempty"`
}

// ErrExhausted says a session's positions ran out: its epoch is at the
// int64 maximum, so no new epoch can start (AEP-0001 §7 would have a new
// session start instead; the vendor names the session, so the event is not
// written rather than given a wrapped or reused position).
var ErrExhausted = errors.New("the session's positions are exhausted (epoch at the int64 maximum)")

// nextEpoch is the epoch after e.
func nextEpoch(e int64) (int64, error) {
	if e >= math.MaxInt64 {
		return 0, ErrExhausted
	}
	return e + 1, nil
}

// take returns the next position of st, moving to a new epoch when the
// seq counter is at its maximum.
func (st *SessionState) take() (epoch, seq int64, err error) {
	if st.Next >= math.MaxInt64 || st.Next < 0 {
		e, err := nextEpoch(st.Epoch)
		if err != nil {
			return 0, 0, err
		}
		st.Epoch, st.Next = e, 0
	}
	epoch, seq = st.Epoch, st.Next
	st.Next++
	return epoch, seq, nil
}

// Tx is one locked update of a session's state.
type Tx struct {
	State *SessionState
	save  func() error
	saved bool
	// version is the stored state State was read from, when it was used
	// as stored (nil otherwise): work prepared on a Peek of the same
	// version is still valid.
	version []byte
	// logBase is the log's size when State was read.
	logBase int64
}

// Current reports whether State is exactly the stored state a Peek
// returned as version, so that work prepared on it may be adopted.
func (t *Tx) Current(version []byte) bool {
	return t.version != nil && version != nil && bytes.Equal(t.version, version)
}

// Appending records that n bytes are about to be appended to the session's
// log, so the store can tell its own writes from anyone else's.
func (t *Tx) Appending(n int) { t.State.Log = t.logBase + int64(n) }

// Save persists State now, while the lock is still held. The emitter saves
// the reserved positions before it writes events, so a crash between the two
// leaves a gap (legal) rather than a reused position.
func (t *Tx) Save() error {
	if t.save == nil {
		return nil
	}
	t.saved = true
	return t.save()
}

// Store keeps session states. Locked runs fn with the state of (agent,
// session) under a lock that every process sharing the store honours; state
// that fn changed is saved when fn calls Tx.Save, or when fn returns without
// error having never called it.
type Store interface {
	Locked(agent, session string, fn func(*Tx) error) error
}

// MemStore is an in-memory Store for one process (the map verb, tests).
// Each session has its own lock, so a session's lock can be taken while
// another's is held (the emitter nests them, Draft.Session).
type MemStore struct {
	mu sync.Mutex
	m  map[[2]string]*memSession
}

type memSession struct {
	mu sync.Mutex
	st SessionState
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{m: map[[2]string]*memSession{}} }

// Locked implements Store.
func (s *MemStore) Locked(agent, session string, fn func(*Tx) error) error {
	k := [2]string{agent, session}
	s.mu.Lock()
	ms := s.m[k]
	if ms == nil {
		ms = &memSession{}
		s.m[k] = ms
	}
	s.mu.Unlock()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return fn(&Tx{State: &ms.st})
}
