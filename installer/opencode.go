package installer

import (
	"path/filepath"

	"github.com/aep-hook/aep-hook/adapters/opencode"
)

// OpenCode places the forwarder plugin `aep-hook plugin opencode` prints in
// OpenCode's plugin folder: ~/.config/opencode/plugin/aep-hook.js
// (XDG_CONFIG_HOME moves ~/.config) or <project>/.opencode/plugin/. OpenCode
// loads every file there at start; the plugin starts `aep-hook forward
// opencode` once per OpenCode process and forwards its bus events and tool
// hooks there.
func OpenCode() Agent { return openCodeAgent("opencode", "OpenCode", ".opencode", "opencode") }

// Kilo places the same plugin, built for Kilo Code, in
// ~/.config/kilo/plugin/aep-hook.js or <project>/.kilo/plugin/.
func Kilo() Agent { return openCodeAgent("kilo", "Kilo Code", ".kilo", "kilo", "kilocode") }

// openCodeAgent is the plugin registration of vendor (an opencode.Profiles
// name) whose user folder is <config>/<vendor> and project folder project.
func openCodeAgent(vendor, title, project string, binaries ...string) Agent {
	userDir := func(e Env) string { return filepath.Join(e.homeOr("XDG_CONFIG_HOME", ".config"), vendor) }
	return Agent{
		Name: vendor, Title: title,
		Binaries:  binaries,
		ConfigDir: userDir,
		Scopes:    []Scope{User, Project},
		Path: func(e Env, s Scope) string {
			if s == Project {
				return opencode.PluginDir(filepath.Join(e.Dir, project))
			}
			return opencode.PluginDir(userDir(e))
		},
		Format: PluginFile{
			Name:    opencode.PluginFile,
			Marker:  []byte(opencode.PluginMarker),
			Content: func(bin string) []byte { return opencode.Plugin(opencode.Profiles[vendor], bin) },
			Bin:     pluginBin,
			Command: func(bin string) string { return Quote(bin) + " forward " + vendor },
		},
		Hooks: []Hook{{Event: opencode.PluginFile}},
		Notes: func(Env, Scope, string) []string {
			return []string{title + " loads the plugin when it starts; it starts `aep-hook forward " + vendor + "` once per process. " +
				"If `aep-hook follow " + vendor + "` also follows the same server, run one of them as the companion " +
				"(`follow --mode companion`, or AEP_PLUGIN_MODE=companion in the agent's environment)."}
		},
		Probe: Probe{Event: opencode.PluginFile,
			Payload: `{"kind":"bus","event":{"type":"session.created","properties":{"sessionID":"SESSION","info":{"id":"SESSION","title":"aep-hook doctor"}}}}` + "\n"},
	}
}
