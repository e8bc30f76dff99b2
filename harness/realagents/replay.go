package realagents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
)

// Replayed is the outcome of one fixture's replay.
type Replayed struct {
	Fixture Fixture
	Logs    []truth.Log
	// Problems are hook-process failures (a non-zero exit, stderr output,
	// a reply that is not the vendor's neutral one, an internal failure
	// recorded) and every truth violation.
	Problems []string
}

// OK reports a replay without problems.
func (r Replayed) OK() bool { return len(r.Problems) == 0 }

// Replay feeds the fixture's firings through the aep-hook binary bin, one
// process per firing in recorded order, with a fresh AEP_HOME under tmp,
// then checks the whole record with truth.Check (schemas may be nil).
func Replay(bin string, fx Fixture, tmp string, schemas *truth.Schemas) Replayed {
	if len(fx.Stream) > 0 {
		return replayStream(bin, fx, tmp, schemas)
	}
	if fx.Scenario.OTel != nil {
		return replayOTel(bin, fx, tmp, schemas)
	}
	res := Replayed{Fixture: fx}
	bad := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	home := filepath.Join(tmp, "aep")
	agent := fx.Scenario.Agent
	vendor, ok := mapping.Lookup(agent)
	if !ok {
		bad("agent %q has no table", agent)
		return res
	}
	env := replayEnv(home, tmp)
	if fx.Scenario.Control != nil {
		res.Problems = append(res.Problems, replayControl(bin, vendor, fx, env, home, tmp, nil)...)
	} else {
		for _, f := range fx.Firings {
			res.Problems = append(res.Problems, replayFiring(bin, vendor, env, f)...)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl")); err == nil {
		bad("internal failures recorded: %s", strings.TrimSpace(string(b)))
	}
	logs, err := ReadLogs(filepath.Join(home, "logs", agent))
	if err != nil {
		bad("%v", err)
	}
	res.Logs = logs
	res.Problems = append(res.Problems, truth.Check(logs, fx.Scenario.Facts, schemas)...)
	return res
}

// replayEnv is the environment of the replay's aep-hook processes, with
// their home in home. A roomy hook deadline: the replay holds the record to
// the truth, and a loaded machine must not decide it by the 750 ms default.
func replayEnv(home, tmp string) []string {
	return []string{"AEP_HOME=" + home, "AEP_HOST=replay-host", "TMPDIR=" + tmp, "PATH=" + os.Getenv("PATH"), "AEP_HOOK_DEADLINE=30s"}
}

// replayFiring feeds one recorded firing to `bin <vendor>` and returns
// what went wrong: a failure, a non-zero exit, stderr output, or a reply
// that is not the vendor's neutral one.
func replayFiring(bin string, vendor mapping.Vendor, env []string, f Firing) []string {
	want := ""
	if vendor.Reply != nil {
		want = string(vendor.Reply(f.Hook()))
	}
	return replayFiringWant(bin, vendor, env, f, want)
}

// replayFiringWant is replayFiring with the reply expected (a held
// firing's answer).
func replayFiringWant(bin string, vendor mapping.Vendor, env []string, f Firing, want string) []string {
	args := append([]string{vendor.Name}, f.Args...)
	if vendor.Transport == mapping.TransportPi {
		args = append([]string{"forward"}, f.Args...) // forward pi --hold
	}
	env = append([]string(nil), env...)
	for k, v := range f.Env {
		env = append(env, k+"="+v)
	}
	out, errOut, code, err := runFiring(bin, args, env, f)
	if err != nil {
		return []string{fmt.Sprintf("firing %d (%s): %v", f.N, f.Hook(), err)}
	}
	var bad []string
	if code != 0 || errOut != "" {
		bad = append(bad, fmt.Sprintf("firing %d (%s): exit %d, stderr %q", f.N, f.Hook(), code, errOut))
	}
	if out != want {
		bad = append(bad, fmt.Sprintf("firing %d (%s): stdout %q, want %q", f.N, f.Hook(), out, want))
	}
	return bad
}

// runFiring runs one hook process. A recorded signal is delivered again
// once the process has read its whole input (so the moment is in hand, as
// it was when the agent signalled).
func runFiring(bin string, args, env []string, f Firing) (stdout, stderr string, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	in := f.Stdin()
	if f.Signal == "" {
		cmd.Stdin = bytes.NewReader(in)
		err = cmd.Run()
	} else {
		err = runSignalled(cmd, in, signalOf(f.Signal))
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out.String(), errb.String(), 128 + int(ws.Signal()), nil
		}
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, err
}

func signalOf(name string) syscall.Signal {
	switch name {
	case "SIGINT":
		return syscall.SIGINT
	case "SIGHUP":
		return syscall.SIGHUP
	}
	return syscall.SIGTERM
}

// ReadLogs reads every session log (*.jsonl) in dir, sorted by name.
func ReadLogs(dir string) ([]truth.Log, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var logs []truth.Log
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		lg := truth.Log{Name: filepath.Base(p)}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var e truth.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				f.Close()
				return nil, fmt.Errorf("log %s: %w", p, err)
			}
			lg.Events = append(lg.Events, e)
		}
		f.Close()
		logs = append(logs, lg)
	}
	return logs, nil
}
