package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeSetUp runs the README's set-up commands exactly as written, as
// one shell script, in this checkout, on a fresh home that has two agents
// (Claude Code's and OpenCode's folders) and no ~/.local/bin: the binary
// lands where the README says, install registers that copy (not the
// checkout's bin/), and doctor finds both agents wired and recording and
// exits 0. Only the Go toolchain's caches are carried over, so the build
// needs no network.
func TestReadmeSetUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary with make")
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root, _ := filepath.Abs("../..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	sec := readme[strings.Index(readme, "\n## Set up\n"):]
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("no sh block in the README's Set up section")
	}
	script := m[1]

	home := t.TempDir()
	for _, d := range []string{".claude", filepath.Join(".config", "opencode")} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"HOME=" + home,
		"PATH=" + filepath.Dir(goBin) + string(os.PathListSeparator) + filepath.Dir(makeBin) + string(os.PathListSeparator) + "/usr/bin:/bin",
		"TMPDIR=" + t.TempDir(),
		"GOTOOLCHAIN=local",
		"GOFLAGS=-mod=readonly",
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command(goBin, "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute) // a hung build, not a threshold
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-e", "-c", script)
	cmd.Dir = root
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's set-up failed: %v\n%s\n%s", err, script, out.String())
	}
	got := out.String()
	installed := filepath.Join(home, ".local", "bin", "aep-hook")
	for _, want := range []string{
		"installed " + installed,
		"claude-code  created " + filepath.Join(home, ".claude", "settings.json") + " with 28 events",
		"opencode     wrote its plugin " + filepath.Join(home, ".config", "opencode", "plugin", "aep-hook.js"),
		"aep-hook doctor: no problems found\n",
		"\nhealthy: 2 agents wired and recording.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "warning:") {
		t.Errorf("the set-up warns:\n%s", got)
	}
	settings, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if !strings.Contains(string(settings), `"command": "`+installed+` claude-code"`) {
		t.Errorf("install registered another binary than the one the set-up placed:\n%s", settings)
	}
}
