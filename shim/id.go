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
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen.next(ulidMillis(t)).String()
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
func (s *stableIDs) next(at time.Time, typ string) string {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	rank := s.seen[typ]
	s.seen[typ]++
	sum := sha256.Sum256([]byte(s.key + "\x00" + typ + "\x00" + strconv.Itoa(rank)))
	var id ulid
	if !at.IsZero() && at.Unix() >= 0 {
		id.setTime(ulidMillis(at))
	}
	copy(id[6:], sum[:10])
	return id.String()
}

// newID is the id of draft d's event at time t: derived when stable is
// set, else fresh.
func newID(ids *IDs, stable *stableIDs, t time.Time, d mapping.Draft) string {
	if stable != nil {
		return stable.next(d.Time, d.Type)
	}
	return ids.New(t)
}
