package main

import (
	"os"
	"path/filepath"
	"slices"
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

// TestInstallPluginVerb: `install --all` finds OpenCode by its config folder
// and Kilo by its binary on PATH and writes each one's plugin beside the
// user's own; --dry-run shows the file with the absolute binary and writes
// nothing, a second run changes nothing, uninstall gives the folders back.
func TestInstallPluginVerb(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	path := t.TempDir()
	t.Setenv("PATH", path)
	if err := os.WriteFile(filepath.Join(path, "kilo"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(home, ".config", "opencode", "plugin", "notify.js")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("export const Notify = async () => ({})\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "bin", "aep-hook")
	files := func() []string {
		var fs []string
		filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				fs = append(fs, p)
			}
			return err
		})
		return fs
	}
	before := files()
	out := do(t, 0, "install", "--all", "--dry-run", "--binary", bin)
	for _, want := range []string{
		"+++ " + filepath.Join(home, ".config", "opencode", "plugin", "aep-hook.js"),
		"+++ " + filepath.Join(home, ".config", "kilo", "plugin", "aep-hook.js"),
		`+const BIN = process.env.AEP_HOOK_BIN || "` + bin + `"`,
		"+    const args = [\"forward\", \"kilo\"]",
		"dry run: nothing written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: missing %q in:\n%s", want, out)
		}
	}
	if got := files(); !slices.Equal(got, before) {
		t.Fatalf("dry run wrote: %v", got)
	}
	out = do(t, 0, "install", "--all", "--binary", bin)
	if !strings.Contains(out, "opencode     registered 1 events") || !strings.Contains(out, "kilo         registered 1 events") || strings.Contains(out, "pi           registered") {
		t.Fatalf("install:\n%s", out)
	}
	if out = do(t, 0, "install", "opencode", "kilo", "--binary", bin); strings.Count(out, "nothing changed") != 2 {
		t.Fatalf("second install:\n%s", out)
	}
	do(t, 0, "uninstall", "opencode", "kilo")
	if b, _ := os.ReadFile(mine); string(b) != "export const Notify = async () => ({})\n" {
		t.Fatalf("the user's plugin changed: %q", b)
	}
	if got := files(); !slices.Equal(got, before) {
		t.Fatalf("uninstall left %v, want %v", got, before)
	}
}
