package shim

import (
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
}

// Tx is one locked update of a session's state.
type Tx struct {
	State *SessionState
	save  func() error
	saved bool
}

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
type MemStore struct {
	mu sync.Mutex
	m  map[[2]string]*SessionState
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{m: map[[2]string]*SessionState{}} }

// Locked implements Store.
func (s *MemStore) Locked(agent, session string, fn func(*Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{agent, session}
	st := s.m[k]
	if st == nil {
		st = &SessionState{}
		s.m[k] = st
	}
	return fn(&Tx{State: st})
}
