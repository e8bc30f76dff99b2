package installer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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

// geminiTrust reads ~/.gemini/trustedFolders.json, where TRUST_FOLDER
// trusts a folder and everything under it, TRUST_PARENT the parent of the
// named folder, DO_NOT_TRUST nothing. Gemini runs hooks only in a trusted
// folder. A project's registration runs in that project, so the project
// folder is judged; the user's runs in every project, so the verdict is
// which folders are trusted (none: the hooks never run), and the advice is
// always to trust projects, never the whole home.
func geminiTrust(e Env, s Scope, _ string, _ []Found) Trust {
	path := filepath.Join(e.Home, ".gemini", "trustedFolders.json")
	roots, distrust, err := geminiTrusted(path)
	if s == Project {
		fix := fmt.Sprintf("run gemini in %s and choose \"Trust folder\" (or /permissions)", e.Dir)
		if err != nil {
			return Trust{Detail: fmt.Sprintf("%s (no trust recorded for %s)", err, e.Dir), Fix: fix}
		}
		if d := deepest(e.Dir, distrust); d != "" && len(d) >= len(deepest(e.Dir, roots)) {
			return Trust{Detail: fmt.Sprintf("%s marked DO_NOT_TRUST in %s", d, path), Fix: fix}
		}
		if r := deepest(e.Dir, roots); r != "" {
			return Trust{OK: true, Detail: fmt.Sprintf("%s trusted (under %s)", e.Dir, r)}
		}
		return Trust{Detail: fmt.Sprintf("%s not trusted in %s", e.Dir, path), Fix: fix}
	}
	fix := "in each project you use Gemini CLI in, run gemini and choose \"Trust folder\" (trust projects, not your whole home)"
	if err != nil {
		return Trust{Detail: fmt.Sprintf("%s: Gemini CLI runs the hooks in no folder", err), Fix: fix}
	}
	if len(roots) == 0 {
		return Trust{Detail: fmt.Sprintf("no folder is trusted in %s: Gemini CLI runs the hooks in none", path), Fix: fix}
	}
	shown := roots
	if len(shown) > 3 {
		shown = shown[:3]
	}
	detail := fmt.Sprintf("the hooks run in the %d trusted folder(s) of %s (%s", len(roots), path, strings.Join(shown, ", "))
	if len(roots) > len(shown) {
		detail += ", ..."
	}
	detail += ")"
	if deepest(e.Dir, roots) == "" {
		detail += fmt.Sprintf("; not in %s, which Gemini will ask to trust", e.Dir)
	}
	return Trust{OK: true, Detail: detail}
}

// geminiTrusted reads the trusted folder roots and the distrusted folders
// of trustedFolders.json, sorted.
func geminiTrusted(path string) (roots, distrust []string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil // nothing trusted yet
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s cannot be read", path)
	}
	var m map[string]string
	if json.Unmarshal(b, &m) != nil {
		return nil, nil, fmt.Errorf("%s does not parse", path)
	}
	for k, v := range m {
		switch v {
		case "TRUST_FOLDER":
			roots = append(roots, k)
		case "TRUST_PARENT":
			roots = append(roots, filepath.Dir(k))
		case "DO_NOT_TRUST":
			distrust = append(distrust, k)
		}
	}
	sort.Strings(roots)
	sort.Strings(distrust)
	return roots, distrust, nil
}

// deepest returns the longest of roots that dir is in, "" when none.
func deepest(dir string, roots []string) string {
	best := ""
	for _, r := range roots {
		if within(dir, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// within reports whether dir is root or below it.
func within(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
