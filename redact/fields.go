package redact

// Field is one top-level member of an untyped payload given as a list
// rather than a map (Content.Fields): its key, its value at full fidelity
// and its declared capture level (Full when the payload declares none).
type Field struct {
	Key   string
	Value any
	Level Level
}

// GateFields is Gate for a payload given as fields (Content.Fields, Data
// nil), the form a table builds when it has the payload's members as a list
// already: the OTLP records' attributes. The gated fields are appended to
// dst[:0], in no particular order, as Gate's map holds its members: every
// value gated as Gate gates a member of an untyped payload declared at the
// field's level. The result is nil exactly when Gate's map would be (at
// None), and dst's storage is only reused, never kept.
//
// A type the registry annotates is gated through Gate on the fields as a
// map, the fields' own levels then unused: its schema, not the table,
// declares its members' levels, as on the map path.
func GateFields(dst []Field, c Content, ceiling Level, p *Pipeline) ([]Field, Level) {
	if ceiling <= None {
		return nil, None
	}
	if ceiling > Full {
		ceiling = Full
	}
	if _, typed := spec(c.Type); typed {
		data := make(map[string]any, len(c.Fields))
		for _, f := range c.Fields {
			data[f.Key] = f.Value
		}
		c.Data, c.Fields = data, nil
		m, honoured := Gate(c, ceiling, p)
		out := dst[:0]
		for k, v := range m {
			out = append(out, Field{Key: k, Value: v, Level: Full})
		}
		return nonNil(out), honoured
	}
	if p == nil && ceiling == Redacted {
		p = NewPipeline(Options{})
	}
	g := gater{ceiling: ceiling, p: p, agent: c.Agent, subject: c.Subject, secrets: c.Secrets}
	out := dst[:0]
	for _, f := range c.Fields {
		if x, keep := g.leaf(f.Value, f.Level); keep {
			out = append(out, Field{Key: f.Key, Value: x, Level: f.Level})
		}
	}
	return nonNil(out), ceiling
}

// nonNil is fs, or an empty list when fs is nil: a payload that gating
// emptied is still a payload ({}), as Gate's empty map is.
func nonNil(fs []Field) []Field {
	if fs == nil {
		return []Field{}
	}
	return fs
}
