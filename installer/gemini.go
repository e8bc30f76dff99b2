package installer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Gemini registers in Gemini CLI's settings.json (user
// ~/.gemini/settings.json, project .gemini/settings.json); AfterModel is
// left out (it fires per streamed chunk).
func Gemini() Agent {
	return Agent{
		Name: "gemini-cli", Title: "Gemini CLI",
		Binaries:  []string{"gemini"},
		ConfigDir: dirOf("", ".gemini"),
		Scopes:    []Scope{User, Project},
		Path:      perScope("", ".gemini", "settings.json", ".gemini/settings.json"),
		Format:    JSONHooks{Shape: Grouped},
		Hooks: hooks([]string{"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool",
			"AfterTool", "BeforeModel", "BeforeToolSelection", "PreCompress", "Notification"}, anyTools, 0),
		Notes: func(Env, Scope, string) []string {
			return []string{
				"Gemini CLI runs hooks only in trusted folders: trust each workspace when Gemini asks (or with /permissions); headless runs need --skip-trust.",
				`Gemini CLI prints an "Executing Hook" line for every hook in its interactive UI; to hide them set "hooksConfig": {"notifications": false} in this settings file.`,
			}
		},
		Trust: geminiTrust,
		Probe: Probe{Event: "SessionStart",
			Payload: `{"hook_event_name":"SessionStart","session_id":"SESSION","source":"startup"}`},
	}
}

// geminiTrust reads ~/.gemini/trustedFolders.json for the working
// directory: TRUST_FOLDER trusts a folder and everything under it,
// TRUST_PARENT the parent of the named folder, DO_NOT_TRUST nothing.
func geminiTrust(e Env, _ Scope, _ string, _ []Found) Trust {
	path := filepath.Join(e.Home, ".gemini", "trustedFolders.json")
	fix := fmt.Sprintf("run gemini in %s and choose \"Trust folder\" (or /permissions)", e.Dir)
	b, err := os.ReadFile(path)
	if err != nil {
		return Trust{Detail: fmt.Sprintf("%s not in %s (no trust recorded)", e.Dir, path), Fix: fix}
	}
	var m map[string]string
	if json.Unmarshal(b, &m) != nil {
		return Trust{Detail: path + " does not parse", Fix: fix}
	}
	best, verdict := "", ""
	for k, v := range m {
		root := k
		if v == "TRUST_PARENT" {
			root = filepath.Dir(k)
		}
		if within(e.Dir, root) && len(root) >= len(best) {
			best, verdict = root, v
		}
	}
	switch verdict {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return Trust{OK: true, Detail: fmt.Sprintf("%s trusted (%s %s)", e.Dir, verdict, best)}
	case "DO_NOT_TRUST":
		return Trust{Detail: fmt.Sprintf("%s marked DO_NOT_TRUST in %s", best, path), Fix: fix}
	}
	return Trust{Detail: fmt.Sprintf("%s not in %s", e.Dir, path), Fix: fix}
}

// within reports whether dir is root or below it.
func within(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
