package redact

// Content is what a mapping produced for one event, before gating: the
// payload at full fidelity plus what the gate needs to down-level it.
type Content struct {
	Type    string         // the AEP type, e.g. "tool.requested" or "x.codex.session.foo"
	Agent   string         // the emitting agent, for metadata synthesis
	Subject string         // the envelope subject, for metadata synthesis
	Data    map[string]any // the payload with original (unredacted) content
	// Meta holds structural stand-ins for the [metadata*] fields (a
	// synthesized "prompt", placeholder labels) that a mapping can state
	// better than the generic synthesis. Used only at a metadata ceiling.
	Meta map[string]any
	// Levels declares the capture level of top-level fields of an x.* payload.
	// A field of an x.* payload without a declared level is treated as full.
	Levels map[string]Level
}

// Gate applies ceiling to c and returns the payload to emit and the capture
// level honoured, which the emitter writes as the event's capture attribute.
// Fields above the ceiling are dropped, redacted-gated fields pass through p
// at the redacted ceiling, and the starred fields are synthesized from
// structure at metadata. At None no payload is kept.
func Gate(c Content, ceiling Level, p *Pipeline) (map[string]any, Level) {
	// TODO(redact): the full registry-driven gate. Placeholder keeps nothing.
	if ceiling <= None {
		return nil, None
	}
	return map[string]any{}, ceiling
}
