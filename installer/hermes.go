package installer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Hermes registers in the hooks: block of Hermes Agent's config.yaml
// ($HERMES_HOME, default ~/.hermes): the twelve observation events,
// timeout 60 s.
func Hermes() Agent {
	return Agent{
		Name: "hermes", Title: "Hermes Agent",
		Binaries:  []string{"hermes"},
		ConfigDir: dirOf("HERMES_HOME", ".hermes"),
		Scopes:    []Scope{User},
		Path: func(e Env, _ Scope) string {
			return filepath.Join(e.homeOr("HERMES_HOME", ".hermes"), "config.yaml")
		},
		Format: YAMLHooks{},
		Hooks: hooks([]string{"pre_tool_call", "post_tool_call", "pre_llm_call", "on_session_start",
			"on_session_end", "on_session_finalize", "on_session_reset", "subagent_start", "subagent_stop",
			"pre_approval_request", "post_approval_response", "api_request_error"}, nil, 60),
		Notes: func(Env, Scope, string) []string {
			return []string{"Hermes asks once per hook, at a terminal, before it first runs it: approve the aep-hook hooks (`hermes hooks list` shows them). Gateway and other non-interactive runs need `hooks_auto_accept: true` in config.yaml or HERMES_ACCEPT_HOOKS=1."}
		},
		Trust: hermesTrust,
		Probe: Probe{Event: "on_session_start",
			Payload: `{"hook_event_name":"on_session_start","session_id":"SESSION","extra":{"surface":"cli"}}`},
	}
}

// hermesTrust looks for the consent Hermes records per (event, command)
// in shell-hooks-allowlist.json, or hooks_auto_accept in config.yaml.
func hermesTrust(e Env, _ Scope, path string, found []Found) Trust {
	fix := "run hermes at a terminal and approve the aep-hook hooks, or set hooks_auto_accept: true in " + path
	if m, err := decodeYAML(mustRead(path)); err == nil {
		if v, _ := m["hooks_auto_accept"].(bool); v {
			return Trust{OK: true, Detail: "hooks_auto_accept: true"}
		}
	}
	if e.getenv("HERMES_ACCEPT_HOOKS") == "1" {
		return Trust{OK: true, Detail: "HERMES_ACCEPT_HOOKS=1 in this environment"}
	}
	allow := filepath.Join(e.homeOr("HERMES_HOME", ".hermes"), "shell-hooks-allowlist.json")
	b, err := os.ReadFile(allow)
	if err != nil {
		return Trust{Detail: "no approvals recorded yet (" + allow + ")", Fix: fix}
	}
	missing := 0
	for _, f := range found {
		if !strings.Contains(string(b), string(jsonString(f.Command))[1:len(jsonString(f.Command))-1]) {
			missing++
		}
	}
	if missing > 0 {
		return Trust{Detail: fmt.Sprintf("%d of %d hooks not approved in %s", missing, len(found), allow), Fix: fix}
	}
	return Trust{OK: true, Detail: "approved in " + allow}
}

func mustRead(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
