package mapping

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// Gemini is the AEP-0002 Annex A.3 table for Gemini CLI hooks: eleven hooks,
// eight on core types and the three model-plane hooks in x.gemini-cli.*.
// Gemini exposes no turn id and no tool call id: runs are synthesized per
// BeforeAgent/AfterAgent pair and tool outcomes pair with their request by
// tool name and args digest.
//
// Gemini CLI 0.61.0 fires AfterAgent only for a turn whose last model
// answer asked for no tool: an Esc while the model answers still fires it
// (prompt_response "[no response text]"), but an Esc while a tool runs, a
// refused permission card and an API failure end the turn with no hook at
// all. The next BeforeAgent, or the session's end, proves such a turn over:
// it is closed then, run.cancelled with no by (nothing says who or what
// ended it), after its settled leftovers (a card still showing dismissed, a
// call that never reported cancelled).
func Gemini() Vendor {
	const name = "gemini-cli"
	return Vendor{
		Name:     name,
		Summary:  "Gemini CLI command hooks (settings.json), observe-only",
		Identify: identifyBy("hook_event_name", "session_id"),
		Map:      resumable("session_id", mapGemini),
		// Gemini CLI counts any JSON object a hook prints as that hook's
		// output: "{}" to BeforeToolSelection made it send the model
		// toolConfig {mode AUTO, allowedFunctionNames []} (0.61.0, seen in
		// the recorded tools scenario's model requests). An empty stdout
		// is no output at all, on every event.
		Reply: func(string) []byte { return nil },
	}
}

// geminiModelPlane reports whether hook is a model-plane hook: those have
// no core equivalent, so they stay in the vendor namespace with the model
// id at metadata.
func geminiModelPlane(hook string) bool {
	return hook == "BeforeModel" || hook == "AfterModel" || hook == "BeforeToolSelection"
}

// Gemini's table state beyond the shared run lane and the call pairing.
const (
	// gemCallPrefix+mark is a call requested and not yet settled; the value
	// is geminiCall's encoding (the run it was placed in, its tool, its args
	// digest and its command's digest, all metadata).
	gemCallPrefix = "gem.call:"
	// gemSubPrefix+mark is an open delegation (invoke_agent) requested as
	// mark; the value is its child run and the subagent's name.
	gemSubPrefix = "gem.sub:"
	// gemSubActive holds the mark of the one open delegation whose subagent
	// has made its first model request: from then on the session's moments
	// are the subagent's while nothing else runs.
	gemSubActive = "gem.sub.active"
	// gemCardPrefix is the reference key prefix of a permission card, by
	// the mark of the call it is about.
	gemCardPrefix = "attn:gem:"
)

// geminiAgentTool is the tool Gemini CLI delegates to a subagent with.
const geminiAgentTool = "invoke_agent"

// geminiCall is one requested call of the state.
type geminiCall struct {
	run, tool, args, cmd string
}

func (c geminiCall) encode() string {
	return strings.Join([]string{c.run, c.tool, c.args, c.cmd}, "\x00")
}

func decodeGeminiCall(v string) geminiCall {
	p := strings.SplitN(v, "\x00", 4)
	for len(p) < 4 {
		p = append(p, "")
	}
	return geminiCall{run: p[0], tool: p[1], args: p[2], cmd: p[3]}
}

func mapGemini(m Moment, st *State) ([]Draft, error) {
	const vendor = "gemini-cli"
	raw := m.Raw
	hook := HookField(m, "hook_event_name")
	switch hook {
	case "SessionStart":
		return []Draft{{Type: "session.started", Data: Data(
			"client", map[string]any{"name": vendor},
			"trigger", Str(raw, "source"),
			"cwd", Str(raw, "cwd"),
		)}}, nil
	case "SessionEnd":
		// A turn still open never reported its end (an API failure, an
		// interrupted tool, a refusal, a crash): the session's "exit" does
		// not say the segment ended normally, so the reason is left out.
		reason := Str(raw, "reason")
		if currentRun(st) != "" {
			reason = ""
		}
		return append(geminiTurnOver(st), sessionEnd(st, reason)...), nil
	case "BeforeAgent":
		return append(geminiTurnOver(st), promptRun(m, st, Str(raw, "prompt"))...), nil
	case "AfterAgent":
		// The response text is message-stream territory (AEP-0007): it does
		// not ride on the run terminal.
		return endRun(m, st, "run.finished", map[string]any{}), nil
	case "BeforeTool":
		return geminiBeforeTool(m, st), nil
	case "AfterTool":
		return geminiAfterTool(raw, st), nil
	case "PreCompress":
		// Gemini exposes only the pre moment, and fires it with trigger
		// auto before every model call, ahead of the threshold test that
		// usually compresses nothing. Only /compress (trigger manual) is
		// sure to compact; the automatic check rides in the vendor family.
		// (Disagrees with the Annex A pin gemini-cli.json PreCompress,
		// which reads trigger auto as a compaction.)
		trigger := Str(raw, "trigger")
		if trigger == "manual" {
			return inRun(st, Draft{Type: "session.compacted", Data: Data("trigger", trigger)}), nil
		}
		return withRun(geminiPlace(st), []Draft{{Type: Fallback(vendor, "session", "pre_compress"), Severity: "debug",
			Data: Data("trigger", trigger), Levels: map[string]redact.Level{"trigger": redact.Metadata}}}), nil
	case "Notification":
		if Str(raw, "notification_type") == "ToolPermission" {
			if ds := geminiCard(raw, st); ds != nil {
				return ds, nil
			}
		}
		return withRun(geminiPlace(st), []Draft{{
			Type:    "progress.status",
			Subject: Str(raw, "notification_type"),
			Data:    Data("message", Str(raw, "message")),
		}}), nil
	}
	if geminiModelPlane(hook) {
		if hook == "BeforeModel" {
			geminiSubagentCalls(st)
		}
		d := Draft{
			Type:   Fallback(vendor, "session", hook),
			Data:   Data("model", Str(raw, "llm_request.model")),
			Levels: map[string]redact.Level{"model": redact.Metadata},
		}
		if hook == "AfterModel" {
			d.Severity = "debug" // fires once per streamed chunk
		}
		return withRun(geminiPlace(st), []Draft{d}), nil
	}
	return inRun(st, fallback(vendor, hook)), nil
}

// geminiBeforeTool is tool.requested in the run the call belongs to
// (geminiPlace), remembered until its outcome. invoke_agent also opens the
// delegation: delegation.subagent.started in the parent's run, naming the
// child run the subagent's moments go to, and that run's start.
func geminiBeforeTool(m Moment, st *State) []Draft {
	raw := m.Raw
	tool := Str(raw, "tool_name")
	args := extDigest(raw, "tool_input")
	d := toolRequested(raw, tool, "", "tool_input")
	mark := pairOpen(m, st, tool, args)
	d.Mark = mark
	run := geminiPlace(st)
	d.Run = run
	if mark != "" {
		st.Set(gemCallPrefix+mark, geminiCall{run: run, tool: tool, args: args, cmd: commandDigest(raw, "tool_input.command")}.encode())
	}
	ds := []Draft{d}
	if tool != geminiAgentTool || mark == "" {
		return ds
	}
	child := "sub-" + m.Nonce
	name := Str(raw, "tool_input.agent_name")
	st.Set(gemSubPrefix+mark, child+"\x00"+clip(name, maxKeyName))
	return append(ds,
		Draft{Type: "delegation.subagent.started", Subject: child, Run: run, CauseRef: mark,
			Data: Data("agent_type", name, "child", map[string]any{"run": child})},
		Draft{Type: "run.started", Run: child, CauseRef: mark, Data: Data("trigger", "agent")})
}

// geminiAfterTool is the call's outcome in the run it was requested in: a
// card pending for it answered first (the call could only run allowed),
// then tool.failed for Gemini's error, a cancellation (Esc while it ran) or
// a timeout, tool.completed otherwise; invoke_agent's outcome closes its
// delegation first.
func geminiAfterTool(raw []byte, st *State) []Draft {
	tool := Str(raw, "tool_name")
	mark := pairClose(st, tool, extDigest(raw, "tool_input"))
	run := geminiPlace(st)
	if v, ok := st.Get(gemCallPrefix + mark); ok && mark != "" {
		run = decodeGeminiCall(v).run
		st.Del(gemCallPrefix + mark)
	}
	var ds []Draft
	if mark != "" {
		if _, pending := st.Get(attnPendingPrefix + gemCardPrefix + mark); pending {
			ds = append(ds, answeredOOB(st, gemCardPrefix+mark, map[string]any{"option": permissiveOption}, nil)...)
		}
	}
	var d Draft
	stoppedHow := geminiStopped(raw)
	switch {
	case Raw(raw, "tool_response.error") != nil && string(Raw(raw, "tool_response.error")) != "null":
		errType, errMsg := Str(raw, "tool_response.error.type"), Str(raw, "tool_response.error.message")
		if s := Str(raw, "tool_response.error"); s != "" {
			errMsg = s
		}
		if errType == "" {
			errType = "tool_error"
		}
		d = toolFailed(tool, "", errType, errMsg)
	case stoppedHow != "":
		d = toolFailed(tool, "", stoppedHow, Str(raw, "tool_response.returnDisplay"))
	default:
		d = toolCompleted(raw, tool, "", "tool_response")
	}
	d.CauseRef = mark
	d.Run = run
	if tool == geminiAgentTool && mark != "" {
		how := "run.finished"
		switch {
		case d.Type == "tool.failed" && stoppedHow == "cancelled":
			how = "run.cancelled"
		case d.Type == "tool.failed":
			how = "run.failed"
		}
		ds = append(ds, geminiSubagentEnd(st, mark, run, how)...)
	}
	return append(ds, d)
}

// geminiStopped reads how a call Gemini reports as returned really ended:
// "cancelled" when the user stopped it (the shell's "Command cancelled by
// user.", a subagent's progress in state cancelled), "timeout" when the
// shell gave up on a silent command, "" when it ran to its end. Gemini
// states these only in the display text, with no error.
func geminiStopped(raw []byte) string {
	disp := gjson.GetBytes(raw, "tool_response.returnDisplay")
	if disp.IsObject() {
		if disp.Get("isSubagentProgress").Bool() && disp.Get("state").String() == "cancelled" {
			return "cancelled"
		}
		return ""
	}
	text := disp.String()
	switch {
	case text == "Command cancelled by user." || strings.HasPrefix(text, "Command cancelled by user.\n\nOutput before cancellation:"):
		return "cancelled"
	case strings.HasPrefix(text, "Command was automatically cancelled because it exceeded the timeout"):
		return "timeout"
	}
	return ""
}

// geminiSubagentEnd closes the delegation requested as mark: the calls its
// subagent left open cancelled, its child run's terminal how, then
// delegation.subagent.stopped in the parent's run.
func geminiSubagentEnd(st *State, mark, parent, how string) []Draft {
	v, ok := st.Get(gemSubPrefix + mark)
	if !ok {
		return nil
	}
	st.Del(gemSubPrefix + mark)
	if active, _ := st.Get(gemSubActive); active == mark {
		st.Del(gemSubActive)
	}
	child, name, _ := strings.Cut(v, "\x00")
	ds := geminiCancelCalls(st, child)
	term := Draft{Type: how, Run: child, CauseRef: mark, Data: map[string]any{}}
	status := "completed"
	switch how {
	case "run.failed":
		term.Data = Data("reason", "tool_error")
		status = "failed"
	case "run.cancelled":
		status = "cancelled"
	}
	return append(ds, term, Draft{Type: "delegation.subagent.stopped", Subject: child, Run: parent, CauseRef: mark,
		Data: Data("agent_type", name, "child", map[string]any{"run": child}, "status", status)})
}

// geminiSubagentCalls marks the one open delegation's subagent active at
// its first model request (the subagent's first hook is always one): a
// call requested between invoke_agent's BeforeTool and that moment was the
// parent's own, started with it in one reply.
func geminiSubagentCalls(st *State) {
	if _, ok := st.Get(gemSubActive); ok {
		return
	}
	subs := geminiOpen(st, gemSubPrefix)
	if len(subs) == 1 {
		st.Set(gemSubActive, subs[0])
	}
}

// geminiPlace is the run a new moment of the session goes to. Gemini's
// hooks do not say whether the parent or a subagent fired them, but a
// subagent runs inside its invoke_agent call: while exactly one delegation
// is open, its subagent has started, and no other call of the parent is
// still running, the moment is the subagent's (its child run). Otherwise
// (two subagents at once, or a call of the parent running beside one) it
// cannot be told and goes to the session's open run.
func geminiPlace(st *State) string {
	parent := currentRun(st)
	mark, ok := st.Get(gemSubActive)
	if !ok {
		return parent
	}
	v, open := st.Get(gemSubPrefix + mark)
	if !open || len(geminiOpen(st, gemSubPrefix)) != 1 {
		return parent
	}
	child, _, _ := strings.Cut(v, "\x00")
	for _, c := range geminiOpen(st, gemCallPrefix) {
		cv, _ := st.Get(gemCallPrefix + c)
		if call := decodeGeminiCall(cv); call.run == parent && c != mark {
			return parent
		}
	}
	return child
}

// geminiOpen lists the marks under prefix, oldest first.
func geminiOpen(st *State, prefix string) []string {
	var marks []string
	for k := range st.Entries {
		if strings.HasPrefix(k, prefix) {
			marks = append(marks, strings.TrimPrefix(k, prefix))
		}
	}
	sort.Slice(marks, func(i, j int) bool {
		return st.Touch[prefix+marks[i]] < st.Touch[prefix+marks[j]]
	})
	return marks
}

// geminiCard is a ToolPermission notification: Gemini's own confirmation
// card for the call just requested, answered only in Gemini's dialog
// (respond_via oob: the hook can neither grant nor deny). It is about the
// open call whose command it shows, else the last one requested. The call
// running settles it answered (allow); a refusal fires nothing, so a card
// still pending when the turn is proven over is dismissed. Without an open
// call to tie it to it stays progress.status (nil).
func geminiCard(raw []byte, st *State) []Draft {
	calls := geminiOpen(st, gemCallPrefix)
	if len(calls) == 0 {
		return nil
	}
	mark := calls[len(calls)-1]
	if cmd := commandDigest(raw, "details.command"); cmd != "" {
		for _, c := range calls {
			v, _ := st.Get(gemCallPrefix + c)
			if decodeGeminiCall(v).cmd == cmd {
				mark = c
			}
		}
	}
	v, _ := st.Get(gemCallPrefix + mark)
	call := decodeGeminiCall(v)
	key := gemCardPrefix + mark
	ds := raiseAttention(st, key, call.run)
	st.Set(attnAllowPrefix+key, permissiveOption)
	return append(ds, Draft{
		Type: "attention.requested", Subject: call.tool, Run: call.run, Mark: key, CauseRef: mark,
		Data: map[string]any{
			"kind":        "permission",
			"prompt":      permissionPrompt(call.tool, geminiCardDetail(raw)),
			"options":     adapterOptions(),
			"respond_via": []any{"oob"},
		},
	})
}

// geminiCardDetail is what the card shows, in the tool-input spelling
// permissionPrompt reads: the command of a shell card, the file of an edit.
func geminiCardDetail(raw []byte) []byte {
	b, _ := json.Marshal(Data("command", Str(raw, "details.command"), "file_path", Str(raw, "details.filePath")))
	return b
}

// geminiTurnOver closes what the session's open turn left when a later
// moment proves it over (see Gemini): cards still showing dismissed, open
// delegations and calls cancelled, then the run itself cancelled with no by.
func geminiTurnOver(st *State) []Draft {
	if currentRun(st) == "" {
		return nil
	}
	ds := dismissPending(st)
	for _, mark := range geminiOpen(st, gemSubPrefix) {
		v, _ := st.Get(gemCallPrefix + mark)
		ds = append(ds, geminiSubagentEnd(st, mark, decodeGeminiCall(v).run, "run.cancelled")...)
	}
	st.Del(gemSubActive)
	ds = append(ds, geminiCancelCalls(st, "")...)
	return append(ds, drainRun(st)...)
}

// geminiCancelCalls ends the calls still open in run ("" any run) as
// tool.failed{cancelled}: their turn or subagent ended and Gemini reported
// no outcome (a refused call, a tool that threw when Esc stopped it).
func geminiCancelCalls(st *State, run string) []Draft {
	var ds []Draft
	for _, mark := range geminiOpen(st, gemCallPrefix) {
		v, _ := st.Get(gemCallPrefix + mark)
		call := decodeGeminiCall(v)
		if run != "" && call.run != run {
			continue
		}
		st.Del(gemCallPrefix + mark)
		pairForget(st, call.tool, call.args, mark)
		d := toolFailed(call.tool, "", "cancelled", "")
		d.Run, d.CauseRef = call.run, mark
		ds = append(ds, d)
	}
	return ds
}

// commandDigest is the digest of the command string at path, "" when there
// is none: it ties a permission card to the call it shows without keeping
// the command in the state.
func commandDigest(raw []byte, path string) string {
	c := gjson.GetBytes(raw, path)
	if c.Type != gjson.String || c.Str == "" {
		return ""
	}
	return redact.Digest(c.Str)
}
