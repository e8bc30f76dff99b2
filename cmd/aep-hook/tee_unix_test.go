//go:build unix

package main

import (
	"context"
	"os/exec"
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
