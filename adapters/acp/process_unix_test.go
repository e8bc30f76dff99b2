//go:build unix

package acp_test

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/acp"
)

// dieBy ends the stub by signal number n the way a killed agent ends.
func dieBy(n string) {
	sig, _ := strconv.Atoi(n)
	signal.Reset()
	syscall.Kill(os.Getpid(), syscall.Signal(sig))
	time.Sleep(time.Minute)
	os.Exit(98)
}

func reraise(n int) { acp.Reraise(syscall.Signal(n)) }

// TestTeeSignalDeath: an agent killed by a signal is reported as that
// signal, not only as 128+N.
func TestTeeSignalDeath(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			tee := &acp.Tee{
				Command: []string{os.Args[0]},
				Env:     append(os.Environ(), roleEnv+"=die", dirEnv+"="+t.TempDir(), raiseEnv+"="+strconv.Itoa(int(sig))),
				Stderr:  os.Stderr,
			}
			res, err := tee.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Signal != sig || res.ExitCode != 128+int(sig) {
				t.Errorf("signal %v exit %d, want %v and %d", res.Signal, res.ExitCode, sig, 128+int(sig))
			}
		})
	}
	t.Run("orphaning launcher", func(t *testing.T) {
		res, _, _ := orphanTee(t, "stubborn", 50*time.Millisecond, raiseEnv+"="+strconv.Itoa(int(syscall.SIGTERM)))
		if res.Signal != syscall.SIGTERM {
			t.Errorf("signal %v, want SIGTERM", res.Signal)
		}
	})
}

// TestReraise: the re-raising process ends with the very wait status of a
// process killed by the signal, whatever the Go runtime would otherwise
// do with it (ignore it, or turn it into a crash report).
func TestReraise(t *testing.T) {
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL}
	if runtime.GOOS == "linux" {
		sigs = append(sigs, syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGPIPE, syscall.SIGALRM)
	}
	for _, sig := range sigs {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), roleEnv+"=reraise", dirEnv+"="+t.TempDir(), raiseEnv+"="+strconv.Itoa(int(sig)),
				"GOTRACEBACK=none")
			err := cmd.Run()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("%v: wait status %v (%v), want death by %v", sig, cmd.ProcessState, err, sig)
			}
		})
	}
}
