// Package event is the relay's form of an AEP event: the bytes exactly as
// they were ingested, beside the envelope attributes routing reads
// (AEP-0001 §5: relays operate on the context attributes and never need
// data). Parse is the admission check every event passes before the relay
// stores, buffers or forwards it; its refusals name the rule broken.
package event

import (
	"encoding/json"
	"strconv"
	"sync"
	"unsafe"
)

// Version is the one AEP version the relay speaks.
const Version = "0.1"

// Pos is a position in a session's order (AEP-0001 §7).
type Pos struct{ Epoch, Seq int64 }

// Less orders positions lexicographically by (epoch, seq).
func (p Pos) Less(q Pos) bool {
	return p.Epoch < q.Epoch || p.Epoch == q.Epoch && p.Seq < q.Seq
}

// Ext is one extension attribute (AEP-0001 §5.4) with its value: a
// string, a bool, or a json.Number holding an integer.
type Ext struct {
	Name  string
	Value any
}

// Event is one admitted event. Its fields are read-only once Parse
// returns; it may be shared by many goroutines.
type Event struct {
	// Raw is the event as it arrived, one line without its newline; the
	// relay delivers these bytes (AEP-0001 §4.2). Only an event that
	// arrived spread over several lines is compacted onto one.
	Raw []byte

	ID, Type, Source, Agent     string
	Session, Run, Step, Subject string
	Cause, Severity, Capture    string
	Tenant                      string // the tenant extension attribute, "" when absent
	Pos                         Pos    // (epoch, seq); meaningful when Sequenced
	HasEpoch                    bool
	// Sequenced is true for an event that carries session and seq: one
	// with a resumable position in its emitter's session order.
	Sequenced bool
	// Ext are the extension attributes in arrival order.
	Ext []Ext

	mu    sync.Mutex
	views *[4][]byte // renderings at capture ceilings below full, made on first use
}

// Attr returns an envelope attribute for filtering: strings as strings,
// epoch as a json.Number, extension values as they are. Absent attributes
// report false (attr-match applies the spec's defaults itself).
func (e *Event) Attr(key string) (any, bool) {
	var s string
	switch key {
	case "id":
		s = e.ID
	case "type":
		s = e.Type
	case "subject":
		s = e.Subject
	case "source":
		s = e.Source
	case "agent":
		s = e.Agent
	case "session":
		s = e.Session
	case "run":
		s = e.Run
	case "step":
		s = e.Step
	case "cause":
		s = e.Cause
	case "severity":
		s = e.Severity
	case "capture":
		s = e.Capture
	case "epoch":
		if !e.HasEpoch {
			return nil, false
		}
		return json.Number(strconv.FormatInt(e.Pos.Epoch, 10)), true
	default:
		for _, x := range e.Ext {
			if x.Name == key {
				return x.Value, true
			}
		}
		return nil, false
	}
	return s, s != ""
}

// Command reports whether the event is a control command (AEP-0004 §2):
// control.{verb} other than the two acknowledgements, or a vendor's
// x.{vendor}.control.{verb}.
func (e *Event) Command() bool { return IsCommand(e.Type) }

// AgentScoped reports an agent.* event (AEP-0001 §5.2).
func (e *Event) AgentScoped() bool { return category(e.Type) == "agent" }

// View returns the event's rendering at capture level l (0..3), making it
// with mk on first use; renderings are kept for the event's life, so a
// fan-out to many subscribers at one ceiling down-levels once.
func (e *Event) View(l int, mk func() []byte) []byte {
	if l < 0 || l >= 4 {
		return e.Raw
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.views == nil {
		e.views = new([4][]byte)
	}
	if e.views[l] == nil {
		e.views[l] = mk()
	}
	return e.views[l]
}

// Size is what the event costs a buffer, roughly: its bytes and the
// struct holding its attributes (whose strings are views of the bytes).
func (e *Event) Size() int64 {
	return int64(len(e.Raw)) + int64(unsafe.Sizeof(*e))
}

// IsCommand reports whether typ is a control command type.
func IsCommand(typ string) bool {
	if rest, ok := cutPrefix(typ, "control."); ok {
		return rest != "accepted" && rest != "rejected"
	}
	if rest, ok := cutPrefix(typ, "x."); ok {
		for i := 0; i < len(rest); i++ {
			if rest[i] == '.' {
				_, ok := cutPrefix(rest[i+1:], "control.")
				return ok
			}
		}
	}
	return false
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

func category(typ string) string {
	for i := 0; i < len(typ); i++ {
		if typ[i] == '.' {
			return typ[:i]
		}
	}
	return typ
}
