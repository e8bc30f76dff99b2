package opencode

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
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
