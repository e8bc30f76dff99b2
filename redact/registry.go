package redact

import "sync"

// This file is the capture registry: the minimum capture level of every field
// of every registered payload type (AEP-0002 §5.2-§5.4, AEP-0004 control
// payloads, AEP-0006 field_spec, AEP-0009 assessments), written as the
// project's own table. TestRegistryMatchesSchemas checks it against the
// published schemas so the two never drift.

// star marks a [metadata*] field: present at metadata, but only as a
// structural stand-in (AEP-0002 §5.3, AEP-0003 §9.2).
type star uint8

const (
	notStarred star = iota
	starPrompt      // attention.requested.prompt: synthesized at metadata
	starLabel       // options[].label, fields[].label, choices[].label: the item's id
	starValues      // answer.values: structural entries only at metadata
)

// field is the capture annotation of one payload member.
type field struct {
	level    Level
	star     star
	required bool
	// pair names the redacted twin of a full-level content field (args ->
	// args_redacted); twin names the full original of a redacted twin.
	pair, twin string
	// props describes an object's members, or each item's members when
	// items is set (an array of objects).
	props fields
	items bool
}

// fields maps member names to their annotations.
type fields map[string]*field

func leaf(l Level) *field { return &field{level: l} }
func md() *field          { return leaf(Metadata) }
func rd() *field          { return leaf(Redacted) }
func obj(props fields) *field {
	return &field{level: Metadata, props: props}
}
func arr(props fields) *field {
	return &field{level: Metadata, props: props, items: true}
}
func req(f *field) *field { f.required = true; return f }
func starred(s star) *field {
	return &field{level: Metadata, star: s}
}

// withPair adds the X / X_redacted content pair to fs and returns fs.
func withPair(fs fields, name string) fields {
	tw := name + "_redacted"
	fs[name] = &field{level: Full, pair: tw}
	fs[tw] = &field{level: Redacted, twin: name}
	return fs
}

func toolRef() *field { return obj(fields{"name": req(md()), "call_id": md()}) }
func errorInfo() *field {
	return obj(fields{"type": md(), "message": rd()})
}
func cost() *field {
	return obj(fields{"currency": req(md()), "total": md(), "prompt": md(),
		"completion": md(), "cache": md(), "reasoning": md()})
}
func lineage() *field {
	return obj(fields{"session": md(), "run": md(), "agent": md()})
}
func task() *field { return obj(fields{"id": md(), "title": rd()}) }
func document() *field {
	return arr(withPair(fields{"id": md(), "score": md(), "metadata": md()}, "content"))
}
func answer() *field {
	return req(obj(fields{"option": md(), "text": rd(), "values": starred(starValues)}))
}

// usage adds the flat gen_ai usage counters to fs.
func usage(fs fields) fields {
	fs["gen_ai.usage.input_tokens"] = md()
	fs["gen_ai.usage.output_tokens"] = md()
	return fs
}

// specs caches each type's annotation as it is first asked for: a hook
// process gates an event or two, and building the whole table (some 200
// small maps) would cost it more than the gating; a receiver gating
// thousands must not rebuild one per event. Entries are never modified.
// Unknown types are not cached: they come from outside, unbounded.
var specs sync.Map // AEP type -> fields

// spec returns the annotation of typ's payload and whether the registry
// knows typ.
func spec(typ string) (fields, bool) {
	if v, ok := specs.Load(typ); ok {
		return v.(fields), true
	}
	f, ok := typeFields(typ)
	if !ok {
		return nil, false
	}
	v, _ := specs.LoadOrStore(typ, f)
	return v.(fields), true
}

// registeredTypes are the AEP types the registry annotates.
var registeredTypes = []string{
	"session.started",
	"session.ended",
	"session.compacted",
	"run.started",
	"run.finished",
	"run.failed",
	"run.cancelled",
	"run.step.started",
	"run.step.finished",
	"tool.requested",
	"tool.completed",
	"tool.failed",
	"tool.denied",
	"attention.requested",
	"attention.answered",
	"attention.resolved",
	"attention.timeout",
	"attention.routed",
	"progress.status",
	"progress.task.planned",
	"progress.task.completed",
	"progress.artifact.produced",
	"delegation.subagent.started",
	"delegation.subagent.stopped",
	"agent.presence",
	"agent.idle",
	"agent.health",
	"agent.heartbeat",
	"error.raised",
	"state.snapshot",
	"state.delta",
	"resource.retrieval.requested",
	"resource.retrieval.returned",
	"resource.retrieval.reranked",
	"resource.citation.recorded",
	"assessment.evaluation.recorded",
	"assessment.feedback.received",
	"assessment.guardrail.recorded",
	"control.attention.respond",
	"control.cancel",
	"control.pause",
	"control.resume",
	"control.accepted",
	"control.rejected",
}

// buildRegistry is the whole table, keyed by AEP type (the tests hold it
// to the schemas).
func buildRegistry() map[string]fields {
	m := make(map[string]fields, len(registeredTypes))
	for _, typ := range registeredTypes {
		m[typ], _ = typeFields(typ)
	}
	return m
}

// typeFields builds the annotation of one type's payload members; false
// for a type the registry does not know.
func typeFields(typ string) (fields, bool) {
	switch typ {
	case "session.started":
		return fields{
			"label":                rd(),
			"parent":               obj(fields{"session": req(md()), "run": md(), "agent": md()}),
			"client":               obj(fields{"name": req(md()), "version": md()}),
			"gen_ai.request.model": md(),
			"cwd":                  rd(),
		}, true
	case "session.ended":
		return fields{"reason": md(), "duration_ms": md(), "runs": md()}, true
	case "session.compacted":
		return usage(fields{"trigger": md(), "strategy": md(), "estimated_token_count": md(), "forgotten": md()}), true
	case "run.started":
		return usage(fields{"trigger": md(), "prompt": rd(), "cost": cost()}), true
	case "run.finished":
		return usage(fields{"duration_ms": md(), "summary": rd(), "cost": cost()}), true
	case "run.failed":
		return fields{"reason": req(md()), "error": errorInfo(), "duration_ms": md()}, true
	case "run.cancelled":
		return fields{"by": md(), "reason": rd(), "duration_ms": md()}, true
	case "run.step.started":
		return fields{"name": rd(), "initial_num_steps": md()}, true
	case "run.step.finished":
		return fields{"status": md()}, true
	case "tool.requested":
		return withPair(fields{"tool": req(toolRef()), "args_digest": md()}, "args"), true
	case "tool.completed":
		return withPair(usage(fields{"tool": req(toolRef()), "duration_ms": md(),
			"status": md(), "result_digest": md(), "cost": cost()}), "result"), true
	case "tool.failed":
		return fields{"tool": req(toolRef()), "error": req(errorInfo()), "duration_ms": md()}, true
	case "tool.denied":
		return fields{"tool": req(toolRef()), "by": req(md()), "rule": md()}, true
	case "attention.requested":
		return fields{
			"kind":        req(md()),
			"prompt":      req(starred(starPrompt)),
			"options":     arr(fields{"id": req(md()), "label": req(starred(starLabel))}),
			"fields":      fieldSpec(),
			"expires_at":  md(),
			"respond_via": md(),
			"context":     leaf(Full),
		}, true
	case "attention.answered":
		return fields{"answer": answer(), "by": md(), "via": md()}, true
	case "attention.resolved":
		return fields{"resolution": req(md()), "latency_ms": md()}, true
	case "attention.timeout":
		return fields{"after_ms": md()}, true
	case "attention.routed":
		return fields{"to": md(), "via": md()}, true
	case "progress.status":
		return fields{"message": rd(), "phase": md(), "percent": md()}, true
	case "progress.task.planned":
		return fields{"task": task(), "parent": md()}, true
	case "progress.task.completed":
		return fields{"task": task(), "status": md()}, true
	case "progress.artifact.produced":
		return fields{"artifact": obj(fields{"id": md(), "name": rd(), "mime": md(), "bytes": md(), "uri": rd()})}, true
	case "delegation.subagent.started":
		return fields{"child": lineage(), "agent_type": md(), "role": md()}, true
	case "delegation.subagent.stopped":
		return fields{"child": lineage(), "agent_type": md(), "status": md(), "duration_ms": md()}, true
	case "agent.presence":
		return fields{"state": req(md())}, true
	case "agent.idle":
		return fields{"since_ms": md(), "reason": md()}, true
	case "agent.health":
		return fields{"status": req(md()), "detail": rd()}, true
	case "agent.heartbeat":
		return fields{"tick": md(), "interval_ms": md()}, true
	case "error.raised":
		return fields{"error": errorInfo(), "code": md(), "fatal": md()}, true
	case "state.snapshot":
		return fields{"state": rd(), "key": md(), "rev": md()}, true
	case "state.delta":
		return fields{"delta": rd(), "key": md(), "rev": md()}, true
	case "resource.retrieval.requested":
		return fields{"query": rd(), "query_digest": md(), "corpus": md(), "top_k": md()}, true
	case "resource.retrieval.returned":
		return fields{"documents": document(), "count": md(), "corpus": md(), "duration_ms": md()}, true
	case "resource.retrieval.reranked":
		return fields{"query": rd(), "query_digest": md(), "model": md(), "top_k": md(),
			"input_documents": document(), "output_documents": document(), "count": md(), "duration_ms": md()}, true
	case "resource.citation.recorded":
		return fields{
			"citations": arr(withPair(fields{
				"source": obj(fields{"id": md(), "uri": rd(), "title": rd()}),
				"offset": obj(fields{
					"char":  obj(fields{"start": md(), "end": md()}),
					"page":  obj(fields{"page": md(), "start": md(), "end": md()}),
					"block": obj(fields{"block": md(), "start": md(), "end": md()}),
				}),
				"document_index": md(),
			}, "cited_text")),
			"count": md(),
		}, true
	case "assessment.evaluation.recorded":
		return fields{
			"gen_ai.evaluation.name":        md(),
			"gen_ai.evaluation.score.value": md(),
			"gen_ai.evaluation.score.label": md(),
			"gen_ai.evaluation.explanation": rd(),
			"evaluator":                     md(),
		}, true
	case "assessment.feedback.received":
		return fields{"rating": md(), "label": md(), "comment": rd(), "correction": rd(), "source": md()}, true
	case "assessment.guardrail.recorded":
		return fields{"guardrail": obj(fields{
			"stage":       md(),
			"verdict":     md(),
			"categories":  arr(fields{"name": md(), "score": md()}),
			"detector":    obj(fields{"name": md(), "version": md()}),
			"explanation": rd(),
		})}, true
	case "control.attention.respond":
		return fields{"answer": answer()}, true
	case "control.cancel":
		return fields{"scope": req(md()), "reason": rd()}, true
	case "control.pause":
		return fields{}, true
	case "control.resume":
		return fields{}, true
	case "control.accepted":
		return fields{}, true
	case "control.rejected":
		return fields{"reason": req(md()), "detail": rd()}, true
	}
	return nil, false
}

// fieldSpec is an AEP-0006 form's field_spec.
func fieldSpec() *field {
	return arr(fields{
		"id":       req(md()),
		"type":     req(md()),
		"label":    req(starred(starLabel)),
		"required": md(),
		"multi":    md(),
		"other":    md(),
		"choices":  arr(fields{"id": req(md()), "label": req(starred(starLabel))}),
		"min":      md(),
		"max":      md(),
	})
}

// hasStar reports whether f or any member below it is a [metadata*] field.
func (f *field) hasStar() bool {
	if f.star != notStarred {
		return true
	}
	for _, c := range f.props {
		if c.hasStar() {
			return true
		}
	}
	return false
}
