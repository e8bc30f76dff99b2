package tees

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/shim"
)

// Ceilings are the capture ceilings every recording is replayed at.
var Ceilings = []string{"metadata", "redacted", "full"}

// Replayed is the outcome of one replay.
type Replayed struct {
	Recording Recording
	Capture   string
	Logs      []truth.Log
	Problems  []string
}

// OK reports a replay without problems.
func (r Replayed) OK() bool { return len(r.Problems) == 0 }

// ReplayAll replays every committed recording (or only the named
// peer/scenario) at every ceiling and prints "real: tees passed/total";
// it reports whether all passed.
func (h *Harness) ReplayAll(peer, scenario string) bool {
	recs, err := LoadRecordings(h.Fixtures)
	if err != nil {
		fmt.Fprintln(h.Log, err)
		return false
	}
	schemas, err := truth.Found(h.Log)
	if err != nil {
		fmt.Fprintln(h.Log, err)
		return false
	}
	passed, total := 0, 0
	for _, rec := range recs {
		if !named(peer, rec.Meta.Peer) && !named(peer, rec.Meta.Protocol) {
			continue
		}
		if !named(scenario, rec.Meta.Scenario) {
			continue
		}
		ok := true
		for _, c := range Ceilings {
			tmp, err := os.MkdirTemp("", "aep-tee-replay-")
			if err != nil {
				fmt.Fprintln(h.Log, err)
				return false
			}
			r := h.Replay(rec, c, tmp, schemas)
			os.RemoveAll(tmp)
			for _, p := range r.Problems {
				fmt.Fprintf(h.Log, "  %s at %s: %s\n", rec.Name(), c, p)
			}
			ok = ok && r.OK()
		}
		total++
		if ok {
			passed++
		}
	}
	fmt.Fprintf(h.Log, "real: tees %d/%d scenarios passed\n", passed, total)
	return passed == total
}

// Replay plays one recording through the live tee at the capture ceiling,
// with a fresh AEP_HOME under tmp, and checks both directions byte for byte
// and the whole record (schemas may be nil).
func (h *Harness) Replay(rec Recording, capture, tmp string, schemas *truth.Schemas) Replayed {
	res := Replayed{Recording: rec, Capture: capture}
	env := []string{"AEP_HOME=" + filepath.Join(tmp, "aep"), "AEP_HOST=replay-host", "AEP_CAPTURE=" + capture,
		"TMPDIR=" + tmp, "PATH=" + os.Getenv("PATH")}
	switch rec.Meta.Protocol {
	case ACP:
		res.Problems = h.replayACP(rec, env, tmp)
	case AGUI:
		res.Problems = h.replayAGUI(rec, env)
	default:
		res.Problems = []string{fmt.Sprintf("unknown protocol %q", rec.Meta.Protocol)}
		return res
	}
	res.Problems = append(res.Problems, internalFailures(filepath.Join(tmp, "aep"), unparsable(rec))...)
	logs, err := realagents.ReadLogs(filepath.Join(tmp, "aep", "logs", rec.Meta.Protocol))
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
	}
	res.Logs = logs
	res.Problems = append(res.Problems, truth.Check(logs, rec.Meta.Facts, schemas)...)
	res.Problems = append(res.Problems, teeChecks(logs, rec)...)
	return res
}

// internalFailures lists what the tee recorded in its error log, but the
// interrupted turns it closed (which doctor shows, and which are the
// truth of a crash, not a failure of the tee) and one parse failure per
// line of the transcript that is not JSON (a line a dying agent cut).
func internalFailures(home string, parse int) []string {
	var bad []string
	fs, err := shim.ReadFailures(filepath.Join(home, "internal", "errors.jsonl"))
	if err != nil {
		return nil
	}
	for _, f := range fs {
		switch {
		case f.Stage == "interrupted":
		case f.Stage == "parse" && parse > 0:
			parse--
		default:
			bad = append(bad, fmt.Sprintf("internal failure recorded: %s [%s] %s", f.Hook, f.Stage, f.Error))
		}
	}
	return bad
}

// unparsable counts the transcript's lines that are not JSON.
func unparsable(rec Recording) int {
	n := 0
	for _, e := range rec.Entries {
		if e.Dir != "" && !json.Valid([]byte(e.Line)) {
			n++
		}
	}
	return n
}

// replayACP runs `aep-hook acp -- <scripted agent>` and plays the editor.
func (h *Harness) replayACP(rec Recording, env []string, tmp string) []string {
	var bad []string
	badf := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	agentLog := filepath.Join(tmp, "agent-problems.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a safety net only
	defer cancel()
	args := append([]string{"acp", "--"}, h.Self...)
	args = append(args, "acp-agent", rec.Dir, agentLog)
	tee := exec.CommandContext(ctx, h.AEPHook, args...)
	tee.Env = env
	var stderr bytes.Buffer
	tee.Stderr = &stderr
	in, err := tee.StdinPipe()
	if err != nil {
		return []string{err.Error()}
	}
	outPipe, err := tee.StdoutPipe()
	if err != nil {
		return []string{err.Error()}
	}
	if err := tee.Start(); err != nil {
		return []string{err.Error()}
	}
	out := bufio.NewReaderSize(outPipe, 1<<20)
	killed := false
	for i, e := range rec.Entries {
		switch {
		case e.Dir == "c2a":
			if _, err := io.WriteString(in, e.Line+newline(e)); err != nil && !killed {
				badf("entry %d: writing to the tee: %v", i+1, err)
			}
		case e.Dir == "a2c":
			got, err := readLine(out, e.Partial)
			if got != e.Line+newline(e) {
				badf("entry %d: the editor read %q (%v), the agent sent %q", i+1, clip(got), err, clip(e.Line))
				cancel()
				tee.Wait()
				return bad
			}
		case e.Event == "stdin_closed":
			in.Close()
		case e.Event == "stdout_eof":
			if rest, _ := io.ReadAll(out); len(rest) > 0 {
				badf("entry %d: %d more bytes before EOF: %q", i+1, len(rest), clip(string(rest)))
			}
		case e.Event == "kill":
			killed = true
			if e.Target == "tee" {
				tee.Process.Signal(signalOf(e.Signal))
			}
		case e.Event == "exit":
			in.Close()
			io.Copy(io.Discard, out)
			tee.Wait()
			if ctx.Err() != nil {
				badf("the tee did not exit (killed after %s)", "90s")
			}
			if got, want := status(tee.ProcessState), wantStatus(e); got != want {
				badf("the tee ended %s, the recorded tee %s", got, want)
			}
		}
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		badf("tee stderr: %s", clip(s))
	}
	if b, err := os.ReadFile(agentLog); err == nil && len(bytes.TrimSpace(b)) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			badf("agent side: %s", l)
		}
	}
	return bad
}

func newline(e Entry) string {
	if e.Partial {
		return ""
	}
	return "\n"
}

// readLine reads one line with its newline, or (partial) the rest.
func readLine(r *bufio.Reader, partial bool) (string, error) {
	if partial {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	return r.ReadString('\n')
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// status describes a wait status: "exit N" or "signal NAME".
func status(ps *os.ProcessState) string {
	if ps == nil {
		return "not at all"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exit %d", ps.ExitCode())
}

func wantStatus(e Entry) string {
	if e.Signal != "" {
		return "signal " + e.Signal
	}
	if e.Code != nil {
		return fmt.Sprintf("exit %d", *e.Code)
	}
	return "exit 0"
}

var signals = map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL, "SIGINT": syscall.SIGINT, "SIGHUP": syscall.SIGHUP}

func signalOf(name string) syscall.Signal {
	if s, ok := signals[name]; ok {
		return s
	}
	return syscall.SIGTERM
}

func signalName(s syscall.Signal) string {
	for n, v := range signals {
		if v == s {
			return n
		}
	}
	return s.String()
}

// RunPeer runs a scripted peer of a replay (`realtees peer ...`, or the
// test binary): "acp-agent DIR PROBLEMS" plays the agent of the recording
// in DIR on stdin/stdout, noting every difference in the file PROBLEMS;
// "acp-worker DIR PROBLEMS" is the worker an orphaning agent leaves
// behind: started with the agent (as Qwen Code's launcher starts its
// worker), it waits on file descriptor 3 for the index the agent died at
// and plays the entries from there. It returns the exit status.
func RunPeer(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: peer acp-agent|acp-worker DIR PROBLEMS [FROM]")
		return 2
	}
	rec, err := LoadRecording(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p := &agentPeer{rec: rec, problems: args[2], in: bufio.NewReaderSize(os.Stdin, 1<<20), out: os.Stdout}
	switch args[0] {
	case "acp-agent":
		p.signals = notifyStop()
		if rec.Meta.Orphan {
			p.startWorker()
		}
		return p.play(0, false)
	case "acp-worker":
		// The agent writes where it died just before it dies; a pipe that
		// ends with nothing written means it never left a worker behind.
		var from int
		if _, err := fmt.Fscan(os.NewFile(3, "from"), &from); err != nil {
			return 0
		}
		return p.play(from, true)
	}
	return 2
}

// agentPeer plays the agent's side of an ACP recording.
type agentPeer struct {
	rec      Recording
	problems string
	in       *bufio.Reader
	out      io.Writer
	signals  <-chan os.Signal // the signals the tee forwards
	worker   *os.File         // an orphaning agent's word to its worker
}

func (p *agentPeer) note(format string, a ...any) {
	shim.AppendFile(p.problems, []byte(fmt.Sprintf(format, a...)+"\n"))
}

// play walks the entries from index from. A worker (left behind by an
// orphaning agent) writes what the agent wrote after its death and stops
// at stdin EOF, as Qwen Code's worker does.
func (p *agentPeer) play(from int, worker bool) int {
	gone := worker // the agent was killed: what the editor sends may not arrive
	for i := from; i < len(p.rec.Entries); i++ {
		e := p.rec.Entries[i]
		switch {
		case e.Dir == "a2c":
			if _, err := io.WriteString(p.out, e.Line+newline(e)); err != nil {
				if !worker {
					p.note("entry %d: writing to the tee: %v", i+1, err)
				}
				return 0
			}
		case e.Dir == "c2a":
			got, err := readLine(p.in, e.Partial)
			if got != e.Line+newline(e) && !(gone && errors.Is(err, io.EOF)) {
				p.note("entry %d: the agent read %q (%v), the editor sent %q", i+1, clip(got), err, clip(e.Line))
			}
		case e.Event == "stdin_closed":
			if rest, _ := io.ReadAll(p.in); len(rest) > 0 {
				p.note("entry %d: %d more bytes before stdin EOF", i+1, len(rest))
			}
		case e.Event == "kill" && !worker:
			gone = true
			if e.Target == "tee" {
				<-p.signals // the editor's signal, forwarded by the tee
				if !p.rec.Meta.Orphan && !p.signalled() {
					// The agent answers the signal and ends as it did.
					continue
				}
			}
			if p.rec.Meta.Orphan {
				p.leaveWorker(i + 1)
			} else {
				p.inFlight(i + 1)
			}
			dieBy(signalOf(e.Signal))
		case e.Event == "stdout_eof" && gone && !worker && !p.rec.Meta.Orphan:
			// The agent ended after the editor's signal, before the
			// editor closed its stdin.
			return p.exitCode()
		case e.Event == "exit":
			if worker {
				io.Copy(io.Discard, p.in)
				return 0
			}
			if e.Code != nil {
				return *e.Code
			}
			return 0
		}
	}
	return 0
}

// signalled reports whether the recorded tee ended by a signal (the
// agent died of it), not by an exit status.
func (p *agentPeer) signalled() bool {
	for _, e := range p.rec.Entries {
		if e.Event == "exit" {
			return e.Signal != ""
		}
	}
	return false
}

// exitCode is the recorded tee's exit status.
func (p *agentPeer) exitCode() int {
	for _, e := range p.rec.Entries {
		if e.Event == "exit" && e.Code != nil {
			return *e.Code
		}
	}
	return 0
}

// inFlight writes what the agent had written when it died: the lines the
// editor read after the kill.
func (p *agentPeer) inFlight(from int) {
	for _, e := range p.rec.Entries[from:] {
		if e.Dir == "a2c" {
			io.WriteString(p.out, e.Line+newline(e))
		}
	}
}

// leaveWorker hands the agent's part on to its worker (started with the
// agent, sharing its stdin and stdout, as a launcher that re-spawns itself
// does) just before the agent dies.
func (p *agentPeer) leaveWorker(from int) {
	if p.worker == nil {
		return
	}
	if _, err := fmt.Fprintln(p.worker, from); err != nil {
		p.note("worker: %v", err)
	}
	p.worker.Close()
}

// startWorker starts the worker an orphaning agent leaves behind at once,
// sharing the agent's stdin and stdout, so that its start (a test binary
// under the race detector on a loaded machine can take seconds) is over
// long before the agent dies and the tee's bounded linger begins.
func (p *agentPeer) startWorker() {
	self, err := os.Executable()
	if err != nil {
		p.note("worker: %v", err)
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		p.note("worker: %v", err)
		return
	}
	defer r.Close()
	args := append(peerPrefix(), "acp-worker", p.rec.Dir, p.problems)
	cmd := exec.Command(self, args...)
	cmd.Env = os.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r}
	if err := cmd.Start(); err != nil {
		w.Close()
		p.note("worker: %v", err)
		return
	}
	p.worker = w
}

// peerPrefix is how this process was asked to be a peer (the arguments
// before the peer's own): "peer" for realtees and the test binary alike.
func peerPrefix() []string {
	for i, a := range os.Args {
		if a == "acp-agent" || a == "acp-worker" {
			return append([]string(nil), os.Args[1:i]...)
		}
	}
	return []string{"peer"}
}
