package redact

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Content is what a mapping produced for one event, before gating: the
// payload at full fidelity plus what the gate needs to down-level it.
type Content struct {
	Type    string         // the AEP type, e.g. "tool.requested" or "x.codex.session.foo"
	Agent   string         // the emitting agent, for metadata synthesis
	Subject string         // the envelope subject, for metadata synthesis
	Data    map[string]any // the payload with original (unredacted) content
	// Meta holds structural stand-ins for the [metadata*] fields (a
	// synthesized "prompt", placeholder labels, a structural "answer") that a
	// mapping can state better than the generic synthesis. A Meta entry
	// replaces the whole top-level field of the same name, verbatim, and only
	// at a metadata ceiling and only for fields holding a starred member.
	Meta map[string]any
	// Levels declares the capture level of top-level fields of an x.* payload
	// (or of any type the registry does not know). A field without a declared
	// level is treated as full.
	Levels map[string]Level
	// Fields is the payload as a list, for GateFields (Gate reads Data):
	// unique keys, each with its declared level.
	Fields []Field
	// Secrets names the answer.values entries (form field ids) whose
	// request said they hold secrets ([SecretFields]: a writeOnly or
	// password-format schema, a PIN or one-time-code field, a prompt asking
	// for a password). At redacted they are replaced whole, at metadata
	// dropped whatever their type; a name that says so ([CredentialKey],
	// pin, otp, one_time_code, db_login, secret_answer) counts without
	// being listed.
	Secrets []string
}

// Gate applies ceiling to c and returns the payload to emit and the capture
// level honoured, which the emitter writes as the event's capture attribute.
//
// Fields above the ceiling are dropped; redacted-gated fields pass through p
// at the redacted ceiling and stay verbatim at full; a full content field X
// with a redacted twin (args, result, content, cited_text) becomes
// X_redacted = p.Value(X) at redacted and stays X only at full; the starred
// fields are synthesized from structure at metadata. Members a registered
// schema does not name default to metadata (AEP-0002 §5.1 rule 4). At None no
// payload is kept. The honoured level is the ceiling, capped at Full.
//
// A nil p at the redacted ceiling gets a pipeline with default options.
func Gate(c Content, ceiling Level, p *Pipeline) (map[string]any, Level) {
	if ceiling <= None {
		return nil, None
	}
	if ceiling > Full {
		ceiling = Full
	}
	if p == nil && ceiling == Redacted {
		p = NewPipeline(Options{})
	}
	g := gater{ceiling: ceiling, p: p, agent: c.Agent, subject: c.Subject, secrets: c.Secrets}
	spec, ok := spec(c.Type)
	if !ok {
		return g.untyped(c.Data, c.Levels), ceiling
	}
	out := g.object(c.Data, spec, 0)
	if ceiling == Metadata {
		for k, v := range c.Meta {
			if f := spec[k]; f != nil && f.hasStar() {
				out[k] = nameValue(g.withoutSecretValues(k, v))
			}
		}
	}
	if c.Type == "attention.requested" {
		if _, ok := out["prompt"]; !ok {
			out["prompt"] = g.synthPrompt(c.Data)
		}
	}
	return out, ceiling
}

// gater carries one gating pass's parameters.
type gater struct {
	ceiling        Level
	p              *Pipeline
	agent, subject string
	// hop marks a mechanical down-leveling pass (Downlevel): no pipeline
	// runs, redacted fields of a redacted-source event are kept as they
	// are, and a full content field is dropped rather than turned into its
	// redacted twin.
	hop bool
	// secrets are Content.Secrets.
	secrets []string
}

// secret reports whether the answer.values entry id holds a secret: listed
// by the mapping, or named so.
func (g gater) secret(id string) bool {
	return slices.Contains(g.secrets, id) || formSecretName(id) || proseSecret(id)
}

// withoutSecretValues drops the secret entries from a Meta stand-in's
// answer.values: the mapping vouches for structure, the gate for secrecy.
func (g gater) withoutSecretValues(field string, v any) any {
	ans, ok := v.(map[string]any)
	if field != "answer" || !ok {
		return v
	}
	vals, ok := ans["values"].(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(ans))
	for k, x := range ans {
		out[k] = x
	}
	kept := make(map[string]any, len(vals))
	for k, x := range vals {
		if !g.secret(k) {
			kept[k] = x
		}
	}
	out["values"] = kept
	return out
}

// untyped gates a payload the registry has no annotations for by its
// declared top-level levels, undeclared fields counting as full.
func (g gater) untyped(data map[string]any, levels map[string]Level) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		l, ok := levels[k]
		if !ok {
			l = Full
		}
		if x, keep := g.leaf(v, l); keep {
			out[k] = x
		}
	}
	return out
}

// leaf gates one value annotated at level l.
func (g gater) leaf(v any, l Level) (any, bool) {
	switch {
	case l > g.ceiling:
		return nil, false
	case l == Redacted && g.ceiling == Redacted && !g.hop:
		return g.p.Value(v), true
	}
	return g.verbatim(v), true
}

// verbatim is a value kept as it is below the full ceiling: an identifier
// or another metadata string, which still passes the token rules ([Name])
// so that no level keeps a token inside a name. A mechanical hop keeps
// what its source emitted.
func (g gater) verbatim(v any) any {
	if g.hop || g.ceiling >= Full {
		return v
	}
	return nameValue(v)
}

// object gates the members of an object described by spec; idx is the
// object's 0-based position when it is an array item.
func (g gater) object(data map[string]any, spec fields, idx int) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		f := spec[k]
		if f == nil {
			// unannotated member: metadata (AEP-0002 §5.1 rule 4); a hop
			// keeps it only where it is structural
			if !g.hop || g.ceiling > Metadata {
				out[k] = g.verbatim(v)
			} else if x, ok := structuralValue(v, k); ok {
				out[k] = x
			}
			continue
		}
		switch {
		case f.star != notStarred:
			if x, keep := g.starred(f.star, v, data, idx); keep {
				out[k] = x
			}
		case f.twin != "":
			if _, derived := data[f.twin]; derived && !g.hop {
				continue // produced from the original below
			}
			if x, keep := g.leaf(v, f.level); keep {
				out[k] = x
			}
		case f.pair != "":
			switch g.ceiling {
			case Full:
				out[k] = v
			case Redacted:
				if !g.hop {
					out[f.pair] = g.p.Value(v)
				}
			}
		case f.props != nil:
			if x, keep := g.nested(f, v); keep {
				out[k] = x
			}
		default:
			if x, keep := g.leaf(v, f.level); keep {
				out[k] = x
			}
		}
	}
	return out
}

// nested gates an object or array-of-objects member. A value of another
// shape than the schema's is treated as full (fail closed); an object that
// gating emptied is dropped unless the schema requires it.
func (g gater) nested(f *field, v any) (any, bool) {
	if f.level > g.ceiling {
		return nil, false
	}
	if f.items {
		list, ok := v.([]any)
		if !ok {
			return g.leaf(v, Full)
		}
		out := make([]any, 0, len(list))
		for i, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				if x, keep := g.leaf(it, Full); keep {
					out = append(out, x)
				}
				continue
			}
			out = append(out, g.object(m, f.props, i))
		}
		return out, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return g.leaf(v, Full)
	}
	x := g.object(m, f.props, 0)
	if len(x) == 0 && len(m) > 0 && !f.required {
		return nil, false
	}
	return x, true
}

// starred gates a [metadata*] member of parent.
func (g gater) starred(s star, v any, parent map[string]any, idx int) (any, bool) {
	if g.ceiling >= Redacted {
		if m, ok := v.(map[string]any); ok && s == starValues && g.ceiling == Redacted && !g.hop {
			return g.p.object(m, func(k string) bool { return g.secret(k) || CredentialKey(k) }), true
		}
		return g.leaf(v, Redacted)
	}
	switch s {
	case starPrompt:
		return g.synthPrompt(parent), true
	case starLabel:
		if id, ok := parent["id"].(string); ok && id != "" {
			return Name(id), true
		}
		return strconv.Itoa(idx + 1), true
	case starValues:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			if scalar(x) && !g.secret(k) {
				out[Name(k)] = x
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	}
	return nil, false
}

// scalar reports whether v is a number or a boolean: the only values that
// are structural at metadata without a schema to vouch for them. Strings
// and lists of strings may be free text (an answer.values list is a
// multi-select only when the request's choices say so, which a mapping
// states through Content.Meta).
func scalar(v any) bool {
	switch v.(type) {
	case float64, float32, int, int64, int32, uint, uint64, uint32, json.Number, bool:
		return true
	}
	return false
}

// synthPrompt is the AEP-0003 §9.2 metadata prompt: "{agent} requests
// {kind}: {subject}", without ": {subject}" when the subject is empty.
func (g gater) synthPrompt(data map[string]any) string {
	kind, _ := data["kind"].(string)
	if kind == "" {
		kind = "other"
	}
	agent := g.agent
	if agent == "" {
		agent = "agent"
	}
	var b strings.Builder
	b.WriteString(agent)
	b.WriteString(" requests ")
	b.WriteString(kind)
	if g.subject != "" {
		b.WriteString(": ")
		b.WriteString(Name(g.subject))
	}
	return b.String()
}
