package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallVerb drives install and uninstall through the command line in
// a temporary HOME: --dry-run writes nothing, install registers the given
// binary by absolute path, a second run changes nothing, uninstall restores
// the original bytes.
func TestInstallVerb(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	t.Setenv("PATH", t.TempDir())
	codex := filepath.Join(home, ".codex", "hooks.json")
	orig := "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify\"}]}]\n  }\n}\n"
	if err := os.MkdirAll(filepath.Dir(codex), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(codex, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "bin", "aep-hook")
	do := func(args ...string) string {
		t.Helper()
		var out, errb strings.Builder
		code := run(append([]string{"aep-hook"}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, os.Getenv)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out.String()
	}
	out := do("install", "--all", "--dry-run", "--binary", bin)
	if !strings.Contains(out, "+            \"command\": \""+bin+" codex\"") || !strings.Contains(out, "dry run: nothing written") {
		t.Fatalf("dry run output:\n%s", out)
	}
	if b, _ := os.ReadFile(codex); string(b) != orig {
		t.Fatal("dry run wrote the file")
	}
	if strings.Contains(out, "claude-code  registered") {
		t.Fatal("--all wired an agent that is not present")
	}
	out = do("install", "--all", "--binary", bin)
	if !strings.Contains(out, "codex        registered 13 events") || !strings.Contains(out, "/hooks") {
		t.Fatalf("install output:\n%s", out)
	}
	if out = do("install", "codex", "--binary", bin); !strings.Contains(out, "nothing changed") {
		t.Fatalf("second install:\n%s", out)
	}
	do("uninstall", "codex")
	if b, _ := os.ReadFile(codex); string(b) != orig {
		t.Fatalf("uninstall left:\n%s", b)
	}
}

func TestInstallVerbErrors(t *testing.T) {
	for _, args := range [][]string{{"install"}, {"install", "nosuch"}, {"install", "codex", "--scope", "team"}} {
		var out, errb strings.Builder
		if code := run(append([]string{"aep-hook"}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, os.Getenv); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}
