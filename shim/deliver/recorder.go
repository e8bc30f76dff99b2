package deliver

import "sync"

// Recorder is a shim.Sink placed after the JSONL log: it writes nothing
// and remembers which logs received lines, so the hook path delivers
// exactly the logs it just wrote. Safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	rels []string
	seen map[string]bool
}

// Write implements shim.Sink.
func (r *Recorder) Write(agent, session string, _ [][]byte) error {
	rel := LogRel(agent, session)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[rel] {
		r.seen[rel] = true
		r.rels = append(r.rels, rel)
	}
	return nil
}

// Logs returns the logs written so far, relative to the log root.
func (r *Recorder) Logs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rels...)
}
