package a2a

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// The result cases of A2A (mapping.Facts.Name of a response or an event).
const (
	CaseTask     = "task"
	CaseMessage  = "message"
	CaseStatus   = "statusUpdate"
	CaseArtifact = "artifactUpdate"
)

// resultCase names what a result carries: the member a v1.0 result wraps
// its payload in ({"statusUpdate": {...}}), a v0.3 result's kind
// ("status-update"), or, for a bare object, what its members make it (a
// v1.0 GetTask answer is the task itself). "" when it is none of these.
func resultCase(res gjson.Result) string {
	if !res.IsObject() {
		return ""
	}
	for _, c := range [...]string{CaseStatus, CaseArtifact, CaseTask, CaseMessage} {
		if res.Get(c).IsObject() {
			return c
		}
	}
	switch res.Get("kind").String() {
	case "task":
		return CaseTask
	case "message":
		return CaseMessage
	case "status-update":
		return CaseStatus
	case "artifact-update":
		return CaseArtifact
	}
	switch {
	case res.Get("status").IsObject() && res.Get("id").Exists():
		return CaseTask
	case res.Get("messageId").Exists() && res.Get("parts").Exists():
		return CaseMessage
	}
	return ""
}

// payload is the object a result's case names (see resultCase).
func payload(res gjson.Result, c string) gjson.Result {
	if p := res.Get(c); c != "" && p.IsObject() {
		return p
	}
	return res
}

// resultIDs are the context and task a result names.
func resultIDs(res gjson.Result) (c, ctx, task string) {
	c = resultCase(res)
	p := payload(res, c)
	ctx = mapping.StrOf(p.Get("contextId"))
	switch c {
	case CaseTask:
		task = mapping.StrOf(p.Get("id"))
	default:
		task = mapping.StrOf(p.Get("taskId"))
	}
	return c, ctx, task
}

// requestIDs are the context and task a request names: its message's, or
// the task a task method addresses.
func requestIDs(req []byte) (ctx, task string) {
	r := gjson.GetManyBytes(req, "params.message.contextId", "params.message.taskId", "params.id", "params.name")
	ctx, task = mapping.StrOf(r[0]), mapping.StrOf(r[1])
	if task == "" {
		task = mapping.StrOf(r[2])
	}
	if task == "" {
		// v1.0 REST-style resource names: tasks/{id}.
		if n := mapping.StrOf(r[3]); len(n) > len("tasks/") && n[:len("tasks/")] == "tasks/" {
			task = n[len("tasks/"):]
		}
	}
	return ctx, task
}

// Decode turns one JSON line of `aep-hook map` input for the A2A table
// into its moment. The line is a JSON-RPC message as it travelled, with
// an optional "kind" ("request", "response", "event" or "end"; without it
// a message with a method is a request, a stream result (statusUpdate,
// artifactUpdate) an event, any other result or error a response), and
// the transport facts the tee would add where the message itself does not
// say them: "method" on a response (the request's), "session" and "run"
// (the context and task the exchange turned out to belong to), "tee" (the
// tee instance) and, for an end, "reason".
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) || !gjson.ParseBytes(line).IsObject() {
		return nil, fmt.Errorf("a2a: line is not a JSON object")
	}
	r := gjson.GetManyBytes(line, "kind", "method", "id", "session", "run", "tee", "reason", "result", "error")
	f := mapping.Facts{Method: mapping.StrOf(r[1]), ID: wireID(r[2]), Instance: mapping.StrOf(r[5]), Reason: mapping.StrOf(r[6])}
	kind := mapping.StrOf(r[0])
	if kind == "" {
		switch {
		case r[1].Exists() && !r[7].Exists() && !r[8].Exists():
			kind = "request"
		case resultCase(r[7]) == CaseStatus || resultCase(r[7]) == CaseArtifact:
			kind = "event"
		default:
			kind = "response"
		}
	}
	k, ok := mapping.ParseKind(kind)
	switch {
	case !ok:
		return nil, fmt.Errorf("a2a: kind %q: want request, response, event or end", kind)
	case k == mapping.KindRequest:
		f.Session, f.Run = requestIDs(line)
	case k == mapping.KindResponse || k == mapping.KindEvent:
		f.Name, f.Session, f.Run = resultIDs(r[7])
	case k == mapping.KindEnd:
	default:
		return nil, fmt.Errorf("a2a: kind %q: want request, response, event or end", kind)
	}
	f.Kind = k
	if s := mapping.StrOf(r[3]); s != "" {
		f.Session = s
	}
	if s := mapping.StrOf(r[4]); s != "" {
		f.Run = s
	}
	return []mapping.Moment{{Raw: line, Facts: f}}, nil
}

// wireID is a JSON-RPC id as text: a number as written, a string's
// content; "" for none or null.
func wireID(r gjson.Result) string {
	switch r.Type {
	case gjson.String:
		return r.Str
	case gjson.Number:
		return r.Raw
	}
	return ""
}
