package opencode

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/mapping"
)

//go:embed plugin/aep-hook.js
var pluginSource string

// PluginFile is the file name the plugin is installed under.
const PluginFile = "aep-hook.js"

// PluginMarker begins every plugin aep-hook writes (its first line).
const PluginMarker = "// aep-hook forwarder plugin for "

// PluginSource returns the forwarder plugin for vendor ("opencode" or
// "kilo") starting the aep-hook binary bin: JavaScript the agent loads from
// its plugin folder. The installer writes it there (see PluginDir);
// `aep-hook plugin` prints it.
func PluginSource(vendor, bin string) (string, error) {
	prof, ok := Profiles[vendor]
	if !ok {
		return "", fmt.Errorf("no plugin for %q; known: %s", vendor, strings.Join(ProfileNames(), ", "))
	}
	return string(Plugin(prof, bin)), nil
}

// Plugin is the forwarder plugin for the server prof starting the aep-hook
// binary bin (AEP_HOOK_BIN in the agent's environment overrides it).
func Plugin(prof Profile, bin string) []byte {
	export := "export const AepHook = async () => hooks\n"
	agent := "OpenCode"
	if prof.Name == "kilo" {
		// Kilo's plugin modules export the server half as `server`.
		export = "export const AepHook = async () => hooks\nexport default { id: \"aep-hook\", server: AepHook }\n"
		agent = "Kilo Code"
	}
	q, _ := json.Marshal(bin)
	r := strings.NewReplacer("__VENDOR__", prof.Name, "__AGENT__", agent, "__EXPORT__", export, "__AEP_HOOK_BIN__", string(q[1:len(q)-1]))
	return []byte(r.Replace(pluginSource))
}

// PluginDir is the folder the agent loads plugin files from, under its
// configuration folder configDir (OpenCode: ~/.config/opencode, Kilo:
// ~/.config/kilo): every *.js file in it is loaded at start.
func PluginDir(configDir string) string {
	return filepath.Join(configDir, "plugin")
}

// ServerExited are the moments the end of the plugin's pipe means for the
// sessions it named: the plugin writes until its server process exits
// (it is loaded once per process and never closes the pipe itself), and
// a turn does not outlive its server, so each session's turn still open
// then was cut by the shutdown. The table closes it as the stream
// bridge's catch-up closes a turn it finds cut after a restart (cancelled
// by shutdown; one that had finished its answer finishes); an idle
// session has nothing open and gets nothing.
func ServerExited(sessions []string) []mapping.Moment {
	out := make([]mapping.Moment, 0, len(sessions))
	for _, s := range sessions {
		out = append(out, endMoment(s, "shutdown"))
	}
	return out
}
