package opencode

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"strings"
)

//go:embed plugin/aep-hook.js
var pluginSource string

// PluginFile is the file name the plugin is installed under.
const PluginFile = "aep-hook.js"

// PluginSource returns the forwarder plugin for vendor ("opencode" or
// "kilo"): JavaScript the agent loads from its plugin folder. The installer
// writes it there (see PluginDir); `aep-hook plugin` prints it.
func PluginSource(vendor string) (string, error) {
	prof, ok := Profiles[vendor]
	if !ok {
		return "", fmt.Errorf("no plugin for %q; known: %s", vendor, strings.Join(ProfileNames(), ", "))
	}
	export := "export const AepHook = async () => hooks\n"
	agent := "OpenCode"
	if prof.Name == "kilo" {
		// Kilo's plugin modules export the server half as `server`.
		export = "export const AepHook = async () => hooks\nexport default { id: \"aep-hook\", server: AepHook }\n"
		agent = "Kilo Code"
	}
	r := strings.NewReplacer("__VENDOR__", prof.Name, "__AGENT__", agent, "__EXPORT__", export)
	return r.Replace(pluginSource), nil
}

// PluginDir is the folder the agent loads plugin files from, under its
// configuration folder configDir (OpenCode: ~/.config/opencode, Kilo:
// ~/.config/kilo): every *.js file in it is loaded at start.
func PluginDir(configDir string) string {
	return filepath.Join(configDir, "plugin")
}
