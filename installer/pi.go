package installer

import (
	"github.com/aep-hook/aep-hook/adapters/pi"
)

// Pi places the extension `aep-hook plugin pi` prints in pi's
// auto-discovered extensions folder: ~/.pi/agent/extensions/aep-hook.js
// (PI_CODING_AGENT_DIR moves ~/.pi/agent) or <project>/.pi/extensions/. The
// extension starts `aep-hook forward pi` once per pi process and forwards
// its bus events there; it is the one registration. Under --control with
// --gate-tools it also holds those tools' calls for an answer over the
// relay (`aep-hook forward pi --hold`).
func Pi() Agent {
	return Agent{
		Name: "pi", Title: "pi",
		Binaries:  []string{"pi"},
		ConfigDir: dirOf("PI_CODING_AGENT_DIR", ".pi/agent"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("PI_CODING_AGENT_DIR", ".pi/agent", "extensions", ".pi/extensions"),
		Format: PluginFile{
			Name:    pi.ExtensionFile,
			Marker:  piMarker,
			Content: pi.Extension,
			Bin:     pluginBin,
			Command: func(bin string) string { return Quote(bin) + " forward pi" },
			Posture: pi.ExtensionFor, PostureOf: pi.Posture,
		},
		Hooks: []Hook{{Event: pi.ExtensionFile}},
		// The extension holds a tool_call of the tools the gate lists: the
		// posture install --control writes goes into the file itself (pi
		// gives an extension no environment of its own).
		Held: Held{Events: []string{pi.ExtensionFile}, Gate: true, Sole: true},
		Notes: func(_ Env, s Scope, _ string) []string {
			n := []string{"pi loads the extension when it starts (or at /reload); it starts `aep-hook forward pi` once per pi process. Set AEP_DELTAS=1 in pi's environment to record token deltas (AEP_PI_DELTAS=1, the old name, still works)."}
			if s == Project {
				n = append(n, "pi loads a project's .pi/extensions only after the project is trusted.")
			}
			return n
		},
		Probe: Probe{Event: pi.ExtensionFile, Payload: `{"session":{"id":"SESSION"},"event":{"type":"session_start","reason":"startup"}}` + "\n"},
	}
}

// piMarker is the first line of the extension aep-hook writes.
var piMarker = []byte("// aep-hook: pi extension")
