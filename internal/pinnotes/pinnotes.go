// Package pinnotes records where the real agents disagree with the Annex A
// pins; it imports nothing, so every pin test (mapping's own included) can
// read it.
package pinnotes

// Disagreements lists the Annex A pin entries ("vendor/section/entry") the
// real agent contradicts (team rule: follow the agent, name the pin). Every
// pin test requires such an entry to still differ from the pin and counts
// it apart; the recorded session proving each lives in
// fixtures/<agent>/recorded/.
var Disagreements = map[string]string{
	"gemini-cli/hooks/PreCompress": "Gemini CLI 0.61.0 fires PreCompress{trigger:auto} before every model call, ahead of a threshold test that usually compacts nothing (fixtures/gemini-cli/recorded/tools): only trigger manual is recorded as session.compacted",
}
