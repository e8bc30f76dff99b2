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

// registry returns the capture table, keyed by AEP type. It is built once,
// on first use (a hook process that gates one event builds it once; a
// receiver gating thousands must not rebuild it per event), and is never
// modified afterwards: callers only read it.
var registry = sync.OnceValue(buildRegistry)

func buildRegistry() map[string]fields {
	fieldSpec := arr(fields{
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
	return map[string]fields{
		"session.started": {
			"label":                rd(),
			"parent":               obj(fields{"session": req(md()), "run": md(), "agent": md()}),
			"client":               obj(fields{"name": req(md()), "version": md()}),
			"gen_ai.request.model": md(),
			"cwd":                  rd(),
		},
		"session.ended":     {"reason": md(), "duration_ms": md(), "runs": md()},
		"session.compacted": usage(fields{"trigger": md(), "strategy": md(), "estimated_token_count": md(), "forgotten": md()}),
		"run.started":       usage(fields{"trigger": md(), "prompt": rd(), "cost": cost()}),
		"run.finished":      usage(fields{"duration_ms": md(), "summary": rd(), "cost": cost()}),
		"run.failed":        {"reason": req(md()), "error": errorInfo(), "duration_ms": md()},
		"run.cancelled":     {"by": md(), "reason": rd(), "duration_ms": md()},
		"run.step.started":  {"name": rd(), "initial_num_steps": md()},
		"run.step.finished": {"status": md()},
		"tool.requested":    withPair(fields{"tool": req(toolRef()), "args_digest": md()}, "args"),
		"tool.completed": withPair(usage(fields{"tool": req(toolRef()), "duration_ms": md(),
			"status": md(), "result_digest": md(), "cost": cost()}), "result"),
		"tool.failed": {"tool": req(toolRef()), "error": req(errorInfo()), "duration_ms": md()},
		"tool.denied": {"tool": req(toolRef()), "by": req(md()), "rule": md()},
		"attention.requested": {
			"kind":        req(md()),
			"prompt":      req(starred(starPrompt)),
			"options":     arr(fields{"id": req(md()), "label": req(starred(starLabel))}),
			"fields":      fieldSpec,
			"expires_at":  md(),
			"respond_via": md(),
			"context":     leaf(Full),
		},
		"attention.answered":           {"answer": answer(), "by": md(), "via": md()},
		"attention.resolved":           {"resolution": req(md()), "latency_ms": md()},
		"attention.timeout":            {"after_ms": md()},
		"attention.routed":             {"to": md(), "via": md()},
		"progress.status":              {"message": rd(), "phase": md(), "percent": md()},
		"progress.task.planned":        {"task": task(), "parent": md()},
		"progress.task.completed":      {"task": task(), "status": md()},
		"progress.artifact.produced":   {"artifact": obj(fields{"id": md(), "name": rd(), "mime": md(), "bytes": md(), "uri": rd()})},
		"delegation.subagent.started":  {"child": lineage(), "agent_type": md(), "role": md()},
		"delegation.subagent.stopped":  {"child": lineage(), "agent_type": md(), "status": md(), "duration_ms": md()},
		"agent.presence":               {"state": req(md())},
		"agent.idle":                   {"since_ms": md(), "reason": md()},
		"agent.health":                 {"status": req(md()), "detail": rd()},
		"agent.heartbeat":              {"tick": md(), "interval_ms": md()},
		"error.raised":                 {"error": errorInfo(), "code": md(), "fatal": md()},
		"state.snapshot":               {"state": rd(), "key": md(), "rev": md()},
		"state.delta":                  {"delta": rd(), "key": md(), "rev": md()},
		"resource.retrieval.requested": {"query": rd(), "query_digest": md(), "corpus": md(), "top_k": md()},
		"resource.retrieval.returned":  {"documents": document(), "count": md(), "corpus": md(), "duration_ms": md()},
		"resource.retrieval.reranked": {"query": rd(), "query_digest": md(), "model": md(), "top_k": md(),
			"input_documents": document(), "output_documents": document(), "count": md(), "duration_ms": md()},
		"resource.citation.recorded": {
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
		},
		"assessment.evaluation.recorded": {
			"gen_ai.evaluation.name":        md(),
			"gen_ai.evaluation.score.value": md(),
			"gen_ai.evaluation.score.label": md(),
			"gen_ai.evaluation.explanation": rd(),
			"evaluator":                     md(),
		},
		"assessment.feedback.received": {"rating": md(), "label": md(), "comment": rd(), "correction": rd(), "source": md()},
		"assessment.guardrail.recorded": {"guardrail": obj(fields{
			"stage":       md(),
			"verdict":     md(),
			"categories":  arr(fields{"name": md(), "score": md()}),
			"detector":    obj(fields{"name": md(), "version": md()}),
			"explanation": rd(),
		})},
		"control.attention.respond": {"answer": answer()},
		"control.cancel":            {"scope": req(md()), "reason": rd()},
		"control.pause":             {},
		"control.resume":            {},
		"control.accepted":          {},
		"control.rejected":          {"reason": req(md()), "detail": rd()},
	}
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
