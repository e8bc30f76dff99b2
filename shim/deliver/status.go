package deliver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Status is what a destination's shippers have recorded across processes,
// kept in $AEP_HOME/cursors/<destination>/status.json.
type Status struct {
	Destination   string `json:"destination"`
	Kind          string `json:"kind,omitempty"`
	LastError     string `json:"last_error,omitempty"`
	LastErrorTime string `json:"last_error_time,omitempty"`
	LastSuccess   string `json:"last_success,omitempty"`
	// Rejected counts lines the destination refused (400, or 413 for a
	// single line) and that were put aside in the rejected file.
	Rejected int64 `json:"rejected,omitempty"`
	// Dropped counts debug/info events skipped under backpressure
	// (AEP-0003 §8.4); they stay in the local log.
	Dropped int64 `json:"dropped_backpressure,omitempty"`
}

// Failing reports whether the last recorded outcome is an error.
func (s Status) Failing() bool {
	return s.LastError != "" && s.LastErrorTime >= s.LastSuccess
}

// statusDelta is what one process adds to a Status before flushing.
type statusDelta struct {
	err      string
	errTime  time.Time
	success  time.Time
	rejected int64
	dropped  int64
}

func (d *statusDelta) empty() bool {
	return d.err == "" && d.success.IsZero() && d.rejected == 0 && d.dropped == 0
}

// stats accumulates per-destination deltas in memory.
type stats struct {
	mu sync.Mutex
	m  map[string]*statusDelta
}

func (s *stats) get(d Destination) *statusDelta {
	if s.m == nil {
		s.m = map[string]*statusDelta{}
	}
	sd := s.m[d.Raw]
	if sd == nil {
		sd = &statusDelta{}
		s.m[d.Raw] = sd
	}
	return sd
}

func (s *stats) update(d Destination, fn func(*statusDelta)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.get(d))
}

// take removes and returns the delta of d.
func (s *stats) take(d Destination) statusDelta {
	s.mu.Lock()
	defer s.mu.Unlock()
	sd := s.get(d)
	out := *sd
	*sd = statusDelta{}
	return out
}

func statusPaths(home string, d Destination) (file, lock string) {
	dir := filepath.Join(home, "cursors", d.Key())
	return filepath.Join(dir, "status.json"), filepath.Join(dir, "status.lock")
}

// ReadStatus reads d's recorded status; a missing file is a zero Status.
func ReadStatus(home string, d Destination) Status {
	p, _ := statusPaths(home, d)
	return readStatusFile(p, d)
}

func readStatusFile(p string, d Destination) Status {
	st := Status{Destination: d.Raw, Kind: d.Kind.String()}
	if b, err := os.ReadFile(p); err == nil {
		json.Unmarshal(b, &st)
	}
	st.Destination, st.Kind = d.Raw, d.Kind.String()
	return st
}

// flushStatus merges delta into d's status file under its lock. With
// onlyIfNews, a success alone is written only when it clears a recorded
// error (so a healthy hook costs one small read, not a write).
func flushStatus(ctx context.Context, home string, d Destination, delta statusDelta, onlyIfNews bool) error {
	if delta.empty() {
		return nil
	}
	p, lp := statusPaths(home, d)
	if onlyIfNews && delta.err == "" && delta.rejected == 0 && delta.dropped == 0 {
		if !readStatusFile(p, d).Failing() {
			return nil
		}
	}
	l, err := lockPath(ctx, lp)
	if err != nil {
		return err
	}
	defer l.unlock()
	st := readStatusFile(p, d)
	st.Rejected += delta.rejected
	st.Dropped += delta.dropped
	if !delta.success.IsZero() {
		st.LastSuccess = stamp(delta.success)
	}
	if delta.err != "" {
		st.LastError, st.LastErrorTime = delta.err, stamp(delta.errTime)
	}
	return writeJSONAtomic(p, st)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }
