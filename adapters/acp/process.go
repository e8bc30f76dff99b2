package acp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// agent is the spawned agent process with the tee's ends of its stdio.
// The pipes are the tee's own (not exec's StdinPipe/StdoutPipe), so that
// waiting for the process never waits on them: an agent that leaves a
// worker behind holding its stdout (Qwen Code's launcher re-spawns itself
// sharing stdio) is seen to exit when it exits.
type agent struct {
	cmd    *exec.Cmd
	stdin  *os.File // the write end of the agent's stdin
	stdout *os.File // the read end of the agent's stdout
	stderr *os.File // the read end of its stderr; nil when it inherits the tee's file
	// halts are the relays' (by Direction: to the agent's stdin, from its
	// stdout), fired before the tee closes the end a relay may be waiting
	// on: the close would otherwise wait for that wait.
	halts [2]*halt

	closeIn sync.Once
}

// spawn starts the tee's agent command. The agent's stdin and stdout are
// pipes to the tee; its stderr is the tee's Stderr file itself when that is
// an *os.File, else a pipe the caller copies.
func spawn(t *Tee) (*agent, int, error) {
	name := t.Command[0]
	cmd := exec.Command(name, t.Command[1:]...)
	cmd.Env, cmd.Dir = t.Env, t.Dir
	a := &agent{cmd: cmd}
	var theirs []*os.File // the child's ends, closed here once it has them
	defer func() {
		for _, f := range theirs {
			f.Close()
		}
	}()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, ExitCannotRun, fmt.Errorf("acp tee: agent stdin: %w", err)
	}
	theirs = append(theirs, inR)
	a.stdin, cmd.Stdin = inW, inR
	outR, outW, err := os.Pipe()
	if err != nil {
		inW.Close()
		return nil, ExitCannotRun, fmt.Errorf("acp tee: agent stdout: %w", err)
	}
	theirs = append(theirs, outW)
	a.stdout, cmd.Stdout = outR, outW
	switch f, ok := t.Stderr.(*os.File); {
	case ok:
		cmd.Stderr = f
	case t.Stderr != nil:
		errR, errW, err := os.Pipe()
		if err != nil {
			a.release()
			return nil, ExitCannotRun, fmt.Errorf("acp tee: agent stderr: %w", err)
		}
		theirs = append(theirs, errW)
		a.stderr, cmd.Stderr = errR, errW
	}
	if err := cmd.Start(); err != nil {
		a.release()
		code := ExitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = ExitNotFound
		}
		return nil, code, fmt.Errorf("acp tee: start %s: %w", name, err)
	}
	return a, 0, nil
}

// closeStdin gives the agent (and whatever shares its stdin) end of input,
// once, as an editor does when it is done with an agent.
func (a *agent) closeStdin() {
	a.closeIn.Do(func() {
		a.halts[ClientToAgent].fire()
		a.stdin.Close()
	})
}

// closeStdout closes the tee's end of the agent's stdout, which ends its
// relay.
func (a *agent) closeStdout() {
	a.halts[AgentToClient].fire()
	a.stdout.Close()
}

// release closes the tee's ends of the pipes.
func (a *agent) release() {
	a.closeStdin()
	a.closeStdout()
	if a.stderr != nil {
		a.stderr.Close()
	}
}

// copyStderr relays the agent's stderr pipe to w until it ends, closing
// done then.
func (a *agent) copyStderr(w io.Writer, done chan<- struct{}) {
	defer close(done)
	if a.stderr != nil {
		io.Copy(w, a.stderr)
	}
}
