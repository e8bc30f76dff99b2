package shim

import (
	"crypto/sha256"
	"strconv"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
)

// IDs mints ULIDs that are strictly increasing within the process, so events
// of one hook sort in emission order. Safe for concurrent use.
type IDs struct {
	mu  sync.Mutex
	gen monotonic
}

// NewIDs returns a ULID source reading crypto/rand.
func NewIDs() *IDs { return &IDs{} }

// New returns a ULID for time t.
func (g *IDs) New(t time.Time) string {
	return g.mint(t).String()
}

// mint is the next ULID for time t.
func (g *IDs) mint(t time.Time) ulid {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen.next(ulidMillis(t))
}

// Now returns a ULID for the current time: as a method value
// (NewIDs().Now), the nonce source of an adapter that mints one per
// moment as it observes it.
func (g *IDs) Now() string { return g.New(time.Now()) }

// stableIDs derives the ids of one moment's events from a key naming the
// moment (agent, session, the adapter's nonce).
type stableIDs struct {
	key  string
	seen map[string]int // events of each type so far
}

// next is the id of the moment's next event of type typ: a ULID whose time
// is at (the moment's own time; 0 when it has none, so the id stays the
// same whenever it is made) and whose random part is a digest of the key,
// the type and its rank.
func (s *stableIDs) next(at time.Time, typ string) ulid {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	rank := s.seen[typ]
	s.seen[typ]++
	var in [256]byte // the digest's input, on the stack when it fits
	sum := sha256.Sum256(strconv.AppendInt(append(append(append(append(in[:0], s.key...), 0), typ...), 0), int64(rank), 10))
	var id ulid
	if !at.IsZero() && at.Unix() >= 0 {
		id.setTime(ulidMillis(at))
	}
	copy(id[6:], sum[:10])
	return id
}

// newID is the id of draft d's event at time t: derived when stable is
// set, else fresh.
func newID(ids *IDs, stable *stableIDs, t time.Time, d mapping.Draft) ulid {
	if stable != nil {
		return stable.next(d.Time, d.Type)
	}
	return ids.mint(t)
}
