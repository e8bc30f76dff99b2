package installer

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const testBin = "/opt/aep hook/bin/aep-hook"

func testEnv(t *testing.T) Env {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return Env{Home: home, Dir: dir, Binary: testBin, Getenv: func(string) string { return "" },
		Now: func() time.Time { return time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) }}
}

func mustAgent(t *testing.T, name string) Agent {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("no agent %s", name)
	}
	return a
}

// apply plans and applies, returning the changes.
func apply(t *testing.T, a Agent, e Env, s Scope, remove bool) []Change {
	t.Helper()
	var cs []Change
	var err error
	if remove {
		cs, err = PlanUninstall(a, e, s)
	} else {
		cs, err = PlanInstall(a, e, s)
	}
	if err != nil {
		t.Fatalf("%s plan (remove=%v): %v", a.Name, remove, err)
	}
	for _, c := range cs {
		if _, err := Apply(c, e.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return cs
}

func anyChanged(cs []Change) bool {
	for _, c := range cs {
		if c.Changed() {
			return true
		}
	}
	return false
}

// TestInstallRoundTrip installs into realistic existing settings (other
// hooks, unrelated keys, comments), installs again (no change), checks the
// registrations read back, uninstalls and expects the original bytes.
func TestInstallRoundTrip(t *testing.T) {
	cases := []struct {
		agent, fixture string
		scope          Scope
	}{
		{"claude-code", "claude-code.json", User},
		{"claude-code", "claude-code.json", Project},
		{"codex", "codex.json", User},
		{"gemini-cli", "gemini-cli.json", User},
		{"gemini-cli", "gemini-cli.json", Project},
		{"qwen-code", "qwen-code.json", User},
		{"vscode", "vscode.json", Project},
		{"antigravity", "antigravity.json", User},
		{"antigravity", "", Project},
		{"kimi-code", "kimi-code.toml", User},
		{"kimi-code", "kimi-code-nohooks.toml", User},
		{"kimi-code", "", User},
		{"hermes", "hermes.yaml", User},
		{"hermes", "hermes-default.yaml", User},
		{"claude-code", "", User},
		{"codex", "", Project},
	}
	for _, tc := range cases {
		t.Run(tc.agent+"/"+string(tc.scope)+"/"+tc.fixture, func(t *testing.T) {
			e := testEnv(t)
			a := mustAgent(t, tc.agent)
			path := a.Path(e, tc.scope)
			var orig []byte
			if tc.fixture != "" {
				var err error
				if orig, err = os.ReadFile(filepath.Join("testdata", tc.fixture)); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, orig, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cs := apply(t, a, e, tc.scope, false)
			if !anyChanged(cs) {
				t.Fatal("first install changed nothing")
			}
			after, _ := os.ReadFile(path)
			if orig != nil {
				backups, _ := filepath.Glob(path + ".aep-hook-backup-*")
				if len(backups) != 1 {
					t.Fatalf("backups %v", backups)
				}
				if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, orig) {
					t.Fatal("backup differs from the original")
				}
				if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
					t.Errorf("mode %v, want the original 0600", st.Mode().Perm())
				}
			}
			if !strings.Contains(string(after), "'"+testBin+"' "+tc.agent) && !strings.Contains(string(after), `"'`+testBin+`' `+tc.agent) {
				t.Errorf("absolute binary not registered:\n%s", after)
			}
			st := Inspect(a, e, tc.scope)
			if st.Err != nil || len(st.Missing) > 0 || len(st.Foreign) > 0 {
				t.Fatalf("inspect: err %v missing %v foreign %v\n%s", st.Err, st.Missing, st.Foreign, after)
			}
			if len(st.Found) != len(a.Hooks) {
				t.Fatalf("found %d registrations, want %d", len(st.Found), len(a.Hooks))
			}
			if again := apply(t, a, e, tc.scope, false); anyChanged(again) {
				t.Fatalf("second install changed the file:\n%s", Diff(path, again[0].Old, again[0].New))
			}
			apply(t, a, e, tc.scope, true)
			back, err := os.ReadFile(path)
			if orig == nil {
				if err == nil {
					t.Fatalf("uninstall left a file install created:\n%s", back)
				}
				return
			}
			if !bytes.Equal(back, orig) {
				t.Fatalf("uninstall did not restore the original:\n%s", Diff(path, orig, back))
			}
			if again := apply(t, a, e, tc.scope, true); anyChanged(again) {
				t.Fatal("second uninstall changed something")
			}
		})
	}
}

// TestClineScripts: one executable script per hook; a hook file that is not
// aep-hook's is left alone (with a note) and survives uninstall.
func TestClineScripts(t *testing.T) {
	e := testEnv(t)
	a := mustAgent(t, "cline")
	dir := a.Path(e, Project)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	foreign := []byte("#!/bin/sh\necho mine\n")
	if err := os.WriteFile(filepath.Join(dir, "TaskStart"), foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	cs := apply(t, a, e, Project, false)
	var noted bool
	for _, c := range cs {
		for _, n := range c.Notes {
			noted = noted || strings.Contains(n, "TaskStart is not aep-hook's")
		}
	}
	if !noted {
		t.Error("no note about the foreign TaskStart")
	}
	st := Inspect(a, e, Project)
	if len(st.Found) != len(a.Hooks)-1 || len(st.Missing) != 1 || st.Missing[0] != "TaskStart" {
		t.Fatalf("found %d missing %v", len(st.Found), st.Missing)
	}
	fi, err := os.Stat(filepath.Join(dir, "PreToolUse"))
	if err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("PreToolUse script: %v %v", fi, err)
	}
	if again := apply(t, a, e, Project, false); anyChanged(again) {
		t.Fatal("second install changed scripts")
	}
	apply(t, a, e, Project, true)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "TaskStart" {
		t.Fatalf("after uninstall: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "TaskStart")); !bytes.Equal(b, foreign) {
		t.Fatal("foreign hook changed")
	}
}

// TestInstallUpdatesMovedBinary: a registration of ours with another path is
// pointed at the current binary, not duplicated.
func TestInstallUpdatesMovedBinary(t *testing.T) {
	e := testEnv(t)
	a := mustAgent(t, "claude-code")
	e.Binary = "/old/aep-hook"
	apply(t, a, e, User, false)
	e.Binary = "/new/aep-hook"
	if st := Inspect(a, e, User); len(st.Foreign) != len(a.Hooks) {
		t.Fatalf("foreign %d, want %d", len(st.Foreign), len(a.Hooks))
	}
	apply(t, a, e, User, false)
	b, _ := os.ReadFile(a.Path(e, User))
	if strings.Contains(string(b), "/old/") || strings.Count(string(b), "/new/aep-hook claude-code") != len(a.Hooks) {
		t.Fatalf("not updated in place:\n%s", b)
	}
}

// TestRefusesBrokenSettings: a file that does not parse is never touched.
func TestRefusesBrokenSettings(t *testing.T) {
	for _, name := range []string{"claude-code", "kimi-code", "hermes"} {
		e := testEnv(t)
		a := mustAgent(t, name)
		p := a.Path(e, User)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{ [ broken = : \n"), 0o644)
		if _, err := PlanInstall(a, e, User); err == nil {
			t.Errorf("%s: broken settings accepted", name)
		}
	}
}

func TestOwns(t *testing.T) {
	for cmd, want := range map[string]bool{
		"aep-hook codex":                   true,
		"/usr/local/bin/aep-hook codex":    true,
		"'/opt/my apps/aep-hook' codex":    true,
		"aep-codex":                        true,
		"aep-hook claude-code":             false,
		"/usr/bin/guard.sh aep-hook codex": false,
		"":                                 false,
	} {
		if got := Owns("codex")(cmd); got != want {
			t.Errorf("Owns(codex)(%q) = %v", cmd, got)
		}
	}
	wrapped := Owns("codex", "env X=1 '/opt/my rec' hook")
	for cmd, want := range map[string]bool{
		"env X=1 '/opt/my rec' hook codex":       true,
		`env X=1 "/opt/my rec" hook codex`:       true,
		"env X=1 '/opt/my rec' hook claude-code": false,
		"env X=2 '/opt/my rec' hook codex":       false,
		"env X=1 '/opt/my rec' codex":            false,
		"aep-hook codex":                         true,
	} {
		if got := wrapped(cmd); got != want {
			t.Errorf("Owns(codex, wrapper)(%q) = %v", cmd, got)
		}
	}
	if q := Quote("/opt/it's here/aep-hook"); q != `'/opt/it'\''s here/aep-hook'` || SplitCommand(q)[0] != "/opt/it's here/aep-hook" {
		t.Errorf("quote round trip: %s", q)
	}
}

func TestDiff(t *testing.T) {
	got := Diff("f", []byte("a\nb\nc\n"), []byte("a\nB\nc\n"))
	want := "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if Diff("f", []byte("x"), []byte("x")) != "" {
		t.Fatal("equal inputs diff")
	}
}

// TestClineSettingsInScripts: the hub daemon does not see later exports, so
// the settings in force are written into the file (a value where the hook
// runs still wins); a token never is, and a project file carries only the
// capture settings.
func TestClineSettingsInScripts(t *testing.T) {
	e := testEnv(t)
	env := map[string]string{"AEP_HOME": `/home/me/my "aep"`, "AEP_CAPTURE": "redacted", "AEP_TOKEN": "s3cret", "AEP_OUT": "https://c.example"}
	e.Getenv = func(k string) string { return env[k] }
	a := mustAgent(t, "cline")
	apply(t, a, e, User, false)
	b, _ := os.ReadFile(filepath.Join(a.Path(e, User), "TaskStart"))
	for _, want := range []string{`export AEP_HOME="${AEP_HOME:-"/home/me/my \"aep\""}"`, `export AEP_CAPTURE="${AEP_CAPTURE:-"redacted"}"`, `export AEP_OUT=`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("missing %s in:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "s3cret") {
		t.Fatalf("token written:\n%s", b)
	}
	apply(t, a, e, Project, false)
	b, _ = os.ReadFile(filepath.Join(a.Path(e, Project), "TaskStart"))
	if strings.Contains(string(b), "AEP_HOME") || strings.Contains(string(b), "AEP_OUT") || !strings.Contains(string(b), "AEP_CAPTURE") {
		t.Fatalf("project file:\n%s", b)
	}
}

// TestProgram: a wrapper registered in place of the binary (Env.Program,
// as the real-agent harness registers its recorder) is written, read back,
// left alone by a second install and removed by uninstall, for every agent.
func TestProgram(t *testing.T) {
	for _, a := range Agents() {
		t.Run(a.Name, func(t *testing.T) {
			e := testEnv(t)
			e.Program = "env AEP_REAL_DIR='/tmp/a b' /opt/rec hook"
			s := a.Scopes[0]
			apply(t, a, e, s, false)
			st := Inspect(a, e, s)
			if st.Err != nil || len(st.Missing) > 0 || len(st.Foreign) > 0 || len(st.Found) != len(a.Hooks) {
				t.Fatalf("err %v, missing %v, foreign %v, found %d of %d", st.Err, st.Missing, st.Foreign, len(st.Found), len(a.Hooks))
			}
			if _, plugin := a.Format.(PluginFile); !plugin {
				for _, f := range st.Found {
					if !strings.HasPrefix(f.Command, e.Program+" ") {
						t.Errorf("%s runs %q", f.Event, f.Command)
					}
				}
			}
			if cs := apply(t, a, e, s, false); anyChanged(cs) {
				t.Error("a second install changed something")
			}
			apply(t, a, e, s, true)
			if st := Inspect(a, e, s); len(st.Found) > 0 {
				t.Errorf("left after uninstall: %v", st.Found)
			}
		})
	}
}

// TestPluginFiles: the plugin agents (pi's extension, the OpenCode and Kilo
// forwarder plugin) write one file into a plugin folder that already holds
// the user's own plugin and sits beside the agent's config: the file carries
// the absolute binary, a second install changes nothing, a moved binary is
// rewritten in place, uninstall gives back the folder as it was, and a file
// of that name that is not aep-hook's is left alone (with a note) on both.
func TestPluginFiles(t *testing.T) {
	cases := []struct {
		agent  string
		scope  Scope
		config string // a config file beside the plugin folder
		other  string // the user's own plugin in the folder
		cmd    string // what the plugin starts
	}{
		{"pi", User, "settings.json", "guard.ts", "forward pi"},
		{"pi", Project, "settings.json", "guard.ts", "forward pi"},
		{"opencode", User, "opencode.json", "notify.js", "forward opencode"},
		{"opencode", Project, "opencode.json", "notify.js", "forward opencode"},
		{"kilo", User, "kilo.json", "notify.ts", "forward kilo"},
		{"kilo", Project, "kilo.json", "notify.ts", "forward kilo"},
	}
	for _, tc := range cases {
		t.Run(tc.agent+"/"+string(tc.scope), func(t *testing.T) {
			e := testEnv(t)
			a := mustAgent(t, tc.agent)
			dir := a.Path(e, tc.scope)
			pf := a.Format.(PluginFile)
			other := []byte("export default async function plugin() { return {} }\n")
			config := []byte("{\n  \"$schema\": \"https://example.com/config.json\", // mine\n}\n")
			writeAll(t, map[string][]byte{filepath.Join(dir, tc.other): other, filepath.Join(filepath.Dir(dir), tc.config): config})
			before := snapshot(t, e.Home)

			if cs := apply(t, a, e, tc.scope, false); !anyChanged(cs) {
				t.Fatal("first install changed nothing")
			}
			b, err := os.ReadFile(filepath.Join(dir, pf.Name))
			if err != nil || !bytes.HasPrefix(b, pf.Marker) || pf.Bin(b) != testBin {
				t.Fatalf("plugin file (%v), binary %q:\n%s", err, pf.Bin(b), b)
			}
			st := Inspect(a, e, tc.scope)
			if st.Err != nil || len(st.Missing) > 0 || len(st.Foreign) > 0 || len(st.Found) != 1 || st.Found[0].Command != Quote(testBin)+" "+tc.cmd {
				t.Fatalf("inspect: %+v", st)
			}
			if again := apply(t, a, e, tc.scope, false); anyChanged(again) {
				t.Fatalf("second install changed the file:\n%s", Diff(dir, again[0].Old, again[0].New))
			}
			moved := e
			moved.Binary = "/new/aep-hook"
			if st := Inspect(a, moved, tc.scope); len(st.Foreign) != 1 {
				t.Fatalf("old binary not reported: %+v", st)
			}
			apply(t, a, moved, tc.scope, false)
			if b, _ := os.ReadFile(filepath.Join(dir, pf.Name)); pf.Bin(b) != "/new/aep-hook" {
				t.Fatalf("not rewritten for the moved binary:\n%s", b)
			}
			apply(t, a, moved, tc.scope, true)
			if after := snapshot(t, e.Home); !maps.Equal(after, before) {
				t.Fatalf("uninstall left\n%v\nwant\n%v", after, before)
			}
			if again := apply(t, a, e, tc.scope, true); anyChanged(again) {
				t.Fatal("second uninstall changed something")
			}

			foreign := []byte("// someone else's " + pf.Name + "\n")
			writeAll(t, map[string][]byte{filepath.Join(dir, pf.Name): foreign})
			var noted bool
			for _, c := range apply(t, a, e, tc.scope, false) {
				noted = noted || slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "is not aep-hook's") })
			}
			apply(t, a, e, tc.scope, true)
			if b, _ := os.ReadFile(filepath.Join(dir, pf.Name)); !noted || !bytes.Equal(b, foreign) {
				t.Fatalf("foreign file (noted %v):\n%s", noted, b)
			}
		})
	}
}

// writeAll writes files, making their folders.
func writeAll(t *testing.T, files map[string][]byte) {
	t.Helper()
	for p, b := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot maps every file under root to its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestUninstallRemovesMadeFolder: the folder install made for its own
// files (a plugin folder, Cline's hook folder) goes with them when
// nothing else is in it.
func TestUninstallRemovesMadeFolder(t *testing.T) {
	for _, name := range []string{"cline", "pi", "opencode", "kilo"} {
		t.Run(name, func(t *testing.T) {
			e := testEnv(t)
			e.Made = filepath.Join(t.TempDir(), "made-folders")
			a := mustAgent(t, name)
			dir := a.Path(e, Project)
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s exists before install: %v", dir, err)
			}
			apply(t, a, e, Project, false)
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("install made no %s: %v", dir, err)
			}
			apply(t, a, e, Project, true)
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("uninstall left %s: %v", dir, err)
			}
		})
	}
}
