package installer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMadeFolders: install records the folders it creates; removing the
// file takes away those left empty, deepest first, and never a folder that
// was there before or that holds something else now.
func TestMadeFolders(t *testing.T) {
	root := t.TempDir()
	ledger := filepath.Join(root, "aep", "install", "made-folders")
	mine := filepath.Join(root, "home", ".cline", "hooks", "TaskStart")
	theirs := filepath.Join(root, "home", ".config", "opencode", "plugin", "aep-hook.js")
	os.MkdirAll(filepath.Join(root, "home", ".config", "opencode"), 0o755) // the user's
	kilo := filepath.Join(root, "home", ".config", "kilo", "plugin", "aep-hook.js")
	os.MkdirAll(filepath.Dir(kilo), 0o755) // the user's, and empty
	for _, p := range []string{mine, theirs, kilo} {
		c := Change{Path: p, New: []byte("x\n"), Mode: 0o644, Made: ledger}
		if _, err := Apply(c, testEnv(t).Now()); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{filepath.Join(root, "home", ".cline"), filepath.Join(root, "home", ".cline", "hooks"),
		filepath.Join(root, "home", ".config", "opencode", "plugin")}
	if got := MadeFolders(ledger); !slices.Equal(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	// The agent puts a file of its own beside ours in .cline.
	os.WriteFile(filepath.Join(root, "home", ".cline", "data.json"), []byte("{}"), 0o644)
	for _, p := range []string{mine, theirs, kilo} {
		if _, err := Apply(Change{Path: p, Old: []byte("x\n"), NoBackup: true, Made: ledger}, testEnv(t).Now()); err != nil {
			t.Fatal(err)
		}
	}
	for p, kept := range map[string]bool{
		filepath.Join(root, "home", ".cline", "hooks"):               false,
		filepath.Join(root, "home", ".cline"):                        true, // holds the agent's file
		filepath.Join(root, "home", ".config", "opencode", "plugin"): false,
		filepath.Join(root, "home", ".config", "opencode"):           true, // the user's
	} {
		if _, err := os.Stat(p); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", p, err == nil, kept)
		}
	}
	if got := MadeFolders(ledger); !slices.Equal(got, []string{filepath.Join(root, "home", ".cline")}) {
		t.Errorf("still recorded %v", got)
	}
}

// TestGeminiTrust: a project registration is judged for its folder (a
// deeper DO_NOT_TRUST wins); a user one over the trusted folders, and with
// none the advice never names the home.
func TestGeminiTrust(t *testing.T) {
	e := testEnv(t)
	file := filepath.Join(e.Home, ".gemini", "trustedFolders.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	write := func(s string) { os.WriteFile(file, []byte(s), 0o644) }
	write(`{"` + e.Home + `":"TRUST_FOLDER","` + e.Dir + `":"DO_NOT_TRUST"}`)
	if tr := geminiTrust(e, Project, "", nil); tr.OK {
		t.Errorf("a DO_NOT_TRUST project below a trusted home: %+v", tr)
	}
	write(`{"` + filepath.Join(e.Dir, "x") + `":"TRUST_PARENT"}`)
	if tr := geminiTrust(e, Project, "", nil); !tr.OK {
		t.Errorf("TRUST_PARENT of a child: %+v", tr)
	}
	if tr := geminiTrust(e, User, "", nil); !tr.OK {
		t.Errorf("one trusted folder, user scope: %+v", tr)
	}
	write(`{}`)
	tr := geminiTrust(e, User, "", nil)
	if tr.OK || tr.Fix == "" || filepath.IsAbs(tr.Fix) || strings.Contains(tr.Fix, e.Home) {
		t.Errorf("no trusted folder, user scope: %+v", tr)
	}
}
