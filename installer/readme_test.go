package installer

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeSnippets: each agent's registration snippet in the README (kept
// by the engineers who check that agent against the real CLI) names exactly
// the events install registers, so the two cannot drift apart.
func TestReadmeSnippets(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	heading := regexp.MustCompile("(?m)^### .+? \\(`([a-z-]+)`")
	block := regexp.MustCompile("(?s)```(\\w*)\n(.*?)```")
	patterns := map[string]*regexp.Regexp{
		"json": regexp.MustCompile(`"([A-Za-z]+)":\s*\[`),
		"toml": regexp.MustCompile(`event = "([A-Za-z]+)"`),
		"yaml": regexp.MustCompile(`(?m)^\s+([a-z_]+):`),
	}
	seen := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatchIndex(readme, -1) {
		name := readme[m[2]:m[3]]
		a, ok := Lookup(name)
		if !ok {
			continue
		}
		sec := readme[m[1]:]
		if i := strings.Index(sec, "\n### "); i >= 0 {
			sec = sec[:i]
		}
		cb := block.FindStringSubmatch(sec)
		if cb == nil {
			t.Errorf("%s: no snippet in the README section", name)
			continue
		}
		var events []string
		if pf, ok := a.Format.(PluginFile); ok {
			// A plugin file is the one registration: the snippet places it.
			if strings.Contains(cb[2], pf.Name) {
				events = []string{pf.Name}
			}
		} else if cb[1] == "sh" {
			if l := regexp.MustCompile(`(?s)for e in (.*?); do`).FindStringSubmatch(cb[2]); l != nil {
				events = strings.Fields(strings.ReplaceAll(l[1], "\\", " "))
			}
		} else if re, ok := patterns[cb[1]]; ok {
			for _, e := range re.FindAllStringSubmatch(cb[2], -1) {
				if e[1] != "hooks" {
					events = append(events, e[1])
				}
			}
		}
		var want []string
		for _, h := range a.Hooks {
			want = append(want, h.Event)
		}
		slices.Sort(events)
		slices.Sort(want)
		if !slices.Equal(events, want) {
			t.Errorf("%s: the README registers %v\ninstall registers %v", name, events, want)
		}
		seen[name] = true
	}
	for _, n := range Names() {
		if !seen[n] {
			t.Errorf("%s: no README section found", n)
		}
	}
}
