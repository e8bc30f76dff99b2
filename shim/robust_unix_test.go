//go:build unix

package shim

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
)

// holdLockEnv makes the test binary a process that locks the named file,
// says "locked" and waits for its stdin to close.
const holdLockEnv = "AEP_SHIM_TEST_HOLD_LOCK"

func init() {
	if path := os.Getenv(holdLockEnv); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil || lockFile(f) != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		bufio.NewReader(os.Stdin).ReadString(0)
		os.Exit(0)
	}
}

// holdStopped has another process take the lock on path and stops it
// (SIGSTOP): a holder that will not let go. release lets it go.
func holdStopped(t *testing.T, path string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+path)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "locked\n" {
		t.Fatalf("holder said %q", l)
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	var once sync.Once
	release = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGCONT)
			in.Close()
			cmd.Wait()
		})
	}
	t.Cleanup(release)
	return release
}

// TestStuckLock: with the session's lock held by a stopped process, writes
// go through in fresh epochs (seeded from the clock, distinct, above the
// stored ones); once the lock is free again the locked writers continue
// past them.
func TestStuckLock(t *testing.T) {
	home := t.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs"), LockWait: 20 * time.Millisecond}
	fs := &FileStore{Dir: filepath.Join(home, "state"), Log: log, LockWait: 20 * time.Millisecond}
	e := testEmitter(log, fs)
	e.Now = nil // the test clock is not for concurrent use
	emit(t, e, moment)
	_, statePath := fs.paths("test-agent", "s")
	release := holdStopped(t, statePath)
	var wg sync.WaitGroup
	var unlocked atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(moment)})
			if err != nil {
				t.Error(err)
			}
			if res.Unlocked != nil {
				unlocked.Add(1)
			}
		}()
	}
	wg.Wait()
	release()
	emit(t, e, moment)
	ps := logPositions(t, log.Path("test-agent", "s"))
	if len(ps) != 10 || unlocked.Load() != 8 {
		t.Fatalf("%d events, %d unlocked: %v", len(ps), unlocked.Load(), ps)
	}
	distinct(t, ps)
	for _, p := range ps[1:9] {
		if p.Epoch <= ps[0].Epoch || p.Seq != 0 {
			t.Errorf("unlocked write at %v, want a fresh epoch above %v", p, ps[0])
		}
	}
	for _, p := range ps[1:9] {
		if ps[9].Epoch <= p.Epoch {
			t.Errorf("the next locked write %v is not past the unlocked %v", ps[9], p)
		}
	}
}
