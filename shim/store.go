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
