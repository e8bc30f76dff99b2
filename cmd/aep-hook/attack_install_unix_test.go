//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// installIn runs the built binary's `install claude-code ARGS` with HOME
// home in dir.
func installIn(t *testing.T, home, dir string, args ...string) hookRun {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"install", "claude-code", "--binary", bin}, args...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "AEP_HOME=" + filepath.Join(home, ".aep")}
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return hookRun{stdout: out.String(), code: code}
}

func backupsOf(path string) []string {
	b, _ := filepath.Glob(path + ".aep-hook-backup-*")
	return b
}

// The backup name was predictable (<file>.aep-hook-backup-<UTC second>)
// and written through a link planted there; two installs in one second
// shared it. Backups are now created exclusively, never through a link,
// under unique names, with the original's mode.
func TestAttackInstallBackupLink(t *testing.T) {
	home := t.TempDir()
	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"theme":"dark"}`+"\n"), 0o640)
	victim := filepath.Join(home, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	// Links at every name the old scheme would use in the next minute.
	now := timeNowUTC()
	for s := range 60 {
		os.Symlink(victim, settings+".aep-hook-backup-"+now.Add(secs(s)).Format("20060102T150405Z"))
	}
	if r := installIn(t, home, home); r.code != 0 {
		t.Fatalf("install: %d\n%s", r.code, r.stdout)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the planted link's target was written: %q", b)
	}
	var mine []string
	for _, b := range backupsOf(settings) {
		if fi, err := os.Lstat(b); err == nil && fi.Mode().IsRegular() {
			mine = append(mine, b)
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("backup mode %v, want the original's 0640", fi.Mode().Perm())
			}
		}
	}
	if len(mine) != 1 {
		t.Fatalf("backups %v", mine)
	}
	// A second install right after (another change) keeps both originals.
	b1, _ := os.ReadFile(settings)
	os.WriteFile(settings, append(b1[:len(b1)-2], []byte(`,"x":1}`+"\n")...), 0o640)
	os.Remove(filepath.Join(home, ".claude", "settings.json.lock"))
	uninstall := exec.Command(bin, "uninstall", "claude-code")
	uninstall.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AEP_HOME=" + filepath.Join(home, ".aep")}
	if out, err := uninstall.CombinedOutput(); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	regular := 0
	for _, b := range backupsOf(settings) {
		if fi, err := os.Lstat(b); err == nil && fi.Mode().IsRegular() {
			regular++
		}
	}
	if regular != 2 {
		t.Errorf("%d backups after two edits, want 2 (unique names)", regular)
	}
}

// Run as root against another user's settings (sudo keeping HOME), the
// file came back root:root; it now keeps its owner and mode, and so does
// its backup.
func TestAttackInstallKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own files as another user")
	}
	home := t.TempDir()
	dir := filepath.Join(home, ".claude")
	settings := filepath.Join(dir, "settings.json")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(settings, []byte(`{"theme":"dark"}`+"\n"), 0o600)
	for _, p := range []string{home, dir, settings} {
		os.Chown(p, 65534, 65534)
	}
	if r := installIn(t, home, home); r.code != 0 {
		t.Fatalf("install: %d\n%s", r.code, r.stdout)
	}
	for _, p := range append([]string{settings}, backupsOf(settings)...) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 65534 || st.Gid != 65534 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: uid %d gid %d mode %v, want 65534:65534 0600", p, st.Uid, st.Gid, fi.Mode().Perm())
		}
	}
	if len(backupsOf(settings)) != 1 {
		t.Errorf("backups %v", backupsOf(settings))
	}
}

// A dotfile manager's link was replaced by a copy, so the dotfiles never
// got the registration; install now writes through to the link's target
// and says so. At project scope, a link leading out of the project (one a
// cloned repository planted) is refused clearly.
func TestAttackInstallSymlinkedSettings(t *testing.T) {
	home := t.TempDir()
	dots := filepath.Join(home, "dotfiles", "claude.json")
	os.MkdirAll(filepath.Dir(dots), 0o755)
	os.WriteFile(dots, []byte(`{"theme":"dark"}`+"\n"), 0o644)
	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	if err := os.Symlink(dots, settings); err != nil {
		t.Fatal(err)
	}
	r := installIn(t, home, home)
	if r.code != 0 || !strings.Contains(r.stdout, "symbolic link") || !strings.Contains(r.stdout, dots) {
		t.Fatalf("install: %d\n%s", r.code, r.stdout)
	}
	if fi, err := os.Lstat(settings); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(dots); !strings.Contains(string(b), bin+" claude-code") || !strings.Contains(string(b), `"theme"`) {
		t.Errorf("the dotfile did not get the registration:\n%s", b)
	}

	project := filepath.Join(t.TempDir(), "repo")
	outside := filepath.Join(home, "other.json")
	os.WriteFile(outside, []byte("{}\n"), 0o644)
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	os.Symlink(outside, filepath.Join(project, ".claude", "settings.json"))
	r = installIn(t, home, project, "--scope", "project")
	if r.code == 0 || !strings.Contains(r.stdout, "outside the project") {
		t.Errorf("a link out of the project: exit %d\n%s", r.code, r.stdout)
	}
	if b, _ := os.ReadFile(outside); string(b) != "{}\n" {
		t.Errorf("the link's target outside the project was written: %q", b)
	}
}

func timeNowUTC() time.Time    { return time.Now().UTC() }
func secs(n int) time.Duration { return time.Duration(n) * time.Second }
