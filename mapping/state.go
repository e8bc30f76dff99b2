package mapping

import "github.com/aep-hook/aep-hook/redact"

// maxState bounds the entries one session's table state keeps; the least
// recently touched go first (sessions may never end, AEP-0002 §4.1).
const maxState = 256

// State is one session's table state: a small string map that survives
// between hook processes in the shim's store. Entries are pruned by recency.
// Keys and values pass the token rules ([redact.Name]) on their way in, and
// keys on every lookup, so the state file never holds a token a vendor put
// into a name (a tool name, an MCP server URL) that the log may not hold.
type State struct {
	// Entries maps keys to values; exported for the store's encoding.
	Entries map[string]string `json:"e,omitempty"`
	// Touch records each key's last use, by a counter, for pruning.
	Touch map[string]uint64 `json:"t,omitempty"`
	// Clock is the counter Touch is stamped with.
	Clock uint64 `json:"c,omitempty"`
}

// Get returns the value under key and whether it is present.
func (s *State) Get(key string) (string, bool) {
	key = redact.Name(key)
	v, ok := s.Entries[key]
	if ok {
		s.stamp(key)
	}
	return v, ok
}

// getOwn is Get for one of the table's own constant keys, which the token
// rules leave as they are (TestOwnKeysPassTheTokenRules): no check on the
// way, on the lookups every moment makes.
func (s *State) getOwn(key string) (string, bool) {
	v, ok := s.Entries[key]
	if ok {
		s.stamp(key)
	}
	return v, ok
}

// Set stores val under key.
func (s *State) Set(key, val string) {
	s.SetOwn(redact.Name(key), redact.Name(val))
}

// SetOwn stores val under key as they are, for a value the table composes
// from what every event's envelope already carries as it is (the vendor's
// session id) and a nonce: the token rules would only corrupt it (a session
// id joined to a ULID reads as one long generated token) and hide nothing.
// key must be one of the table's own constant keys.
func (s *State) SetOwn(key, val string) {
	if s.Entries == nil {
		s.Entries = map[string]string{}
	}
	s.Entries[key] = val
	s.stamp(key)
	s.prune()
}

// Del removes key.
func (s *State) Del(key string) {
	key = redact.Name(key)
	delete(s.Entries, key)
	delete(s.Touch, key)
}

func (s *State) stamp(key string) {
	if s.Touch == nil {
		s.Touch = map[string]uint64{}
	}
	s.Clock++
	s.Touch[key] = s.Clock
}

func (s *State) prune() {
	for len(s.Entries) > maxState {
		oldest, min := "", ^uint64(0)
		for k := range s.Entries {
			if t := s.Touch[k]; t < min {
				oldest, min = k, t
			}
		}
		s.Del(oldest)
	}
}
