//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAcpTeeDiesLikeItsAgent: the editor sees the tee end exactly as the
// agent ended, by the same signal, not by exit 128+N.
func TestAcpTeeDiesLikeItsAgent(t *testing.T) {
	for _, c := range []struct {
		script string
		sig    syscall.Signal
		code   int
	}{
		{"kill -TERM $$", syscall.SIGTERM, -1},
		{"kill -KILL $$", syscall.SIGKILL, -1},
		{"exit 3", 0, 3},
	} {
		t.Run(c.script, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a safety net only
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "acp", "--", "sh", "-c", c.script)
			cmd.Env = hookEnv(t.TempDir(), t.TempDir())
			cmd.Run()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case c.sig != 0 && (!ws.Signaled() || ws.Signal() != c.sig):
				t.Errorf("tee ended %v, want death by %v", cmd.ProcessState, c.sig)
			case c.sig == 0 && (ws.Signaled() || ws.ExitStatus() != c.code):
				t.Errorf("tee ended %v, want exit %d", cmd.ProcessState, c.code)
			}
		})
	}
}

// TestAcpInterruptedTurnInDoctor: a prompt turn the agent dies in is closed
// in the record (run.failed) and doctor names it.
func TestAcpInterruptedTurnInDoctor(t *testing.T) {
	home := doctorHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a safety net only
	defer cancel()
	// The agent reads the editor's prompt and exits without answering it.
	cmd := exec.CommandContext(ctx, bin, "acp", "--", "sh", "-c", "read line; exit 3")
	cmd.Env = append(os.Environ(), "AEP_HOME="+filepath.Join(home, ".aep"))
	// The editor keeps its end open: it is the agent that goes away.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd.Stdin = r
	io.WriteString(w, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s-int","prompt":[{"type":"text","text":"hi"}]}}`+"\n")
	cmd.Run()
	r.Close()
	if cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("tee ended %v, want exit 3", cmd.ProcessState)
	}
	evs := readLog(t, filepath.Join(home, ".aep", "logs", "acp", "s-int.jsonl"))
	if len(evs) != 2 || evs[0]["type"] != "run.started" || evs[1]["type"] != "run.failed" {
		t.Fatalf("log %v, want run.started then run.failed", evs)
	}
	// Doctor names the turn; the agent's crash is not aep-hook's problem.
	var out strings.Builder
	code := run([]string{"aep-hook", "doctor", "--no-probe"}, Streams{In: strings.NewReader(""), Out: &out, Err: &out}, os.Getenv)
	if !strings.Contains(out.String(), "[interrupted]") || code != 0 {
		t.Errorf("doctor exit %d, want 0 and the interrupted turn shown:\n%s", code, out.String())
	}
}
