package installer

import "path/filepath"

// Agents returns every agent install knows, in the order they are shown.
// Each call builds fresh values; there is no registry to mutate. The
// OpenCode, Kilo and pi plugin forwarders (`aep-hook plugin <vendor>`)
// join as agents whose Format is a FileSet writing the plugin file.
func Agents() []Agent {
	return []Agent{
		ClaudeCode(),  // claudecode.go
		Codex(),       // codex.go
		Gemini(),      // gemini.go
		Qwen(),        // qwen.go
		VSCode(),      // vscode.go
		KimiCode(),    // kimicode.go
		Cline(),       // cline.go
		Hermes(),      // hermes.go
		Antigravity(), // antigravity.go
		Pi(),          // pi.go
		OpenCode(),    // opencode.go
		Kilo(),        // opencode.go
	}
}

// Lookup returns the agent named name.
func Lookup(name string) (Agent, bool) {
	for _, a := range Agents() {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// Names lists the agents' names in order.
func Names() []string {
	var out []string
	for _, a := range Agents() {
		out = append(out, a.Name)
	}
	return out
}

// hooks builds a hook list: every event with no matcher, those in tools
// with matcher "*", all with timeout t.
func hooks(events []string, tools map[string]bool, t int) []Hook {
	out := make([]Hook, len(events))
	for i, e := range events {
		out[i] = Hook{Event: e, Timeout: t}
		if tools[e] {
			out[i].Matcher = "*"
		}
	}
	return out
}

// perScope returns a Path function: the user file under the vendor folder
// (from its *_HOME variable or ~/def) and the project file under the
// working directory.
func perScope(env, def, user, project string) func(Env, Scope) string {
	return func(e Env, s Scope) string {
		if s == Project {
			return filepath.Join(e.Dir, project)
		}
		return filepath.Join(e.homeOr(env, def), user)
	}
}

func dirOf(env, def string) func(Env) string {
	return func(e Env) string { return e.homeOr(env, def) }
}

// anyTools is the matcher set of Claude-Code-shaped tool events.
var anyTools = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true,
	"PermissionRequest": true, "PermissionDenied": true, "BeforeTool": true, "AfterTool": true}
