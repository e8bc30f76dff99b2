package mapping

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/redact"
)

// A2A is the AEP-0002 Annex A.17 table for A2A (Agent2Agent) task streams,
// fed by TransportA2A: the JSON-RPC tee in front of an A2A server
// (`aep-hook a2a`) and the task follower (`aep-hook follow a2a`). It reads
// both wire generations: A2A v1.0 (@a2a-js/sdk 1.x: methods SendMessage,
// SendStreamingMessage, GetTask, CancelTask, SubscribeToTask; states
// TASK_STATE_*; stream results {task|message|statusUpdate|artifactUpdate})
// and v0.3 (message/send, message/stream, tasks/*; states input-required,
// ...; results with kind).
//
// Identity: the contextId is the AEP session, the task id the run. A
// SendMessage answered by a bare Message (no task) is a run of its own,
// named by the user message's id. The Annex states two rules (INPUT_REQUIRED
// / AUTH_REQUIRED → attention.requested with kind input / auth; REJECTED →
// run.failed reason rejected); the rest of the table is the project's
// decision, pinned in fixtures/a2a/pins/a2a.json:
//
//   - the first moment of a context opens the session (session.started,
//     client a2a); A2A has no session end;
//   - a user message opening a task (or a task first seen) starts the run
//     (trigger user, the message text as prompt, its parts' digest);
//   - SUBMITTED → progress.task.planned (once per task), WORKING →
//     progress.status (phase working, the status message as text), an
//     artifact first seen → progress.artifact.produced (appended chunks are
//     deltas: only behind --deltas, x.a2a.artifact.delta);
//   - COMPLETED → run.finished (the status message as summary), FAILED →
//     run.failed (reason error), REJECTED → run.failed (reason rejected),
//     CANCELED → run.cancelled (by user when a CancelTask for the task was
//     seen); a task that planned closes its plan item first
//     (progress.task.completed); one terminal per task: later states and
//     snapshots of a closed task change nothing;
//   - the user message that continues an interrupted task answers the
//     request (attention.answered, via oob, then attention.resolved
//     answered); a task that leaves the interrupted state without the
//     answer having been seen (the follower sees no user messages) is
//     answered with an empty answer when it resumes or completes, and the
//     request is dismissed when the task fails, is rejected or cancelled;
//   - repeated status snapshots (a GetTask after a stream, a catch-up) are
//     idempotent: a status already applied is not applied again.
func A2A() Vendor {
	return Vendor{
		Name:      "a2a",
		Summary:   "A2A task streams: the JSON-RPC tee in front of an A2A server and the task follower",
		Transport: TransportA2A,
		Identify:  a2aIdentify,
		Map:       a2aMap,
	}
}

func a2aIdentify(m Moment) (string, string) {
	s := m.Facts.Session
	if s == "" {
		s = UnknownSession
	}
	name := m.Facts.Name
	if m.Facts.Kind == KindRequest || name == "" {
		name = m.Facts.Method
	}
	return name, s
}

// A2AMethod names a JSON-RPC method by its v1.0 name, whichever generation
// spelled it ("message/stream" → "SendStreamingMessage"); an unknown name
// is returned as it is.
func A2AMethod(method string) string {
	switch method {
	case "message/send":
		return "SendMessage"
	case "message/stream":
		return "SendStreamingMessage"
	case "tasks/get":
		return "GetTask"
	case "tasks/cancel":
		return "CancelTask"
	case "tasks/resubscribe":
		return "SubscribeToTask"
	case "tasks/list":
		return "ListTasks"
	}
	return method
}

// A2AState is a task state as one lower-case word of either generation:
// "TASK_STATE_INPUT_REQUIRED" and "input-required" are "input_required";
// "cancelled" is "canceled"; "" for none.
func A2AState(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "task_state_")
	s = strings.ReplaceAll(s, "-", "_")
	if s == "cancelled" {
		s = "canceled"
	}
	return s
}

// Table-state keys (per session = per context).
const (
	a2aSeenKey = "a2a.session"
	// a2aTaskPrefix: the task's run ("open" while live, "done" after its
	// terminal).
	a2aTaskPrefix = "a2a.task:"
	// a2aStatusPrefix: the last status applied (state, timestamp, message).
	a2aStatusPrefix = "a2a.status:"
	// a2aPlanPrefix: the task was announced as a planned item.
	a2aPlanPrefix = "a2a.plan:"
	// a2aCancelPrefix: a CancelTask for the task was seen.
	a2aCancelPrefix = "a2a.cancel:"
	// a2aArtPrefix: an artifact (task/artifact) was announced.
	a2aArtPrefix = "a2a.art:"
	// a2aAskPrefix: the kind (input, auth) of the task's request.
	a2aAskPrefix = "a2a.ask:"
	// a2aReqPrefix: the run a message-only request opened, by the
	// request's wire id.
	a2aReqPrefix = "a2a.req:"
)

func a2aAttnKey(task string) string { return "a2a.attn:" + task }

func a2aMap(m Moment, st *State) ([]Draft, error) {
	var ds []Draft
	if m.Facts.Session != "" {
		if _, seen := st.Get(a2aSeenKey); !seen {
			st.Set(a2aSeenKey, "1")
			ds = append(ds, Draft{Type: "session.started", Data: Data("client", map[string]any{"name": "a2a"})})
		}
	}
	raw := m.Raw
	switch m.Facts.Kind {
	case KindRequest:
		return append(ds, a2aRequest(m, st)...), nil
	case KindEnd:
		return append(ds, Draft{Type: "x.a2a.stream.ended", Run: m.Facts.Run, Severity: debug,
			Data:   Data("reason", m.Facts.Reason, "method", A2AMethod(m.Facts.Method)),
			Levels: extLevels(redact.Metadata, "reason", "method")}), nil
	case KindResponse, KindEvent, KindRecord:
	default:
		return ds, nil
	}
	if e := gjson.GetBytes(raw, "error"); e.Exists() && e.Type != gjson.Null {
		return append(ds, a2aError(m, st, []byte(e.Raw))...), nil
	}
	p := a2aPayload(raw, m.Facts.Name)
	switch m.Facts.Name {
	case "task":
		return append(ds, a2aTask(m, st, p)...), nil
	case "statusUpdate":
		task := firstNonEmpty(Str(p, "taskId"), m.Facts.Run)
		return append(ds, a2aStatus(m, st, task, Raw(p, "status"))...), nil
	case "artifactUpdate":
		task := firstNonEmpty(Str(p, "taskId"), m.Facts.Run)
		return append(ds, a2aArtifact(m, st, task, p)...), nil
	case "message":
		return append(ds, a2aReply(m, st, p)...), nil
	case "":
		return ds, nil
	}
	return append(ds, Draft{Type: vendorEventType("a2a", wireSegments(m.Facts.Name)...), Run: m.Facts.Run,
		Severity: debug, Data: map[string]any{}}), nil
}

// a2aPayload locates the object a result's case names: result.<name>
// (v1.0 stream results and SendMessage responses), <name> (the REST
// binding's stream results), else result itself (a v0.3 result with its
// kind, a v1.0 GetTask / CancelTask task).
func a2aPayload(raw []byte, name string) []byte {
	if name != "" {
		if r := gjson.GetBytes(raw, "result."+name); r.IsObject() {
			return []byte(r.Raw)
		}
		if r := gjson.GetBytes(raw, name); r.IsObject() {
			return []byte(r.Raw)
		}
	}
	if r := gjson.GetBytes(raw, "result"); r.IsObject() {
		return []byte(r.Raw)
	}
	return raw
}

// a2aText joins a message's text parts (v1.0 {text}, v0.3 {kind:text,
// text}) with blank lines.
func a2aText(msg []byte) string {
	var parts []string
	for _, p := range gjson.GetBytes(msg, "parts").Array() {
		if t := p.Get("text"); t.Type == gjson.String && t.Str != "" {
			parts = append(parts, t.Str)
		}
	}
	return strings.Join(parts, "\n\n")
}

// a2aRequest handles a client's request: a message opens a run or answers
// an interrupted task; a cancel is remembered for the task's terminal.
func a2aRequest(m Moment, st *State) []Draft {
	raw := m.Raw
	switch A2AMethod(m.Facts.Method) {
	case "SendMessage", "SendStreamingMessage":
	case "CancelTask":
		if task := firstNonEmpty(m.Facts.Run, Str(raw, "params.id")); task != "" {
			st.Set(a2aCancelPrefix+task, "1")
		}
		return nil
	default:
		return nil
	}
	msg := Raw(raw, "params.message")
	text := a2aText(msg)
	task := firstNonEmpty(m.Facts.Run, Str(msg, "taskId"))
	if task == "" {
		// A message-only exchange, or a request whose task is not known:
		// its own run, named by the user message.
		run := firstNonEmpty(Str(msg, "messageId"), m.Nonce)
		if m.Facts.ID != "" {
			st.Set(a2aReqPrefix+m.Facts.Instance+"/"+m.Facts.ID, run)
		}
		return []Draft{a2aRunStarted(run, msg, text)}
	}
	state, known := st.Get(a2aTaskPrefix + task)
	if !known {
		st.Set(a2aTaskPrefix+task, "open")
		return []Draft{a2aRunStarted(task, msg, text)}
	}
	if state == "done" {
		return nil
	}
	key := a2aAttnKey(task)
	if _, pending := st.Get(attnPendingPrefix + key); !pending {
		return nil // a message to a working task: no turn of its own
	}
	return a2aAnswer(st, task, Data("text", text))
}

// a2aRunStarted opens run with the user message as its prompt.
func a2aRunStarted(run string, msg []byte, text string) Draft {
	d := Data("trigger", "user")
	if parts := gjson.GetBytes(msg, "parts"); parts.Exists() {
		d["message_digest"] = redact.DigestJSON([]byte(parts.Raw))
		if text != "" {
			d["prompt"] = text
		}
	}
	return Draft{Type: "run.started", Run: run, Data: d}
}

// a2aAnswer answers and resolves the task's pending request (raised in the
// task's run).
func a2aAnswer(st *State, task string, answer map[string]any) []Draft {
	return answeredOOB(st, a2aAttnKey(task), answer, nil)
}

// a2aEnsureRun starts the task's run when this is its first sight (a task
// the channel did not see being created: a follower attaching, a request
// not observed).
func a2aEnsureRun(st *State, task string) []Draft {
	if task == "" {
		return nil
	}
	if _, known := st.Get(a2aTaskPrefix + task); known {
		return nil
	}
	st.Set(a2aTaskPrefix+task, "open")
	return []Draft{{Type: "run.started", Run: task, Data: Data("trigger", "user")}}
}

// a2aTask applies a task snapshot: its status and its artifacts.
func a2aTask(m Moment, st *State, task []byte) []Draft {
	id := firstNonEmpty(Str(task, "id"), m.Facts.Run)
	if id == "" {
		return nil
	}
	ds := a2aEnsureRun(st, id)
	var arts []Draft
	for _, a := range gjson.GetBytes(task, "artifacts").Array() {
		arts = append(arts, a2aArtifactSeen(st, id, []byte(a.Raw))...)
	}
	if s := Raw(task, "status"); s != nil {
		status := a2aStatus(m, st, id, s)
		// Artifacts exist before the state that ends the task.
		return append(append(ds, arts...), status...)
	}
	return append(ds, arts...)
}

// a2aStatus applies one task status.
func a2aStatus(m Moment, st *State, task string, status []byte) []Draft {
	if task == "" || status == nil {
		return nil
	}
	ds := a2aEnsureRun(st, task)
	if run, _ := st.Get(a2aTaskPrefix + task); run == "done" {
		return ds
	}
	state := A2AState(Str(status, "state"))
	msg := Raw(status, "message")
	sig := state + "|" + Str(status, "timestamp") + "|" + Str(msg, "messageId")
	if last, ok := st.Get(a2aStatusPrefix + task); ok && last == sig {
		return ds // a snapshot of a status already applied
	}
	st.Set(a2aStatusPrefix+task, sig)
	text := a2aText(msg)
	key := a2aAttnKey(task)
	_, pending := st.Get(attnPendingPrefix + key)
	switch state {
	case "input_required", "auth_required":
		kind := "input"
		if state == "auth_required" {
			kind = "auth"
		}
		prompt := text
		if prompt == "" {
			prompt = "The agent needs input to continue"
			if kind == "auth" {
				prompt = "The agent needs authentication to continue"
			}
		}
		if asked, _ := st.Get(a2aAskPrefix + task); pending && asked == kind {
			return ds // still asking what it asked: one request
		}
		st.Set(a2aAskPrefix+task, kind)
		ds = append(ds, raiseAttention(st, key, task)...)
		return append(ds, Draft{Type: "attention.requested", Subject: task, Run: task, Mark: key,
			Data: map[string]any{"kind": kind, "prompt": prompt}})
	case "submitted", "working", "completed":
		if pending {
			// The task resumed: it was given what it asked for, out of the
			// channel's sight.
			ds = append(ds, a2aAnswer(st, task, map[string]any{})...)
		}
	case "failed", "rejected", "canceled":
		if pending {
			ds = append(ds, settleAttention(st, key, "dismissed", ""))
		}
	}
	switch state {
	case "submitted":
		if _, planned := st.Get(a2aPlanPrefix + task); !planned {
			st.Set(a2aPlanPrefix+task, "1")
			ds = append(ds, Draft{Type: "progress.task.planned", Subject: task, Run: task,
				Data: Data("task", Data("id", task))})
		}
		return ds
	case "working":
		return append(ds, Draft{Type: "progress.status", Subject: task, Run: task,
			Data: Data("phase", "working", "message", text)})
	case "completed", "failed", "rejected", "canceled":
		return append(ds, a2aTerminal(st, task, state, text)...)
	}
	return append(ds, Draft{Type: "x.a2a.task.status", Subject: task, Run: task, Severity: debug,
		Data: Data("state", Str(status, "state")), Levels: extLevels(redact.Metadata, "state")})
}

// a2aTerminal closes the task's run (and its plan item) once.
func a2aTerminal(st *State, task, state, text string) []Draft {
	st.Set(a2aTaskPrefix+task, "done")
	var ds []Draft
	if _, planned := st.Get(a2aPlanPrefix + task); planned {
		st.Del(a2aPlanPrefix + task)
		ds = append(ds, Draft{Type: "progress.task.completed", Subject: task, Run: task,
			Data: Data("task", Data("id", task), "status", state)})
	}
	_, cancelled := st.Get(a2aCancelPrefix + task)
	st.Del(a2aCancelPrefix + task)
	var d Draft
	switch state {
	case "completed":
		d = Draft{Type: "run.finished", Data: Data("summary", text)}
	case "failed":
		d = Draft{Type: "run.failed", Data: Data("reason", "error",
			"error", Data("type", "failed", "message", text))}
	case "rejected":
		d = Draft{Type: "run.failed", Data: Data("reason", "rejected",
			"error", Data("type", "rejected", "message", text))}
	default:
		d = Draft{Type: "run.cancelled", Data: map[string]any{}}
		if cancelled {
			d.Data["by"] = "user"
		}
	}
	d.Run = task
	return append(ds, d)
}

// a2aArtifact handles one artifact update: the first chunk of an artifact
// announces it; appended chunks are deltas.
func a2aArtifact(m Moment, st *State, task string, upd []byte) []Draft {
	if task == "" {
		return nil
	}
	ds := a2aEnsureRun(st, task)
	if run, _ := st.Get(a2aTaskPrefix + task); run == "done" {
		return ds
	}
	art := Raw(upd, "artifact")
	if art == nil {
		return ds
	}
	if seen := a2aArtifactSeen(st, task, art); len(seen) > 0 {
		return append(ds, seen...)
	}
	if !m.Deltas {
		return ds
	}
	return append(ds, Draft{Type: "x.a2a.artifact.delta", Subject: Str(art, "artifactId"), Run: task, Severity: debug,
		Data:   Data("delta", a2aText(art), "last_chunk", extBool(upd, "lastChunk")),
		Levels: map[string]redact.Level{"delta": redact.Redacted, "last_chunk": redact.Metadata}})
}

// a2aArtifactSeen announces an artifact the first time the task shows it.
func a2aArtifactSeen(st *State, task string, art []byte) []Draft {
	id := Str(art, "artifactId")
	key := a2aArtPrefix + task + "/" + id
	if _, seen := st.Get(key); seen {
		return nil
	}
	st.Set(key, "1")
	first := gjson.GetBytes(art, "parts.0")
	mime := firstNonEmpty(first.Get("mediaType").String(), first.Get("mimeType").String(), first.Get("file.mimeType").String())
	if mime == "" {
		switch {
		case first.Get("text").Exists():
			mime = "text/plain"
		case first.Get("data").Exists():
			mime = "application/json"
		}
	}
	uri := firstNonEmpty(first.Get("url").String(), first.Get("file.uri").String())
	return []Draft{{Type: "progress.artifact.produced", Subject: id, Run: task,
		Data: Data("artifact", Data("id", id, "name", Str(art, "name"), "mime", mime, "uri", uri))}}
}

// a2aReply handles an agent message: the answer that closes a
// message-only run, else a vendor-plane fact of its task.
func a2aReply(m Moment, st *State, msg []byte) []Draft {
	if run, ok := a2aReqRun(m, st); ok {
		return []Draft{{Type: "run.finished", Run: run, Data: Data("summary", a2aText(msg))}}
	}
	task := firstNonEmpty(Str(msg, "taskId"), m.Facts.Run)
	return []Draft{{Type: "x.a2a.message.agent", Subject: Str(msg, "messageId"), Run: task, Severity: debug,
		Data:   Data("parts", int64(len(gjson.GetBytes(msg, "parts").Array()))),
		Levels: extLevels(redact.Metadata, "parts")}}
}

// a2aReqRun returns (and forgets) the message-only run the answered
// request opened.
func a2aReqRun(m Moment, st *State) (string, bool) {
	if m.Facts.ID == "" {
		return "", false
	}
	key := a2aReqPrefix + m.Facts.Instance + "/" + m.Facts.ID
	run, ok := st.Get(key)
	if ok {
		st.Del(key)
	}
	return run, ok
}

// a2aError handles a JSON-RPC error: it fails the message-only run its
// request opened; any other error is a vendor-plane fact.
func a2aError(m Moment, st *State, e []byte) []Draft {
	code := extStep(e, "code")
	if run, ok := a2aReqRun(m, st); ok {
		return []Draft{{Type: "run.failed", Run: run, Data: Data("reason", "error",
			"error", Data("type", firstNonEmpty(code, "error"), "message", Str(e, "message")))}}
	}
	return []Draft{{Type: "x.a2a.rpc.error", Run: m.Facts.Run, Severity: debug,
		Data:   Data("method", A2AMethod(m.Facts.Method), "code", code),
		Levels: extLevels(redact.Metadata, "method", "code")}}
}
