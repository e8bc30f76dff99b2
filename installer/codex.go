package installer

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
)

// Codex registers in Codex's hooks.json (user $CODEX_HOME/hooks.json,
// default ~/.codex; project .codex/hooks.json). Codex runs a non-managed
// hook only once the user has trusted its exact definition; trust is
// recorded in config.toml as [hooks.state."<file>:<event_key>:<group>:<handler>"]
// trusted_hash. The hash is Codex's internal serialisation of the hook, not
// a documented format (integrators who recompute it break when it
// changes), so install never writes it: it states Codex's own step
// (/hooks), and doctor reads whether trust is recorded for each position.
// PreModelRequest (0.169) is registered although it maps to an x. event:
// having seen it, the table knows this Codex reports interrupts, so a turn
// an API failure leaves open is not taken for a cancelled one.
// PostModelRequest (0.171) states each model attempt's outcome: a turn
// whose every attempt failed fires no Stop, and only this hook says so.
func Codex() Agent {
	return Agent{
		Name: "codex", Title: "Codex",
		Binaries:  []string{"codex"},
		ConfigDir: dirOf("CODEX_HOME", ".codex"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("CODEX_HOME", ".codex", "hooks.json", ".codex/hooks.json"),
		Format:    JSONHooks{Shape: Grouped},
		Hooks: hooks([]string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
			"PostToolUse", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "Stop",
			"Interrupt", "SessionEnd", "PreModelRequest", "PostModelRequest"}, anyTools, 0),
		Notes: func(e Env, s Scope, _ string) []string {
			n := []string{codexTrustStep}
			if s == Project {
				n = append(n, fmt.Sprintf("Codex loads a project's hooks only in a trusted project: trust %s when Codex asks.", e.Dir))
			}
			return n
		},
		Trust: codexTrust,
		Held:  Held{Events: []string{"PermissionRequest"}},
		Probe: Probe{Event: "SessionStart",
			Payload: `{"hook_event_name":"SessionStart","session_id":"SESSION","source":"startup"}`},
	}
}

const codexTrustStep = "Codex skips hooks you have not trusted, silently: start `codex`, type /hooks, and trust the aep-hook hooks (once; again after any change to them). For one-off automation `codex exec --dangerously-bypass-hook-trust` runs them untrusted."

// codexTrust reports whether config.toml records trust for every
// registration of ours (by position key). Whether the recorded hash still
// matches is Codex's to judge: /hooks marks a changed hook "modified".
func codexTrust(e Env, _ Scope, path string, found []Found) Trust {
	cfg := filepath.Join(e.homeOr("CODEX_HOME", ".codex"), "config.toml")
	fix := "start `codex`, type /hooks, and trust the aep-hook hooks"
	states := map[string]any{}
	if b, err := os.ReadFile(cfg); err == nil {
		var m map[string]any
		if err := toml.Unmarshal(b, &m); err != nil {
			return Trust{Detail: fmt.Sprintf("%s does not parse: %v", cfg, err), Fix: fix}
		}
		if h, ok := m["hooks"].(map[string]any); ok {
			if s, ok := h["state"].(map[string]any); ok {
				states = s
			}
		}
	}
	abs, _ := filepath.Abs(path)
	untrusted := 0
	for _, f := range found {
		st, _ := states[abs+":"+f.Key].(map[string]any)
		if h, _ := st["trusted_hash"].(string); h == "" {
			untrusted++
		}
	}
	if untrusted > 0 {
		return Trust{Detail: fmt.Sprintf("%d of %d hooks have no trust recorded in %s", untrusted, len(found), cfg), Fix: fix}
	}
	return Trust{OK: true, Detail: fmt.Sprintf("trust recorded for all %d hooks in %s", len(found), cfg)}
}
