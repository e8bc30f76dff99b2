package redact

import (
	"errors"
	"fmt"
)

// Downlevel enforces ceiling on an event this process did not emit (a hop,
// AEP-0001 §8.2). It never up-levels: an event at or below the ceiling is
// returned unchanged. Below its source level the event loses every data field
// above the new level, its starred fields degrade structurally, and its
// capture attribute is rewritten; no other attribute changes.
//
// Downlevel is a mechanical hop, not a redacting re-emitter: a full event
// against a redacted ceiling lands on metadata (§8.2(e)), while a
// redacted-source event passes a redacted ceiling unchanged. For a type the
// registry has no annotations for (x.* and reserved types) no data is kept
// below the source level. The returned map is a shallow copy; event is not
// modified. Errors name the offending attribute, never its content.
func Downlevel(event map[string]any, ceiling Level) (map[string]any, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	if ceiling < None || ceiling > Full {
		return nil, fmt.Errorf("downlevel: ceiling %d out of range", int(ceiling))
	}
	src := Metadata
	if c, ok := event["capture"]; ok {
		s, _ := c.(string)
		l, err := ParseLevel(s)
		if err != nil {
			return nil, errors.New("downlevel: attribute capture is not a capture level")
		}
		src = l
	}
	out := make(map[string]any, len(event))
	for k, v := range event {
		out[k] = v
	}
	if ceiling >= src {
		return out, nil
	}
	target := ceiling
	if target == Redacted { // src is Full: §8.2(e), the claim cannot be minted
		target = Metadata
	}
	out["capture"] = target.String()
	data, hasData := event["data"].(map[string]any)
	typ := event["type"].(string)
	spec, known := registry()[typ]
	switch {
	case !hasData:
	case target == None || !known:
		delete(out, "data")
	default:
		agent, _ := event["agent"].(string)
		subject, _ := event["subject"].(string)
		g := gater{ceiling: target, agent: agent, subject: subject}
		d := g.object(data, spec, 0)
		if typ == "attention.requested" {
			if _, ok := d["prompt"]; !ok {
				d["prompt"] = g.synthPrompt(data)
			}
		}
		out["data"] = d
	}
	return out, nil
}

// checkEvent verifies the envelope shape Downlevel relies on.
func checkEvent(e map[string]any) error {
	if e == nil {
		return errors.New("downlevel: not an event object")
	}
	for _, k := range [...]string{"aep", "id", "type", "time", "source", "agent"} {
		s, ok := e[k].(string)
		if !ok || s == "" {
			return fmt.Errorf("downlevel: attribute %s missing or not a string", k)
		}
	}
	if d, ok := e["data"]; ok {
		if _, isObj := d.(map[string]any); !isObj {
			return errors.New("downlevel: attribute data is not an object")
		}
	}
	return nil
}
