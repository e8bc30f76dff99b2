package shim

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sweepEnv makes the test binary a sweeper of its own (see init): another
// process sweeping the test agent's state files under a folder, which
// prints how many it removed.
const sweepEnv = "AEP_SHIM_TEST_SWEEP"

func init() {
	dir := os.Getenv(sweepEnv)
	if dir == "" {
		return
	}
	n := (&FileStore{Dir: dir}).Sweep("test-agent", time.Hour, 100)
	os.Stdout.WriteString(strconv.Itoa(n))
	os.Exit(0)
}

// onOpen sets openedUnlocked to fn for the test, calling fn only for path
// and never from within itself (fn may sweep, which opens the path too).
func onOpen(t *testing.T, path string, fn func()) {
	t.Helper()
	inside := false
	openedUnlocked = func(p string) {
		if p != path || inside {
			return
		}
		inside = true
		defer func() { inside = false }()
		fn()
	}
	t.Cleanup(func() { openedUnlocked = nil })
}

// idle makes the file at path look untouched for two days, so a sweep
// takes it.
func idle(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// stored is the table entry k of the state file now at the session's
// path, "" when there is none.
func stored(t *testing.T, dir string) string {
	t.Helper()
	st, _, err := (&FileStore{Dir: dir}).Peek("test-agent", "s")
	if err != nil {
		t.Fatal(err)
	}
	return st.Table.Entries["k"]
}

// setEntry is a transaction that stores v as the table entry k.
func setEntry(v string) func(*Tx) error {
	return func(tx *Tx) error {
		tx.State.Table.Entries = map[string]string{"k": v}
		return nil
	}
}

// TestSweptBeforeLock: a state file swept between a writer's open and its
// lock (by this process or another) is not written as an unlinked file:
// the writer's update is on the file at the path. A path taken away at
// every open gives a StateError after a bounded number of tries.
func TestSweptBeforeLock(t *testing.T) {
	sweepHere := func(t *testing.T, dir string) int {
		return (&FileStore{Dir: dir}).Sweep("test-agent", time.Hour, 100)
	}
	sweepThere := func(t *testing.T, dir string) int {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), sweepEnv+"="+dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the sweeper: %v", err)
		}
		n, err := strconv.Atoi(string(out))
		if err != nil {
			t.Fatalf("the sweeper said %q", out)
		}
		return n
	}
	cases := []struct {
		name  string
		sweep func(*testing.T, string) int
		every bool // sweep at every open, not only the first
	}{
		{"swept by this process", sweepHere, false},
		{"swept by another process", sweepThere, false},
		{"swept at every open", sweepHere, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := (&FileStore{Dir: dir}).Locked("test-agent", "s", setEntry("old")); err != nil {
				t.Fatal(err)
			}
			_, path := (&FileStore{Dir: dir}).paths("test-agent", "s")
			sweeps := 0
			onOpen(t, path, func() {
				if sweeps > 0 && !c.every {
					return
				}
				sweeps++
				idle(t, path)
				if n := c.sweep(t, dir); n != 1 {
					t.Fatalf("the sweep removed %d state files, want 1", n)
				}
			})
			// A store of its own, as a hook process has: nothing kept open.
			err := (&FileStore{Dir: dir}).Locked("test-agent", "s", setEntry("new"))
			openedUnlocked = nil
			if c.every {
				var se *StateError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), "removed or replaced") {
					t.Fatalf("Locked: %v, want a StateError saying the file kept going", err)
				}
				if sweeps != openAttempts {
					t.Errorf("%d opens, want %d", sweeps, openAttempts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := stored(t, dir); got != "new" {
				t.Errorf("the state file at the path holds %q, want the update %q", got, "new")
			}
		})
	}
}

// TestSweptEveryOpenEmitter: a session whose state file is taken away at
// every open still gets its event written, through the unlocked lane,
// with the reason reported (the hook records it for doctor).
func TestSweptEveryOpenEmitter(t *testing.T) {
	home := t.TempDir()
	emit(t, fileEmitterFresh(home), moment)
	_, path := (&FileStore{Dir: filepath.Join(home, "state")}).paths("test-agent", "s")
	onOpen(t, path, func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	})
	res := emit(t, fileEmitterFresh(home), moment)
	if res.Unlocked == nil || !strings.Contains(res.Unlocked.Error(), "removed or replaced") {
		t.Errorf("Unlocked = %v, want the reason", res.Unlocked)
	}
	ps := logPositions(t, (&JSONL{Root: filepath.Join(home, "logs")}).Path("test-agent", "s"))
	if len(ps) != 2 {
		t.Fatalf("%d events in the log, want 2", len(ps))
	}
	increasing(t, ps)
}

// fileEmitterFresh is fileEmitter as a hook process has it: a store and a
// log of its own, with nothing kept open from an earlier write.
func fileEmitterFresh(home string) *Emitter {
	e, _, _ := fileEmitter(home, 0)
	return e
}

// TestLogTakenBeforeLock: a log removed, rotated or replaced between a
// writer's open and its lock gets nothing more; the lines are in the
// file at the path.
func TestLogTakenBeforeLock(t *testing.T) {
	cases := []struct {
		name string
		take func(p string) error
	}{
		{"removed", os.Remove},
		{"rotated", func(p string) error { return os.Rename(p, p+".1") }},
		{"replaced", func(p string) error {
			if err := os.WriteFile(p+".new", []byte("other\n"), 0o600); err != nil {
				return err
			}
			return os.Rename(p+".new", p)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			p := (&JSONL{Root: root}).Path("a", "s")
			if err := (&JSONL{Root: root}).Write("a", "s", [][]byte{[]byte("first\n")}); err != nil {
				t.Fatal(err)
			}
			once := false
			onOpen(t, p, func() {
				if once {
					return
				}
				once = true
				if err := c.take(p); err != nil {
					t.Fatal(err)
				}
			})
			if err := (&JSONL{Root: root}).Write("a", "s", [][]byte{[]byte("second\n")}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(b, []byte("second\n")) {
				t.Errorf("the log at the path holds %q, want the line at its end", b)
			}
			if b, err := os.ReadFile(p + ".1"); err == nil && bytes.Contains(b, []byte("second")) {
				t.Error("the rotated log was written to")
			}
		})
	}
}

// TestLogTakenEveryOpen: a log taken away at every open is not written
// unlinked: the write fails with the lines counted as lost and the reason,
// which the hook records for doctor.
func TestLogTakenEveryOpen(t *testing.T) {
	root := t.TempDir()
	p := (&JSONL{Root: root}).Path("a", "s")
	opens := 0
	onOpen(t, p, func() {
		opens++
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	})
	err := (&JSONL{Root: root}).Write("a", "s", [][]byte{[]byte("one\n"), []byte("two\n")})
	if Lost(err, 2) != 2 || !strings.Contains(err.Error(), "removed or replaced") {
		t.Errorf("Write: %v, want both lines lost and the reason", err)
	}
	if opens != openAttempts {
		t.Errorf("%d opens, want %d", opens, openAttempts)
	}
}

// TestSweepChecksPath: a sweep that locks a state file another sweep has
// already removed does not remove the file a writer made at the path
// since, which the lock it holds does not guard.
func TestSweepChecksPath(t *testing.T) {
	dir := t.TempDir()
	if err := (&FileStore{Dir: dir}).Locked("test-agent", "s", setEntry("old")); err != nil {
		t.Fatal(err)
	}
	_, path := (&FileStore{Dir: dir}).paths("test-agent", "s")
	idle(t, path)
	once := false
	onOpen(t, path, func() {
		if once {
			return
		}
		once = true
		// Another sweep removes the file this one has open, and a
		// writer starts the session again at the path.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := (&FileStore{Dir: dir}).Locked("test-agent", "s", setEntry("fresh")); err != nil {
			t.Fatal(err)
		}
	})
	if n := (&FileStore{Dir: dir}).Sweep("test-agent", time.Hour, 100); n != 0 {
		t.Errorf("the sweep removed %d files, want none", n)
	}
	openedUnlocked = nil
	if got := stored(t, dir); got != "fresh" {
		t.Errorf("the state file at the path holds %q, want %q", got, "fresh")
	}
}

// TestSweepHonoursLock: a state file locked by a writer in this process
// is not swept by another process, however idle it looks.
func TestSweepHonoursLock(t *testing.T) {
	dir := t.TempDir()
	_, path := (&FileStore{Dir: dir}).paths("test-agent", "s")
	err := (&FileStore{Dir: dir}).Locked("test-agent", "s", func(tx *Tx) error {
		setEntry("kept")(tx)
		if err := tx.Save(); err != nil {
			return err
		}
		idle(t, path)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), sweepEnv+"="+dir)
		out, err := cmd.Output()
		if err != nil {
			return err
		}
		if string(out) != "0" {
			t.Errorf("the other process swept %s state files of a locked session", out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := stored(t, dir); got != "kept" {
		t.Errorf("the state file at the path holds %q, want %q", got, "kept")
	}
}

// TestFallbackSweptBeforeLock: the lock that serialises writes through
// Unlocked, swept between its open and its lock, is taken on the file at
// its path, so the next such writer waits for it.
func TestFallbackSweptBeforeLock(t *testing.T) {
	dir := t.TempDir()
	fs := &FileStore{Dir: dir}
	if err := fs.Unlocked("test-agent", "s", func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	d, _ := fs.paths("test-agent", "s")
	path := filepath.Join(d, "s.fallback")
	once := false
	onOpen(t, path, func() {
		if once {
			return
		}
		once = true
		idle(t, path)
		if n := fs.Sweep("test-agent", time.Hour, 100); n != 1 {
			t.Fatalf("the sweep removed %d files, want 1", n)
		}
	})
	err := fs.Unlocked("test-agent", "s", func(*Tx) error {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if ok, err := TryLockFile(f); ok || err != nil {
			t.Errorf("the fallback lock at the path is free while a writer holds it (%v)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
