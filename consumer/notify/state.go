package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// stateKeep is how long a delivery is remembered; past it a request is
// older than any max_age worth having.
const stateKeep = 7 * 24 * time.Hour

// stateMax bounds the deliveries remembered.
const stateMax = 20000

// state is what survives a restart: which request went to which route
// (so each is delivered once, reminders counted), and the attention.routed
// records the relay has not acknowledged yet. It holds no content: keys
// are route names, sources and ids.
type state struct {
	path string
	// Delivered maps route\x00source\x00id to the deliveries made.
	Delivered map[string]sent `json:"delivered"`
	// Outbox holds routed records not yet taken by the relay, in order.
	Outbox []json.RawMessage `json:"outbox,omitempty"`
}

// sent is one route's deliveries of one request.
type sent struct {
	N    int       `json:"n"`    // deliveries: 1, then one per reminder
	Last time.Time `json:"last"` // the latest
}

func deliveryKey(route, reqKey string) string { return route + "\x00" + reqKey }

// loadState reads the state file; a missing one is empty, a damaged one
// is set aside (renamed) and started afresh, so a torn write never stops
// the notifier.
func loadState(path string) (*state, error) {
	st := &state{path: path, Delivered: map[string]sent{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify state: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		os.Rename(path, path+".damaged")
		st = &state{path: path, Delivered: map[string]sent{}}
		return st, fmt.Errorf("notify state %s was damaged; set aside as %s.damaged and started afresh", path, filepath.Base(path))
	}
	if st.Delivered == nil {
		st.Delivered = map[string]sent{}
	}
	return st, nil
}

// prune forgets deliveries older than stateKeep, then the oldest past
// stateMax.
func (st *state) prune(now time.Time) {
	for k, s := range st.Delivered {
		if now.Sub(s.Last) > stateKeep {
			delete(st.Delivered, k)
		}
	}
	if len(st.Delivered) <= stateMax {
		return
	}
	keys := make([]string, 0, len(st.Delivered))
	for k := range st.Delivered {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return st.Delivered[keys[i]].Last.Before(st.Delivered[keys[j]].Last) })
	for _, k := range keys[:len(keys)-stateMax] {
		delete(st.Delivered, k)
	}
}

// save replaces the file atomically (a temporary file and a rename), mode
// 0600 in a 0700 folder.
func (st *state) save() error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("notify state: %w", err)
	}
	dir := filepath.Dir(st.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("notify state: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".state-*")
	if err != nil {
		return fmt.Errorf("notify state: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("notify state: %w", werr)
	}
	if err := os.Rename(tmp.Name(), st.path); err != nil {
		return fmt.Errorf("notify state: %w", err)
	}
	return nil
}
