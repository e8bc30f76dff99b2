package shim

import (
	"encoding/json"
	"fmt"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// Apply emits what the control loop decides in a session: fn computes the
// drafts from the session's table state (the request's acknowledgement and
// outcome, which settle it there) under the session's lock, and they are
// built, gated and written like a moment's (nonce names them). foreign are
// events another emitter wrote that belong in this session's record ahead
// of the drafts (the command being answered): each is held to this
// emitter's ceiling for its type (down-leveled, AEP-0001 §8.2) and written
// with its own id, source and no position.
func (e *Emitter) Apply(v mapping.Vendor, session, nonce string, foreign [][]byte, fn func(st *mapping.State) []mapping.Draft) (Result, error) {
	agent := v.AgentName()
	res := Result{Session: session}
	var lines lineBuf
	for _, raw := range foreign {
		line, err := e.hop(raw)
		if err != nil {
			return res, err
		}
		lines.buf = append(lines.buf, line...)
		lines.ends = append(lines.ends, len(lines.buf))
	}
	unlocked, err := e.inSession(agent, session, func(tx *Tx) error {
		drafts := fn(&tx.State.Table)
		var src sources
		evs, suppressed, err := e.build(agent, session, nonce, drafts, tx.State, &src)
		if err != nil {
			return err
		}
		if err := lines.add(evs, 1); err != nil {
			return err
		}
		res.Events, res.Suppressed = evs, suppressed
		tx.Appending(len(lines.buf))
		if err := tx.Save(); err != nil {
			return &LostError{len(lines.ends), err}
		}
		if lines.empty() {
			return nil
		}
		return e.Sink.Write(agent, session, lines.lines())
	})
	res.Unlocked = unlocked
	return res, err
}

// hop is a foreign event's line as this emitter may write it: its
// envelope as received (the attributes this binary writes, in spec order;
// others are left out), its data down-leveled to the ceiling this
// emitter's policy sets for its type.
func (e *Emitter) hop(raw []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("foreign event: %w", err)
	}
	typ, _ := m["type"].(string)
	low, err := redact.Downlevel(m, e.Policy.Ceiling(typ))
	if err != nil {
		return nil, fmt.Errorf("foreign event: %w", err)
	}
	b, err := json.Marshal(low)
	if err != nil {
		return nil, fmt.Errorf("foreign event: %w", err)
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, fmt.Errorf("foreign event: %w", err)
	}
	return appendEvent(nil, &ev)
}
