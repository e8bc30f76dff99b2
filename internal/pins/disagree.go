package pins

// realAgentDisagrees names the pin entries ("vendor/section/entry") where the
// real agent, driven by the real-agent harness, shows the pin wrong, and
// why. The mappings follow the agent; the agent's truth is asserted by the
// vendor's own tests and recordings, and the pin must still differ (a note
// that went stale fails the tests that consult it).
var realAgentDisagrees = map[string]string{
	"gemini-cli/hooks/PreCompress":     "Gemini CLI 0.61.0 fires PreCompress{trigger:auto} before every model call, ahead of a threshold test that usually compacts nothing (fixtures/gemini-cli/recorded/tools): only trigger manual is recorded as session.compacted",
	"cline/hooks/agent_start_parented": "a child agent's run is started by its parent agent (trigger agent), not by the user (cline 3.0.65, spawn_agent)",
}

// Disagrees reports whether the real agent disagrees with the pin entry
// named by vendor and case name, and why.
func Disagrees(vendor, name string) (why string, ok bool) {
	why, ok = realAgentDisagrees[vendor+"/"+name]
	return why, ok
}
