//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/aep-hook/aep-hook/harness/tmpfs"
	"github.com/aep-hook/aep-hook/shim"
)

// holdLockEnv makes the test binary a process that takes the exclusive
// lock on the named file, says "locked" and waits for its stdin to close:
// a hook stuck while holding a session's lock.
const holdLockEnv = "AEP_TEST_HOLD_LOCK"

func init() {
	path := os.Getenv(holdLockEnv)
	if path == "" {
		return
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil || syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startHolder starts the test binary as a process holding the exclusive
// lock on path until its stdin closes, and returns once it holds it.
func startHolder(t *testing.T, path string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), holdLockEnv+"="+path)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if l, _ := bufio.NewReader(stdout).ReadString('\n'); l != "locked\n" {
		stdin.Close()
		holder.Wait()
		t.Fatalf("holder said %q", l)
	}
	return holder, stdin
}

// statePath is where the binary keeps a session's state under home.
func statePath(home, agent, session string) string {
	return filepath.Join(home, "state", shim.SafeName(agent), shim.SafeName(session)+".state")
}

// positionsOf reads a session's log (every line intact) as (epoch, seq)
// positions, exactly (not through float64).
func positionsOf(t *testing.T, path string) [][2]int64 {
	t.Helper()
	readLog(t, path) // every line intact
	b, _ := os.ReadFile(path)
	var ps [][2]int64
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Epoch, Seq *int64 }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Epoch == nil || e.Seq == nil {
			t.Fatalf("event without a position: %s", l)
		}
		ps = append(ps, [2]int64{*e.Epoch, *e.Seq})
	}
	return ps
}

// TestHookStuckLock: with the session's lock held by a stopped process, 20
// hooks used to wait to the deadline and write 0 of 20 events. Each now
// writes its event in a fresh, distinct epoch (AEP-0001 §7: a monotonic
// seed), records that it wrote without the lock, and once the holder is
// gone the next hook continues past all of them.
func TestHookStuckLock(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	env := hookEnv(home, tmp, "AEP_HOOK_DEADLINE=4s")
	if r := runHook(t, env, codexTool("s-stuck", 0), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	holder, stdin := startHolder(t, statePath(home, "codex", "s-stuck"))
	defer func() {
		holder.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		holder.Wait()
	}()
	if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 1; i <= 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := runHook(t, env, codexTool("s-stuck", i), "codex"); r.code != 0 || r.stderr != "" {
				t.Errorf("exit %d stderr %q", r.code, r.stderr)
			}
		}()
	}
	wg.Wait()
	holder.Process.Signal(syscall.SIGCONT)
	stdin.Close()
	holder.Wait()
	if r := runHook(t, env, codexTool("s-stuck", 21), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	ps := positionsOf(t, filepath.Join(home, "logs", "codex", "s-stuck.jsonl"))
	if len(ps) != 22 {
		t.Fatalf("%d events, want 22: %v", len(ps), ps)
	}
	seen := map[[2]int64]bool{}
	for i, p := range ps {
		if seen[p] {
			t.Errorf("position %v used twice", p)
		}
		seen[p] = true
		if i > 0 && i < 21 && (p[0] <= ps[0][0] || p[1] != 0) {
			t.Errorf("event %d at %v, want a fresh epoch", i, p)
		}
		if i > 0 && i < 21 && ps[21][0] <= p[0] {
			t.Errorf("the hook after the holder left, at %v, is not past %v", ps[21], p)
		}
	}
	stages := map[string]int{}
	for _, f := range failuresIn(t, filepath.Join(home, "internal", "errors.jsonl")) {
		stages[f.Stage]++
	}
	if stages["lock"] != 20 || stages["deadline"] != 0 || stages["emit"] != 0 {
		t.Errorf("failures recorded by stage: %v", stages)
	}
}

// TestHookFullDisk: hooks writing to a home on a full disk (a 512 KiB
// tmpfs) leave the log line-clean: a write that ran out of space partway
// is cut back, each event that could not be written is counted in the
// error log (in the temporary folder, the home being full), and once space
// returns the next event is intact (it used to be glued onto a fragment,
// unparseable, and the loss unrecorded).
func TestHookFullDisk(t *testing.T) {
	home := filepath.Join(tmpfs.Mount(t, 512<<10), "home")
	tmp := t.TempDir()
	env := hookEnv(home, tmp, "AEP_CAPTURE=full", roomyDeadline)
	payload := func(i int) []byte {
		return fmt.Appendf(nil, `{"hook_event_name":"PreToolUse","session_id":"s-full","turn_id":"t1","tool_name":"shell","tool_use_id":"call_%d","tool_input":{"command":"%s"}}`, i, strings.Repeat("c", 60<<10))
	}
	if r := runHook(t, env, payload(0), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var st syscall.Statfs_t
	syscall.Statfs(home, &st)
	filler := filepath.Join(home, "filler")
	os.WriteFile(filler, bytes.Repeat([]byte("f"), int(st.Bavail)*int(st.Bsize)-100<<10), 0o600)
	for i := 1; i <= 4; i++ { // room for one more, the rest fail
		if r := runHook(t, env, payload(i), "codex"); r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	}
	os.Remove(filler)
	if r := runHook(t, env, payload(5), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	evs := readLog(t, filepath.Join(home, "logs", "codex", "s-full.jsonl")) // every line intact
	lost := lostIn(t, filepath.Join(home, "internal", "errors.jsonl"), filepath.Join(tmp, "aep-hook-"+strconv.Itoa(os.Getuid()), "errors.jsonl"))
	if len(evs)+lost != 6 || lost == 0 {
		t.Errorf("%d events written and %d counted lost, want 6 in all", len(evs), lost)
	}
	if last := evs[len(evs)-1]; last["type"] != "tool.requested" || !strings.Contains(fmt.Sprint(last["data"]), "call_5") {
		t.Errorf("the event after space returned: %.200v", last)
	}
}

// TestHookLinks: a log or state file replaced by a link is refused rather
// than written through (the state's link makes the hook write without the
// lock, in a fresh epoch; the log's costs the event, counted).
func TestHookLinks(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	env := hookEnv(home, tmp)
	runHook(t, env, codexTool("s-link", 0), "codex")
	target := filepath.Join(t.TempDir(), ".bashrc")
	os.WriteFile(target, []byte("precious\n"), 0o600)
	st := statePath(home, "codex", "s-link")
	os.Remove(st)
	os.Symlink(target, st)
	if r := runHook(t, env, codexTool("s-link", 1), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	logPath := filepath.Join(home, "logs", "codex", "s-link.jsonl")
	if ps := positionsOf(t, logPath); len(ps) != 2 || ps[1][0] <= ps[0][0] {
		t.Errorf("positions %v, want the second in a fresh epoch", ps)
	}
	os.Remove(logPath)
	os.Symlink(target, logPath)
	if r := runHook(t, env, codexTool("s-link", 2), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("written through a link: %q", b)
	}
	if lost := lostIn(t, filepath.Join(home, "internal", "errors.jsonl")); lost != 1 {
		t.Errorf("%d events counted lost, want 1", lost)
	}
}

// TestHookPlantedFallback: a hook whose home cannot be written records its
// failures in $TMPDIR/aep-hook-<uid>. Another user who made that folder
// first, with errors.jsonl a link to the victim's .bashrc, used to get the
// victim's hook to append to it; the folder is now refused unless it is the
// user's own, private and not a link. Run as an unprivileged uid (the test
// runs as root) so the folder can belong to someone else.
func TestHookPlantedFallback(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run the hook as one user beside a folder of another")
	}
	const victim, attacker = 4242, 4343
	world := t.TempDir()
	os.Chmod(world, 0o755)
	os.Chmod(filepath.Dir(world), 0o755)
	hookBin := filepath.Join(world, "aep-hook")
	b, _ := os.ReadFile(bin)
	os.WriteFile(hookBin, b, 0o755)
	victimHome := filepath.Join(world, "victim")
	os.Mkdir(victimHome, 0o755)
	bashrc := filepath.Join(victimHome, ".bashrc")
	os.WriteFile(bashrc, []byte("# precious\n"), 0o644)
	os.Chown(victimHome, victim, victim)
	os.Chown(bashrc, victim, victim)
	tmp := filepath.Join(world, "tmp")
	os.Mkdir(tmp, 0o1777)
	os.Chmod(tmp, 0o1777)
	unwritable := filepath.Join(world, "ro")
	os.Mkdir(unwritable, 0o755) // root's: the victim cannot write its home
	for _, plant := range []struct {
		name  string
		owner int
		mode  os.FileMode
	}{{"another user's", attacker, 0o777}, {"open to all", victim, 0o777}} {
		t.Run(plant.name, func(t *testing.T) {
			dir := filepath.Join(tmp, "aep-hook-"+strconv.Itoa(victim))
			os.RemoveAll(dir)
			os.Mkdir(dir, plant.mode)
			os.Chmod(dir, plant.mode)
			os.Chown(dir, plant.owner, plant.owner)
			os.Symlink(bashrc, filepath.Join(dir, "errors.jsonl"))
			cmd := exec.Command(hookBin, "codex")
			cmd.Env = []string{"AEP_HOME=" + filepath.Join(unwritable, "home"), "TMPDIR=" + tmp, "HOME=" + victimHome, "PATH=" + os.Getenv("PATH")}
			cmd.Stdin = bytes.NewReader([]byte(`{"hook_event_name":`)) // a failure to record
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: victim, Gid: victim}}
			out, err := cmd.CombinedOutput()
			if err != nil || len(out) != 0 {
				t.Fatalf("err %v output %q", err, out)
			}
			if b, _ := os.ReadFile(bashrc); string(b) != "# precious\n" {
				t.Errorf("the victim's .bashrc was appended to: %q", b)
			}
		})
	}
}

// TestHookStateAnomalies: a state file rolled back (it used to hand out
// (0,0) again), an epoch at the int64 maximum (it used to wrap negative)
// and a folder where the state file should be (it used to cost every
// event) never reuse or wrap a position and never cost an event silently.
func TestHookStateAnomalies(t *testing.T) {
	run := func(t *testing.T, env []string, session string, i int) {
		t.Helper()
		if r := runHook(t, env, codexTool(session, i), "codex"); r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	}
	t.Run("rolled back", func(t *testing.T) {
		home := t.TempDir()
		env := hookEnv(home, t.TempDir())
		for i := range 3 {
			run(t, env, "s", i)
		}
		os.WriteFile(statePath(home, "codex", "s"), []byte(`{"epoch":0,"next":0,"refs":{},"table":{}}`), 0o600)
		run(t, env, "s", 3)
		ps := positionsOf(t, filepath.Join(home, "logs", "codex", "s.jsonl"))
		if len(ps) != 4 || ps[3][1] != 0 || ps[3][0] <= ps[2][0] {
			t.Errorf("positions %v, want the fourth at seq 0 of a higher epoch", ps)
		}
	})
	t.Run("epoch at max", func(t *testing.T) {
		home := t.TempDir()
		env := hookEnv(home, t.TempDir())
		run(t, env, "s", 0)
		logPath := filepath.Join(home, "logs", "codex", "s.jsonl")
		fi, _ := os.Stat(logPath)
		os.WriteFile(statePath(home, "codex", "s"), fmt.Appendf(nil, `{"epoch":%d,"next":%d,"log":%d}`, int64(math.MaxInt64), int64(math.MaxInt64-1), fi.Size()), 0o600)
		run(t, env, "s", 1) // the last position there is
		run(t, env, "s", 2) // none left
		os.Remove(statePath(home, "codex", "s"))
		run(t, env, "s", 3) // none left after the log's last either
		ps := positionsOf(t, logPath)
		if len(ps) != 2 || ps[1] != [2]int64{math.MaxInt64, math.MaxInt64 - 1} {
			t.Errorf("positions %v", ps)
		}
		if lost := lostIn(t, filepath.Join(home, "internal", "errors.jsonl")); lost != 2 {
			t.Errorf("%d events counted lost, want 2", lost)
		}
	})
	t.Run("folder at the state path", func(t *testing.T) {
		home := t.TempDir()
		env := hookEnv(home, t.TempDir())
		os.MkdirAll(statePath(home, "codex", "s"), 0o700)
		for i := range 3 {
			run(t, env, "s", i)
		}
		ps := positionsOf(t, filepath.Join(home, "logs", "codex", "s.jsonl"))
		if len(ps) != 3 || ps[0] == ps[1] || ps[1] == ps[2] {
			t.Errorf("positions %v", ps)
		}
	})
}
