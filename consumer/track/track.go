// Package track follows AEP event streams and keeps what is still open: runs
// with no terminal event, attention requests with no close, sessions with no
// end. doctor, tail and timeline read it to show what never finished.
package track

import (
	"sort"

	"github.com/aep-hook/aep-hook/shim"
)

// Key names one session of one emitter.
type Key struct{ Source, Session string }

// Open is one thing that started and has not ended.
type Open struct {
	Agent, Session, Run string
	ID                  string // the starting event's id
	Type                string // run.started, attention.requested
	Subject             string
	Time                string // the starting event's time
}

// Tracker keeps the open runs and attention requests of the events it is
// fed. The zero value is ready.
type Tracker struct {
	runs  map[Key]map[string]Open // by run id
	attn  map[Key]map[string]Open // by request event id
	ended map[Key]bool
}

// terminal run types.
func runTerminal(t string) bool {
	return t == "run.finished" || t == "run.failed" || t == "run.cancelled"
}

// Add feeds one event.
func (t *Tracker) Add(e *shim.Event) {
	if t.runs == nil {
		t.runs, t.attn, t.ended = map[Key]map[string]Open{}, map[Key]map[string]Open{}, map[Key]bool{}
	}
	if e.Session == "" {
		return
	}
	k := Key{e.Source, e.Session}
	open := Open{Agent: e.Agent, Session: e.Session, Run: e.Run, ID: e.ID, Type: e.Type, Subject: e.Subject, Time: e.Time}
	switch {
	case e.Type == "run.started" && e.Run != "":
		put(t.runs, k, e.Run, open)
	case runTerminal(e.Type) && e.Run != "":
		del(t.runs, k, e.Run)
	case e.Type == "attention.requested":
		put(t.attn, k, e.ID, open)
	case e.Type == "attention.resolved" || e.Type == "attention.timeout":
		del(t.attn, k, e.Subject)
	case e.Type == "session.ended":
		t.ended[k] = true
	}
}

func put(m map[Key]map[string]Open, k Key, id string, o Open) {
	if m[k] == nil {
		m[k] = map[string]Open{}
	}
	m[k][id] = o
}

func del(m map[Key]map[string]Open, k Key, id string) {
	delete(m[k], id)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

// Runs returns the runs still open, oldest first.
func (t *Tracker) Runs() []Open { return flatten(t.runs) }

// Attention returns the attention requests still pending, oldest first.
func (t *Tracker) Attention() []Open { return flatten(t.attn) }

// RunOpen reports whether run of the session is open.
func (t *Tracker) RunOpen(source, session, run string) bool {
	_, ok := t.runs[Key{source, session}][run]
	return ok
}

// Request returns the open attention request with id in the session.
func (t *Tracker) Request(source, session, id string) (Open, bool) {
	o, ok := t.attn[Key{source, session}][id]
	return o, ok
}

// Ended reports whether the session has ended.
func (t *Tracker) Ended(source, session string) bool { return t.ended[Key{source, session}] }

func flatten(m map[Key]map[string]Open) []Open {
	var out []Open
	for _, byID := range m {
		for _, o := range byID {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Time != out[j].Time {
			return out[i].Time < out[j].Time
		}
		return out[i].ID < out[j].ID
	})
	return out
}
