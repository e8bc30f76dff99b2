package pins

// realAgentDisagrees names the pin entries ("vendor/section/entry") where the
// real agent, driven by the real-agent harness, shows the pin wrong, and
// why. The mappings follow the agent; the agent's truth is asserted by the
// vendor's own tests and recordings, and the pin must still differ (a note
// that went stale fails the tests that consult it).
var realAgentDisagrees = map[string]string{
	"acp/moments/update_tool_call":                     "a tool call's title is display text, not the tool (claude-agent-acp 0.101.0 titles a Bash call \"Terminal\", Gemini CLI 0.61.0 a read_file call by its path, a shell call by its command: content a metadata record must not carry); the mapping names the call by the agent's tool name where the wire states one, else by its kind (fixtures/acp/recorded/*-tool)",
	"gemini-cli/hooks/PreCompress":                     "Gemini CLI 0.61.0 fires PreCompress{trigger:auto} before every model call, ahead of a threshold test that usually compacts nothing (fixtures/gemini-cli/recorded/tools): only trigger manual is recorded as session.compacted",
	"codex-otel/records/conversation_starts@companion": "Codex 0.171.0 runs threads of its own (the automatic reviewer, the TUI's title generator) as conversations only their first prompt tells apart (fixtures/codex-otel/recorded/reviewer-deny, tui-500): a conversation's start is recorded at its first record after conversation_starts and startup_phase, so the record alone emits nothing yet",
	"codex-otel/records/conversation_starts@primary":   "as in companion mode the start waits for the conversation's first other record (Codex 0.171.0's internal threads); session.started then carries client.version from service.version (on every 0.171.0 record) and the channel event keeps the policies session.started has no member for",
	"codex-otel/records/tool_result_fail@primary":      "Codex 0.171.0 records the failed call's duration_ms (fixtures/codex-otel/recorded/tools), and tool.failed has a metadata member for it",
	"cline/hooks/agent_start_parented":                 "a child agent's run is started by its parent agent (trigger agent), not by the user (cline 3.0.65, spawn_agent)",
}

// pinFlaws names the pin entries that contradict the specification itself
// or cannot be reproduced from their own input (no real agent to ask: the
// OpenHands server is not installable here), and what the mapping follows
// instead. Like realAgentDisagrees, each must still differ.
var pinFlaws = map[string]string{
	"openhands/events/action_event":                 "the pinned args_digest is not the digest of any part of the pinned input (action, its members, tool_call, the arguments parsed or as text): the mapping digests the action it records",
	"openhands/events/action_event_unknown_risk":    "the pinned args_digest is not the digest of any part of the pinned input: the mapping digests the action it records",
	"openhands/status_transitions/running_deleting": "run.cancelled.reason is x-aep-capture redacted (AEP-0002 schema), so the gate drops \"deleting\" at the pinned metadata ceiling",
	"cline/hooks/agent_end_parented":                noLineage,
	"codex/hooks/SubagentStart":                     noLineage,
	"codex/hooks/SubagentStop":                      noLineage,
	"kimi-code/hooks/SubagentStart":                 noLineage,
	"kimi-code/hooks/SubagentStop":                  noLineage,
	"qwen-code/hooks/SubagentStart":                 noLineage,
	"qwen-code/hooks/SubagentStop":                  noLineage,
	"vscode/hooks/SubagentStart":                    noLineage,
	"vscode/hooks/SubagentStop":                     noLineage,
	"openhands/status_transitions/waiting_deleting": "run.cancelled.reason is x-aep-capture redacted (AEP-0002 schema), so the gate drops \"deleting\" at the pinned metadata ceiling",
}

// postureDiffers names the pin entries that presume the reference stack's
// control loop where aep-hook's channel runs none, or word options the
// vendor never offered: the record declares only what can answer it
// (AEP-0008 respond_via) and the options the agent itself shows. Like the
// others, each must still differ.
var postureDiffers = map[string]string{
	"codex/hooks/PermissionRequest":     "Codex names no choices in the payload, and its dialog's depend on what the payload does not say: allow/deny are aep-hook's own options and their labels say so",
	"qwen-code/hooks/PermissionRequest": "Qwen Code 0.24.4's confirmation dialog offers allow once, always in this project, always for this user and no (a shell command's); the card carries those, with Qwen's own outcome ids",
	"kilocode/moments/permission_ask":   "aep-hook's Kilo plugin forwards and never answers (and Kilo never fires permission.ask): the card's answer arrives in the agent's own UI, respond_via oob",
	"kilocode/moments/permission_asked": "the plugin channel cannot answer the bus ask: respond_via oob",
	"kilocode/moments/question_asked":   "the plugin channel cannot answer the bus question: respond_via oob",
	"opencode/moments/permission_ask":   "aep-hook's OpenCode plugin forwards and never answers (and OpenCode never fires permission.ask): respond_via oob",
}

// noLineage is why the delegation pins differ: their events carry no
// child, and the mappings name it (child.run where the subagent's moments
// have a run of their own, child.agent where the vendor gives none).
const noLineage = "the pin's delegation event has no data.child, the lineage handle of AEP-0002 §5.4: without it a consumer cannot follow the delegation to its child"

// Disagrees reports whether the real agent (or the specification) disagrees
// with the pin entry named by vendor and case name, and why.
func Disagrees(vendor, name string) (why string, ok bool) {
	if why, ok = realAgentDisagrees[vendor+"/"+name]; ok {
		return why, ok
	}
	if why, ok = pinFlaws[vendor+"/"+name]; ok {
		return why, ok
	}
	why, ok = postureDiffers[vendor+"/"+name]
	return why, ok
}
