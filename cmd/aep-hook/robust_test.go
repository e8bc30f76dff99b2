package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ignoredSignals returns the signal mask a Linux process ignores (SigIgn).
func ignoredSignals(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return m, err == nil
		}
	}
	return 0, false
}

// waitHolding waits until the hook process ignores SIGPIPE, which it does
// right after it starts holding the termination signals (the Go runtime
// catches every signal from the start, so the caught mask says nothing): a
// signal sent then is one the hook has chosen to handle. A hook that never
// holds them is given up on after a while (a safety net, not a threshold).
func waitHolding(t *testing.T, pid int) {
	t.Helper()
	const want = 1 << (uint(syscall.SIGPIPE) - 1)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for giveUp := time.Now().Add(5 * time.Second); time.Now().Before(giveUp); <-tick.C {
		m, ok := ignoredSignals(pid)
		if !ok {
			t.Fatal("process gone before it held its signals")
		}
		if m&want != 0 {
			return
		}
	}
}

// TestHookSurvivesTermination: an agent that sends its hook SIGTERM (Claude
// Code does, about 50 ms after starting a StopFailure hook), SIGINT or SIGHUP
// while the payload is still arriving still gets the moment recorded, the
// neutral reply, exit status 0 and nothing on stderr.
func TestHookSurvivesTermination(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the signal mask from /proc")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			home := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "codex")
			cmd.Env = hookEnv(home, t.TempDir(), "AEP_HOOK_DEADLINE=10s")
			w, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitHolding(t, cmd.Process.Pid)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			w.Write(codexTool("s-sig", 1))
			w.Close()
			err = cmd.Wait()
			if err != nil || out.Len() != 0 || errb.Len() != 0 {
				t.Fatalf("wait %v stdout %q stderr %q", err, out.String(), errb.String())
			}
			if evs := readLog(t, filepath.Join(home, "logs", "codex", "s-sig.jsonl")); len(evs) != 1 {
				t.Fatalf("events %v", evs)
			}
		})
	}
}
