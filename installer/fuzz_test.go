package installer

import (
	"os"
	"path/filepath"
	"testing"
)

// fuzzFormat checks, for any settings text, that an edit never panics and
// that whatever install accepts, scan reads back and uninstall takes out.
func fuzzFormat(f *testing.F, agent string, seeds ...string) {
	a, _ := Lookup(agent)
	for _, s := range seeds {
		if b, err := os.ReadFile(filepath.Join("testdata", s)); err == nil {
			f.Add(b)
		} else {
			f.Add([]byte(s))
		}
	}
	regs := a.Regs("/usr/bin/aep-hook")
	ours := Owns(agent)
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := a.Format.Install(in, regs, ours)
		if err != nil || checkRegistered(a.Format, out, regs, ours) != nil {
			return
		}
		found, err := a.Format.Scan(out, ours)
		if err != nil {
			t.Fatalf("scan after install: %v\n%s", err, out)
		}
		if len(found) < len(regs) {
			t.Fatalf("found %d of %d after install:\n%s", len(found), len(regs), out)
		}
		if _, err := a.Format.Uninstall(out, ours); err != nil {
			t.Fatalf("uninstall after install: %v\n%s", err, out)
		}
	})
}

func FuzzJSONHooks(f *testing.F) {
	fuzzFormat(f, "claude-code", "claude-code.json", "gemini-cli.json", "qwen-code.json", "{}", `{"hooks":[]}`, "")
}

func FuzzTOMLHooks(f *testing.F) {
	fuzzFormat(f, "kimi-code", "kimi-code.toml", "kimi-code-nohooks.toml", "hooks = []\n", "[[hooks]]\nevent = \"Stop\"\ncommand = \"x\"\n")
}

func FuzzYAMLHooks(f *testing.F) {
	fuzzFormat(f, "hermes", "hermes.yaml", "hermes-default.yaml", "hooks:\n  x: []\n", "")
}
