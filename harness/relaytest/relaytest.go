// Package relaytest is the process machinery the consumer packages' tests
// share: the aep-hook binary built once per test package, and long-running
// aep-hook processes (the relay above all) started on an ephemeral port,
// watched through their stderr and stopped when the test ends. Only tests
// import it; it is never linked into the binary.
package relaytest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/internal/secretfile"
)

// Race says whether the tests run under the race detector. The binaries
// they drive are then built with it too, so that it sees the processes'
// own goroutines, which are what those tests exercise.
const Race = race

// Main runs a test package around binaries built once: it makes a
// temporary folder whose name starts with prefix, hands it to build, runs
// the tests, removes the folder and exits with the tests' code. A failed
// build is printed and exits 1 before any test runs.
func Main(m *testing.M, prefix string, build func(dir string) error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Build compiles the main package pkg (a path as the go tool takes it,
// relative to the test's directory) to out, with the race detector when
// race is set. Its error carries the go tool's output.
func Build(out, pkg string, race bool) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	if b, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// ErrNotStopped is Stop's answer when the process outlasted its bound and
// was killed.
var ErrNotStopped = errors.New("did not stop within its bound; killed")

// Proc is one running process whose stderr the test watches.
type Proc struct {
	// Cmd is the started command: a test reaches its Process to signal it.
	Cmd *exec.Cmd

	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
	err    error // the exit error, set before done is closed
}

// stderrWriter collects a Proc's stderr under its lock: the process writes
// while the test reads.
type stderrWriter struct{ p *Proc }

func (w stderrWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stderr.Write(b)
}

// Start runs bin with args, env being the process's whole environment
// (nil: this process's), and collects its stderr; it fails t when the
// process cannot start. Nothing stops it: the caller does, in a cleanup
// (Stop, Check), or through StartRelay.
func Start(t testing.TB, bin string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{done: make(chan struct{})}
	p.Cmd = exec.Command(bin, args...)
	p.Cmd.Env = env
	p.Cmd.Stderr = stderrWriter{p}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	return p
}

// Output is what the process has written to stderr so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Exited is closed once the process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns its exit error (nil for
// a clean exit). It may be called any number of times.
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

// Await waits up to within for re to match what the process has written
// to stderr and returns the submatches. It fails t, naming the process
// name, when the process exits first or within passes.
func (p *Proc) Await(t testing.TB, name string, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.Output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited: %v\n%s", name, p.err, p.Output())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("no %s from %s:\n%s", re, name, p.Output())
	return nil
}

// Stop sends sig and waits up to within for the process to exit, killing
// it after that. It returns the exit error, or ErrNotStopped when the
// process had to be killed; a process already gone returns its exit error
// at once.
func (p *Proc) Stop(sig os.Signal, within time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	p.Cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return p.err
	case <-time.After(within):
		p.Cmd.Process.Kill()
		<-p.done
		return ErrNotStopped
	}
}

// Kill ends the process with SIGKILL and waits for it to exit.
func (p *Proc) Kill() {
	p.Cmd.Process.Kill()
	<-p.done
}

// Check fails t when the process's stderr holds a data race or a panic:
// a failure inside the process is the test's failure even when what the
// test saw looked right. name names the process in the failure.
func (p *Proc) Check(t testing.TB, name string) {
	t.Helper()
	if out := p.Output(); strings.Contains(out, "DATA RACE") || strings.Contains(out, "panic:") {
		t.Errorf("%s reported:\n%s", name, out)
	}
}

// ServingLine matches the line the relay prints once it listens; its one
// submatch is the address it serves on (HOST:PORT).
var ServingLine = regexp.MustCompile(`serving http://(\S+) `)

// Relay is how StartRelay runs `aep-hook relay`.
type Relay struct {
	// Bin is the aep-hook binary.
	Bin string
	// Env is the relay's whole environment (nil: this process's).
	Env []string
	// Listen is the address it listens on; empty means 127.0.0.1:0, an
	// ephemeral port.
	Listen string
	// Args follow --listen on its command line.
	Args []string
	// Wait bounds the wait for its serving line and for it to stop when
	// the test ends: a failure bound against a hang, never a measure of
	// speed.
	Wait time.Duration
	// MustStop fails the test when the relay outlasts Wait after SIGTERM
	// at the end of the test (it is killed either way).
	MustStop bool
}

// UserToken is the user's own token under home ($AEP_HOME/token), the
// one a relay started without --tokens accepts (the relay makes it at
// start): what a test's client presents as that user's tools do. It fails
// t when the file is missing or unsafe.
func UserToken(t testing.TB, home string) string {
	t.Helper()
	tok, err := secretfile.Read(filepath.Join(home, secretfile.TokenFile))
	if err != nil {
		t.Fatalf("the user token: %v", err)
	}
	return tok
}

// StartRelay starts the relay r describes and waits for its serving line,
// returning the process and the address it serves on. When the test ends
// the relay is stopped with SIGTERM (it drains) and the test fails if its
// stderr reports a data race or a panic.
func StartRelay(t testing.TB, r Relay) (*Proc, string) {
	t.Helper()
	listen := r.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	p := Start(t, r.Bin, r.Env, append([]string{"relay", "--listen", listen}, r.Args...)...)
	t.Cleanup(func() {
		if err := p.Stop(syscall.SIGTERM, r.Wait); errors.Is(err, ErrNotStopped) && r.MustStop {
			t.Errorf("the relay did not stop")
		}
		p.Check(t, "the relay")
	})
	return p, p.Await(t, "relay", ServingLine, r.Wait)[1]
}
