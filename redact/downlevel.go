package redact

import (
	"errors"
	"fmt"
)

// Downlevel enforces ceiling on an event this process did not emit (a hop,
// AEP-0001 §8.2). It never up-levels, and it never trusts a capture claim in
// the conservative direction: below a full ceiling every event is stripped
// by the registry to the level it leaves with, whatever it claims, because a
// claim of metadata (or none at all) proves nothing about what data holds.
//
// The level an event leaves with is the lower of the ceiling and its claim;
// an event without a claim counts as full. Downlevel is a mechanical hop,
// not a redacting re-emitter: a full (or unclaimed) event against a redacted
// ceiling lands on metadata (§8.2(e)), while a redacted-source event passes
// a redacted ceiling with its redacted fields as they are (their claim was
// minted at the source) and only its full-level fields dropped. Starred
// fields degrade structurally at metadata; an answer.values entry survives
// there only as a number or a boolean. A type the registry has no
// annotations for (x.* and reserved types) loses its data wholesale when
// the event is down-leveled below its claim (or below full, for an event
// that claims nothing). Members the registry does not name (AEP-0002 §5.1
// rule 4: metadata), and the members of an unannotated type kept at the
// metadata level it claims, are kept only where they are structural:
// numbers, booleans, and short identifier-like strings that no secret rule
// flags, under names that do not name a credential. The capture attribute is set to the level
// honoured (added when absent); no other attribute changes. The returned map
// is a shallow copy; event is not modified. Errors name the offending
// attribute, never its content.
func Downlevel(event map[string]any, ceiling Level) (map[string]any, error) {
	if err := checkEvent(event); err != nil {
		return nil, err
	}
	if ceiling < None || ceiling > Full {
		return nil, fmt.Errorf("downlevel: ceiling %d out of range", int(ceiling))
	}
	src := Full // no claim: assume the most
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
	if ceiling == Full {
		return out, nil
	}
	target := min(ceiling, src)
	if target == Redacted && src != Redacted { // §8.2(e): the claim cannot be minted
		target = Metadata
	}
	out["capture"] = target.String()
	data, hasData := event["data"].(map[string]any)
	if !hasData {
		return out, nil
	}
	typ := event["type"].(string)
	spec, known := spec(typ)
	switch {
	case target == None:
		delete(out, "data")
	case !known && target == Redacted:
		// a redacted-source x.* payload: its claim was minted at the source
	case !known && target < src:
		// A real down-level of a type with no capture annotations: nothing
		// says which of its members sit at or below the new level, so the
		// data goes whole (AEP-0001 §8.2, the conservative direction).
		delete(out, "data")
	case !known:
		if d, ok := structuralValue(data, ""); ok {
			out["data"] = d
		} else {
			delete(out, "data")
		}
	default:
		agent, _ := event["agent"].(string)
		subject, _ := event["subject"].(string)
		g := gater{ceiling: target, agent: agent, subject: subject, hop: true}
		d := g.object(data, spec, 0)
		if typ == "attention.requested" && target == Metadata {
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

// maxIdent is the longest string a hop keeps as an identifier.
const maxIdent = 64

// structuralValue filters v, found under key, to what is structural at
// metadata without a schema to vouch for it: numbers and booleans under a
// name that does not name a secret (a PIN is a number), and identifier-like
// strings (no blanks or path separators, at most maxIdent bytes) that no
// secret rule flags under a name that does not even hint at a credential;
// objects and arrays keep their structural members. ok is false when
// nothing of v is kept.
func structuralValue(v any, key string) (any, bool) {
	if key != "" && formSecretName(key) {
		return nil, false
	}
	switch t := v.(type) {
	case nil:
		return nil, true
	case string:
		return t, identLike(t) && classifyKey(key) == notCred && len(diagPipeline.get().secretHits(t)) == 0
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if y, ok := structuralValue(x, k); ok {
				out[k] = y
			}
		}
		return out, len(out) > 0 || len(t) == 0
	case []any:
		out := make([]any, 0, len(t))
		for _, x := range t {
			if y, ok := structuralValue(x, key); ok {
				out = append(out, y)
			}
		}
		return out, len(out) > 0 || len(t) == 0
	}
	return v, scalar(v)
}

// identLike reports whether s looks like an identifier, an enum value or a
// model name rather than free text: [A-Za-z0-9] first, then letters, digits
// and ._:@+- only.
func identLike(s string) bool {
	if s == "" {
		return true
	}
	if len(s) > maxIdent || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '@' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}
