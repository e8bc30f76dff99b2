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
	t.Setenv("AEP_HOME", "")
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
	if !strings.Contains(out, "+            \"command\": \""+bin+" codex\"") || !strings.Contains(out, "codex        would register 14 events in "+codex) ||
		!strings.Contains(out, "dry run: 1 agent, 1 file would change; nothing written.") {
		t.Fatalf("dry run output:\n%s", out)
	}
	if b, _ := os.ReadFile(codex); string(b) != orig {
		t.Fatal("dry run wrote the file")
	}
	if strings.Contains(out, "claude-code  registered") {
		t.Fatal("--all wired an agent that is not present")
	}
	out = do("install", "--all", "--binary", bin)
	if !strings.Contains(out, "codex        registered 14 events") || !strings.Contains(out, "/hooks") {
		t.Fatalf("install output:\n%s", out)
	}
	if out = do("install", "codex", "--binary", bin); !strings.Contains(out, "already registered, nothing changed: codex") {
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
	t.Setenv("AEP_HOME", "")
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
		"opencode     would write its plugin " + filepath.Join(home, ".config", "opencode", "plugin", "aep-hook.js") + " (",
		" lines; `aep-hook plugin opencode` prints it)",
		"kilo         would write its plugin " + filepath.Join(home, ".config", "kilo", "plugin", "aep-hook.js"),
		"not found (no binary on PATH, no settings folder): claude-code, codex, gemini-cli,",
		"dry run: 2 agents, 2 files would change; nothing written.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: missing %q in:\n%s", want, out)
		}
	}
	// A summary, not the plugins' sources: one line per agent, its notes,
	// the agents not found, the total.
	if strings.Contains(out, "process.env.AEP_HOOK_BIN") || strings.Count(out, "\n") > 12 {
		t.Errorf("dry run prints more than a summary (%d lines):\n%s", strings.Count(out, "\n"), out)
	}
	if got := files(); !slices.Equal(got, before) {
		t.Fatalf("dry run wrote: %v", got)
	}
	out = do(t, 0, "install", "--all", "--binary", bin)
	if !strings.Contains(out, "opencode     wrote its plugin ") || !strings.Contains(out, "kilo         wrote its plugin ") || strings.Contains(out, "pi           wrote") ||
		strings.Contains(out, "events") {
		t.Fatalf("install:\n%s", out)
	}
	if out = do(t, 0, "install", "opencode", "kilo", "--binary", bin); !strings.Contains(out, "already registered, nothing changed: opencode, kilo") {
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

// TestUninstallAllLeavesNothing: `uninstall --all` is accepted and takes
// away everything install made in a fresh home: the hook scripts and
// plugin files, the folders install created for them (~/.cline, ~/.pi),
// a settings file holding only aep-hook's hooks and its folder, and the
// backups holding only aep-hook's own content; so the next `install
// --all` finds none of those agents. A backup of the user's own file
// stays.
func TestUninstallAllLeavesNothing(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AEP_HOME", "")
	for _, k := range []string{"CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "PI_CODING_AGENT_DIR", "CLINE_DIR", "GEMINI_CLI_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("PATH", t.TempDir())
	bin := filepath.Join(home, "bin", "aep-hook")
	other := filepath.Join(home, "old", "aep-hook")
	// Gemini's folder is the user's, with a settings file of their own.
	gemini := filepath.Join(home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(gemini), 0o755)
	os.WriteFile(gemini, []byte("{\"theme\": \"dark\"}\n"), 0o644)
	do(t, 0, "install", "cline", "pi", "claude-code", "gemini-cli", "--binary", other)
	// Registering another binary rewrites files that hold only aep-hook's
	// hooks (no backup: nothing of the user's in them) and the user's
	// Gemini settings (backed up).
	out := do(t, 0, "install", "cline", "pi", "claude-code", "gemini-cli", "--binary", bin)
	if strings.Count(out, "backup of your file first: ") != 1 || !strings.Contains(out, "backup of your file first: "+gemini+".aep-hook-backup-") {
		t.Errorf("backups of aep-hook's own files, or none of the user's:\n%s", out)
	}
	// A backup an older version made of a file holding only our hooks.
	claude := filepath.Join(home, ".claude", "settings.json")
	b, _ := os.ReadFile(claude)
	os.WriteFile(claude+".aep-hook-backup-20260101T000000Z", b, 0o600)
	out = do(t, 0, "uninstall", "--all")
	for _, want := range []string{
		"cline        removed 10 hook scripts from " + filepath.Join(home, ".cline", "hooks"),
		"removed the folder(s) install made: ",
		"pi           removed its plugin " + filepath.Join(home, ".pi", "agent", "extensions", "aep-hook.js"),
		"claude-code  removed " + claude + " (it held only aep-hook's hooks); removed 1 backup holding only aep-hook's hooks\n",
		"nothing of aep-hook's to remove: codex, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("uninstall: missing %q in:\n%s", want, out)
		}
	}
	for _, gone := range []string{".cline", ".pi", ".claude"} {
		if _, err := os.Stat(filepath.Join(home, gone)); err == nil {
			t.Errorf("%s left behind", gone)
		}
	}
	if b, _ := os.ReadFile(gemini); string(b) != "{\"theme\": \"dark\"}\n" {
		t.Errorf("gemini settings not restored: %q", b)
	}
	// Each install that edited the user's file backed it up (one name per
	// second today, unique names later), and every such backup stays.
	backups, _ := filepath.Glob(gemini + ".aep-hook-backup-*")
	if len(backups) == 0 {
		t.Error("the backups of the user's own settings were removed")
	}
	for _, m := range backups {
		if b, _ := os.ReadFile(m); !strings.Contains(string(b), `"theme": "dark"`) {
			t.Errorf("backup %s does not hold the user's settings: %q", m, b)
		}
	}
	out = do(t, 0, "install", "--all", "--binary", bin)
	if !strings.Contains(out, "not found (no binary on PATH, no settings folder): claude-code, codex,") ||
		!strings.Contains(out, "cline, hermes, antigravity, pi,") {
		t.Errorf("install --all after uninstall --all finds agents aep-hook's leftovers stand for:\n%s", out)
	}
	do(t, 2, "uninstall", "--all", "codex")
}

// TestInstallNotesMatchReadme: what install says an agent needs beyond the
// file is what the README's set-up says (Cline: the hub daemon and the
// settings written into the hook files, not a restart).
func TestInstallNotesMatchReadme(t *testing.T) {
	doctorHome(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	out := do(t, 0, "install", "cline", "--dry-run", "--binary", bin)
	const said = "runs hooks in its hub daemon, which does not see AEP_* variables exported later"
	if !strings.Contains(out, "Cline "+said) || !strings.Contains(readme, "Cline "+said) ||
		!strings.Contains(readme, "settings in force are written into each hook file, so run install again after changing them") {
		t.Errorf("install and the README disagree about Cline:\n%s", out)
	}
	if strings.Contains(readme, "hub daemon must be restarted") {
		t.Error("the README still says Cline's hub must be restarted")
	}
}

// TestInstallWarnsOnlyForGoRun: a binary under the temporary directory (a
// checkout there, built with make) is registered without a warning; only a
// `go run` build, which go deletes when it exits, is warned about.
func TestInstallWarnsOnlyForGoRun(t *testing.T) {
	doctorHome(t)
	for _, tc := range []struct {
		binary string
		warn   bool
	}{
		{filepath.Join(os.TempDir(), "checkout", "bin", "aep-hook"), false},
		{filepath.Join(os.TempDir(), "go-build1234", "b001", "exe", "aep-hook"), true},
	} {
		got := do(t, 0, "install", "claude-code", "--dry-run", "--binary", tc.binary)
		if strings.Contains(got, "warning: ") != tc.warn || (tc.warn && !strings.Contains(got, "is a `go run` build")) {
			t.Errorf("%s: warning %v:\n%s", tc.binary, !tc.warn, got)
		}
	}
}
