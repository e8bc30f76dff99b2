package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// StartResult says whether an agent's CLI starts on this machine.
type StartResult struct {
	OK      bool
	Binary  string // the path run
	Version string // the first line it printed, when it started
	Detail  string // why it did not
}

// startTimeout bounds one agent CLI's --version.
const startTimeout = 15 * time.Second

// checkStarts runs, at once, the CLI of every wired agent found on PATH
// with --version.
func checkStarts(reports []AgentReport, o Options) {
	var wg sync.WaitGroup
	for i := range reports {
		r := &reports[i]
		if len(r.Scopes) == 0 || r.Presence.Binary == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := Starts(r.Presence.Binary, o)
			r.Start = &res
		}()
	}
	wg.Wait()
}

// Starts runs bin --version in the probe environment and reports whether
// it ran: an agent whose CLI cannot start (its runtime too old, a broken
// install) runs no hook, whatever its settings say.
func Starts(bin string, o Options) StartResult {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Dir = o.Env.Dir
	cmd.Env = o.ProbeEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := StartResult{Binary: bin}
	if err != nil {
		why := err.Error()
		if ctx.Err() != nil {
			why = fmt.Sprintf("no answer within %s", startTimeout)
		}
		out := strings.TrimSpace(stderr.String())
		if out == "" {
			out = strings.TrimSpace(stdout.String())
		}
		if out != "" {
			why += ": " + firstLine(out)
		}
		res.Detail = why
		return res
	}
	res.OK = true
	res.Version = firstLine(strings.TrimSpace(stdout.String() + "\n" + stderr.String()))
	return res
}
