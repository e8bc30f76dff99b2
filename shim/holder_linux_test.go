package shim

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProcState reads the state after the last ')' of a /proc stat line,
// whatever the command name holds, and tells a gone process ('?') from a
// line that does not parse (0).
func TestProcState(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, stat string
		want       byte
	}{
		{"running", "42 (aep-hook) R 1 42 42 0 -1", 'R'},
		{"stopped", "42 (aep-hook) T 1 42 42 0 -1", 'T'},
		{"traced", "42 (aep-hook) t 1 42 42 0 -1", 't'},
		{"zombie leader", "42 (aep-hook) Z 1 42 42 0 -1", 'Z'},
		{"parens in the name", "42 (a) T (b)) S 1 42", 'S'},
		{"no state", "42 (aep-hook)", 0},
		{"no name", "42 aep-hook S", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "stat")
			if err := os.WriteFile(path, []byte(c.stat), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := procState(path); got != c.want {
				t.Errorf("procState(%q) = %q, want %q", c.stat, got, c.want)
			}
		})
	}
	if got := procState(filepath.Join(dir, "gone")); got != '?' {
		t.Errorf("a missing stat file gives %q, want '?'", got)
	}
}

// TestHolderStoppedSelf: a lock held by this (running) process is not a
// stopped holder's; the test cannot fail by the machine's load, as the
// holder is the test itself.
func TestHolderStoppedSelf(t *testing.T) {
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if stopped, ok := holderStopped(f); ok {
		t.Fatalf("unheld lock: stopped=%v ok=%v, want ok=false", stopped, ok)
	}
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	defer unlockFile(f)
	if stopped, ok := holderStopped(f); !ok || stopped {
		t.Fatalf("held by a running process: stopped=%v ok=%v", stopped, ok)
	}
}
