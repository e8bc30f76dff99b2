package shim

import (
	"crypto/rand"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDs mints ULIDs that are strictly increasing within the process, so events
// of one hook sort in emission order. Safe for concurrent use.
type IDs struct {
	mu      sync.Mutex
	entropy io.Reader
}

// NewIDs returns a ULID source reading crypto/rand.
func NewIDs() *IDs {
	return &IDs{entropy: ulid.Monotonic(rand.Reader, 0)}
}

// New returns a ULID for time t.
func (g *IDs) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(t), g.entropy)
	if err != nil {
		// Monotonic entropy overflowed within one millisecond: fall back to
		// fresh entropy, still unique.
		id = ulid.MustNew(ulid.Timestamp(t), rand.Reader)
	}
	return id.String()
}
