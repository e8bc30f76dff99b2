package follow

import (
	"encoding/json"
	"sort"
)

// Positions are a bridge's positions in the streams it follows (a kimi web
// session's seq and epoch, an OpenHands conversation's last event time), by
// stream key, bounded to the Max most recently moved: their JSON form is
// the Runner's cursor (Item.Cursor), which Load reads back after a restart.
// It is not safe for concurrent use.
type Positions[T any] struct {
	// Max bounds the positions kept (0: 32); the cursor file is small.
	Max   int
	at    map[string]T
	touch map[string]int64
	clock int64
}

// Set records key's position.
func (p *Positions[T]) Set(key string, v T) {
	if p.at == nil {
		p.at, p.touch = map[string]T{}, map[string]int64{}
	}
	p.clock++
	p.at[key], p.touch[key] = v, p.clock
}

// Get returns key's position.
func (p *Positions[T]) Get(key string) (T, bool) {
	v, ok := p.at[key]
	return v, ok
}

// Keys lists the keys with a position.
func (p *Positions[T]) Keys() []string {
	ks := make([]string, 0, len(p.at))
	for k := range p.at {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Cursor is the JSON form of the positions, forgetting all but the Max
// most recently moved.
func (p *Positions[T]) Cursor() string {
	max := p.Max
	if max <= 0 {
		max = 32
	}
	ks := make([]string, 0, len(p.at))
	for k := range p.at {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return p.touch[ks[i]] > p.touch[ks[j]] })
	for _, k := range ks[min(len(ks), max):] {
		delete(p.at, k)
		delete(p.touch, k)
	}
	out, _ := json.Marshal(p.at)
	return string(out)
}

// Load takes positions from a saved cursor; a malformed one adds nothing.
func (p *Positions[T]) Load(cursor string) {
	var m map[string]T
	if json.Unmarshal([]byte(cursor), &m) != nil {
		return
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		p.Set(k, m[k])
	}
}
