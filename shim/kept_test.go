package shim

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// writeEnv makes the test binary a writer of its own (see init): another
// process appending moments to the session of a home.
const writeEnv = "AEP_SHIM_TEST_WRITE"

func init() {
	home := os.Getenv(writeEnv)
	if home == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv(writeEnv + "_N"))
	e, _, _ := fileEmitter(home, 0)
	for range n {
		if _, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(moment)}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
	}
	os.Exit(0)
}

// TestKeptNotLocked: between writes, the session's files are open but not
// locked, so another writer takes their locks at once.
func TestKeptNotLocked(t *testing.T) {
	if !keepOpen {
		t.Skip("files are not kept open here")
	}
	home := t.TempDir()
	e, fs, log := fileEmitter(home, 0)
	emit(t, e, moment)
	_, statePath := fs.paths("test-agent", "s")
	if n := len(fs.kept.files) + len(log.kept.files); n != 2 {
		t.Fatalf("%d files kept, want the state and the log", n)
	}
	for _, p := range []string{statePath, log.Path("test-agent", "s")} {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := TryLockFile(f); !ok || err != nil {
			t.Errorf("%s: lock held between writes (%v)", p, err)
		}
		f.Close()
	}
}

// TestKeptOtherProcess: a long-running emitter keeping its files open and
// another process writing the same session at the same time, in turns and
// overlapping: every event is in the log once, in order, at a distinct
// position.
func TestKeptOtherProcess(t *testing.T) {
	home := t.TempDir()
	e, _, log := fileEmitter(home, 0)
	const rounds, each = 4, 20
	for range rounds {
		emit(t, e, moment)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writeEnv+"="+home, writeEnv+"_N="+strconv.Itoa(each))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for range each {
			emit(t, e, moment)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the other writer: %v: %s", err, stderr.Bytes())
		}
	}
	ps := logPositions(t, log.Path("test-agent", "s"))
	if want := rounds * (1 + 2*each); len(ps) != want {
		t.Fatalf("%d events, want %d", len(ps), want)
	}
	distinct(t, ps)
	increasing(t, ps)
}

// TestKeptSharedEmitter: goroutines of one process writing one session
// through one emitter each lock with a descriptor of their own, so they
// still exclude each other.
func TestKeptSharedEmitter(t *testing.T) {
	home := t.TempDir()
	e, _, log := fileEmitter(home, 0)
	const workers, each = 4, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				if _, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(moment)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	ps := logPositions(t, log.Path("test-agent", "s"))
	if len(ps) != workers*each {
		t.Fatalf("%d events, want %d", len(ps), workers*each)
	}
	distinct(t, ps)
	increasing(t, ps)
}

// TestKeptReplaced: a state file swept and a log rotated while their
// descriptors are kept: the next write goes to the files now at the paths,
// the rotated log gets nothing more and the positions still move on.
func TestKeptReplaced(t *testing.T) {
	home := t.TempDir()
	e, fs, log := fileEmitter(home, 0)
	emit(t, e, moment)
	_, statePath := fs.paths("test-agent", "s")
	p := log.Path("test-agent", "s")
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	rotated, _ := os.ReadFile(p + ".1")
	emit(t, e, moment)
	if b, _ := os.ReadFile(p + ".1"); !bytes.Equal(b, rotated) {
		t.Error("a rotated log was written to")
	}
	if len(logPositions(t, p)) != 1 {
		t.Error("the new log does not hold the event")
	}
	before := append(logPositions(t, p+".1"), logPositions(t, p)...)
	if err := os.Remove(statePath); err != nil {
		t.Fatal(err)
	}
	emit(t, e, moment)
	if _, err := os.Stat(statePath); err != nil {
		t.Errorf("the swept state was not written again: %v", err)
	}
	ps := append(before, logPositions(t, p)[1:]...)
	distinct(t, ps)
	increasing(t, ps)
}

// TestWriteJoined: lines written from the buffer they lie in make the same
// log as lines joined by the log itself, whether they fit one append or
// several and whether the log ended inside a line.
func TestWriteJoined(t *testing.T) {
	line := func(n int, c byte) []byte { return append(bytes.Repeat([]byte{c}, n-1), '\n') }
	cases := map[string][][]byte{
		"one":     {line(10, 'a')},
		"few":     {line(10, 'a'), line(20, 'b'), line(5, 'c')},
		"appends": {line(maxWrite/2, 'a'), line(maxWrite/2, 'b'), line(maxWrite/3, 'c'), line(10, 'd'), line(maxWrite+7, 'e'), line(3, 'f')},
	}
	for name, lines := range cases {
		for _, torn := range []bool{false, true} {
			t.Run(name+"/torn="+strconv.FormatBool(torn), func(t *testing.T) {
				var logs [2][]byte
				for i := range logs {
					home := t.TempDir()
					j := &JSONL{Root: home}
					p := j.Path("a", "s")
					if torn {
						if err := os.MkdirAll(home+"/a", 0o700); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(p, []byte(`{"cut`), 0o600); err != nil {
							t.Fatal(err)
						}
					}
					var err error
					if i == 0 {
						err = j.Write("a", "s", lines)
					} else {
						err = Sinks{j}.writeJoined("a", "s", lines, bytes.Join(lines, nil))
					}
					if err != nil {
						t.Fatal(err)
					}
					logs[i], _ = os.ReadFile(p)
				}
				if !bytes.Equal(logs[0], logs[1]) {
					t.Errorf("joined log differs: %d bytes against %d", len(logs[1]), len(logs[0]))
				}
			})
		}
	}
}

// TestStateShrinks: a state rewritten shorter than the file it replaces,
// in a later transaction or in the same one saved twice, leaves nothing of
// the longer one behind (the file is cut only when the state shrinks).
func TestStateShrinks(t *testing.T) {
	fs := &FileStore{Dir: t.TempDir()}
	long := strings.Repeat("x", 300)
	steps := []struct {
		name  string
		saves []string // the entry saved by each Save of one transaction
	}{
		{"grows", []string{long}},
		{"shrinks", []string{"y"}},
		{"grows then shrinks in one", []string{long, "z"}},
	}
	for _, step := range steps {
		err := fs.Locked("a", "s", func(tx *Tx) error {
			for _, v := range step.saves {
				tx.State.Table.Entries = map[string]string{"k": v}
				if err := tx.Save(); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		st, _, err := fs.Peek("a", "s")
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got, want := st.Table.Entries["k"], step.saves[len(step.saves)-1]; got != want {
			t.Errorf("%s: stored %q, want %q", step.name, got, want)
		}
	}
}
