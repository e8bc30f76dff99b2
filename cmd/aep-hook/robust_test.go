package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// signalMasks returns the signals a Linux process ignores (SigIgn) and
// catches (SigCgt).
func signalMasks(pid int) (ign, cgt uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	var seen int
	for _, l := range strings.Split(string(b), "\n") {
		for _, f := range []struct {
			prefix string
			mask   *uint64
		}{{"SigIgn:", &ign}, {"SigCgt:", &cgt}} {
			if v, found := strings.CutPrefix(l, f.prefix); found {
				m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err != nil {
					return 0, 0, false
				}
				*f.mask = m
				seen++
			}
		}
	}
	return ign, cgt, seen == 2
}

// waitHolding waits until the hook process ignores SIGPIPE, which it does
// right after it starts holding the termination signals, and has started
// its Go runtime (it catches SIGURG): a signal sent then is one the hook has
// chosen to handle. The runtime check matters when this test process itself
// ignores SIGPIPE (an in-process hook run ignores it and never undoes it):
// a child inherits that from the fork until its runtime installs its own
// handlers, and the ignore bit alone would say "holding" before the hook
// had started. A hook that never holds them is given up on after a while
// (a safety net, not a threshold).
func waitHolding(t *testing.T, pid int) {
	t.Helper()
	const (
		pipe = 1 << (13 - 1) // SIGPIPE, likewise
		urg  = 1 << (23 - 1) // SIGURG as Linux numbers it: signalMasks reads Linux's /proc
	)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for giveUp := time.Now().Add(5 * time.Second); time.Now().Before(giveUp); <-tick.C {
		ign, cgt, ok := signalMasks(pid)
		if !ok {
			t.Fatal("process gone before it held its signals")
		}
		if ign&pipe != 0 && cgt&urg != 0 {
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
			p := startHook(t, hookEnv(home, t.TempDir(), "AEP_HOOK_DEADLINE=10s"), bin, "codex")
			waitHolding(t, p.cmd.Process.Pid)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			r, werr := p.finish(t, codexTool("s-sig", 1))
			if werr != nil || r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("write %v exit %d stdout %q stderr %q", werr, r.code, r.stdout, r.stderr)
			}
			if evs := readLog(t, filepath.Join(home, "logs", "codex", "s-sig.jsonl")); len(evs) != 1 {
				t.Fatalf("events %v", evs)
			}
		})
	}
}

// digestOf is the digest of a JSON value the decoding way (json.Decoder with
// UseNumber, re-encoded without HTML escaping), or of its bytes as a JSON
// string when encoding/json refuses it (nested too deep): what the event's
// *_digest must say whatever the hook did to read the payload.
func digestOf(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		v = string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
	return hex.EncodeToString(sum[:16])
}

// The test binary doubles as a wrapper that runs the hook and reports its
// peak memory: a child started straight from the test process inherits the
// test's own high-water mark (Go starts children with vfork, and Linux
// carries the parent's peak over the exec), while the wrapper is small.
const (
	rssWrapEnv = "AEP_TEST_RSS_WRAP" // the hook binary to run
	rssOutEnv  = "AEP_TEST_RSS_OUT"  // where to write its peak RSS in bytes
)

func init() {
	if hookBin := os.Getenv(rssWrapEnv); hookBin != "" {
		cmd := exec.Command(hookBin, os.Args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		} else if err != nil {
			os.Exit(125)
		}
		os.WriteFile(os.Getenv(rssOutEnv), []byte(strconv.FormatInt(maxRSS(cmd.ProcessState), 10)), 0o600)
		os.Exit(0)
	}
}

// hookStarted is a hook process started with its stdin a pipe.
type hookStarted struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out, err bytes.Buffer
	cancel   context.CancelFunc
}

// startHook starts argv[0] (the hook binary, or a wrapper of it) with
// argv[1:] and env, its stdin a pipe. The context bound is a safety net
// against a hung test, not a threshold.
func startHook(t *testing.T, env []string, argv ...string) *hookStarted {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p := &hookStarted{cmd: exec.CommandContext(ctx, argv[0], argv[1:]...), cancel: cancel}
	p.cmd.Env = env
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// finish writes payload, closes stdin and waits; it reports whether the
// writer got the whole payload in (no EPIPE).
func (p *hookStarted) finish(t *testing.T, payload []byte) (hookRun, error) {
	t.Helper()
	defer p.cancel()
	_, werr := p.stdin.Write(payload)
	if cerr := p.stdin.Close(); werr == nil {
		werr = cerr
	}
	err := p.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return hookRun{p.out.String(), p.err.String(), code}, werr
}

// hookProc runs one hook process feeding payload through a pipe and
// reports whether the writer got the whole payload in (no EPIPE) and the
// hook's peak resident memory (0 where unknown).
func hookProc(t *testing.T, env []string, payload []byte, args ...string) (hookRun, error, int64) {
	t.Helper()
	rssFile := filepath.Join(t.TempDir(), "rss")
	env = append(env[:len(env):len(env)], rssWrapEnv+"="+bin, rssOutEnv+"="+rssFile)
	r, werr := startHook(t, env, append([]string{os.Args[0]}, args...)...).finish(t, payload)
	rss, _ := os.ReadFile(rssFile)
	n, _ := strconv.ParseInt(string(rss), 10, 64)
	return r, werr, n
}

// onlyEvent reads the one event a hook left in the session's log.
func onlyEvent(t *testing.T, home, agent, session string) map[string]any {
	t.Helper()
	evs := readLog(t, filepath.Join(home, "logs", agent, session+".jsonl"))
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	return evs[0]
}

// The deadline of the payload tests: ten times what the slowest of them
// takes on a loaded two-core machine, a safety net and not a threshold.
// The quadratic reading they guard against took 4.5 s for 30,000 levels;
// at the 300,000 used here it would take minutes.
const roomyDeadline = "AEP_HOOK_DEADLINE=10s"

// TestHookBigPayloads: valid PostToolUse payloads of 16 and 30 MiB (which
// lost 3 of 10 and 10 of 10 events to the deadline) each yield their event,
// whose result_digest is the original output's; the output itself is left
// out, recorded as such. The hook's peak memory stays near the payload's
// size (decoding the output took ten times it); the time it takes is make
// bench's figure, not a test's.
func TestHookBigPayloads(t *testing.T) {
	for _, size := range []int{16 << 20, 30 << 20} {
		resp := []byte(`{"stdout":"` + strings.Repeat("x", size) + `","stderr":""}`)
		payload := []byte(`{"session_id":"s-big","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"cat big"},"tool_response":` + string(resp) + `}`)
		home := t.TempDir()
		r, werr, rss := hookProc(t, hookEnv(home, t.TempDir(), roomyDeadline, "AEP_CAPTURE=full"), payload, "claude-code")
		if r.code != 0 || r.stderr != "" || werr != nil {
			t.Fatalf("%d MiB: exit %d stderr %q write %v", size>>20, r.code, r.stderr, werr)
		}
		if limit := int64(len(payload)+len(payload)/4) + 32<<20; rss > limit {
			t.Errorf("%d MiB: peak RSS %d MiB, more than %d MiB", size>>20, rss>>20, limit>>20)
		}
		ev := onlyEvent(t, home, "claude-code", "s-big")
		data, _ := ev["data"].(map[string]any)
		if ev["type"] != "tool.completed" || data["result_digest"] != digestOf(resp) {
			t.Fatalf("%d MiB: event %.400v, want result_digest %s", size>>20, ev, digestOf(resp))
		}
		if _, kept := data["result"]; kept {
			t.Errorf("%d MiB: the output was kept in the event", size>>20)
		}
		if b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl")); !bytes.Contains(b, []byte(`"stage":"bound"`)) {
			t.Errorf("%d MiB: the omission is not recorded: %s", size>>20, b)
		}
	}
}

// TestHookDeepPayloads: tool input nested 300,000 deep yields its event on
// claude-code, codex and gemini-cli (30,000 levels lost it on all three),
// and 15 million levels neither overflow the stack (exit status 2 and a
// trace on stderr) nor lose the event.
func TestHookDeepPayloads(t *testing.T) {
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	cases := []struct {
		vendor, hook, input string
	}{
		{"claude-code", "PreToolUse", nest(300_000)},
		{"codex", "PreToolUse", nest(300_000)},
		{"gemini-cli", "BeforeTool", nest(300_000)},
		{"claude-code", "PreToolUse", strings.Repeat("[", 15_000_000) + strings.Repeat("]", 15_000_000)},
	}
	for _, c := range cases {
		payload := []byte(`{"session_id":"s-deep","hook_event_name":"` + c.hook + `","turn_id":"t1","tool_name":"Bash","tool_use_id":"call_1","tool_input":` + c.input + `}`)
		home := t.TempDir()
		r, werr, _ := hookProc(t, hookEnv(home, t.TempDir(), roomyDeadline), payload, c.vendor)
		if r.code != 0 || r.stderr != "" || werr != nil {
			t.Fatalf("%s %d bytes: exit %d stderr %.200q write %v", c.vendor, len(payload), r.code, r.stderr, werr)
		}
		ev := onlyEvent(t, home, c.vendor, "s-deep")
		data, _ := ev["data"].(map[string]any)
		if ev["type"] != "tool.requested" || data["args_digest"] != digestOf([]byte(c.input)) {
			t.Errorf("%s: event %.300v, want args_digest %s", c.vendor, ev, digestOf([]byte(c.input)))
		}
	}
}

// TestHookDrainsStdin: a payload past the 32 MiB the hook keeps is read to
// its end, so the writer never meets a closed pipe (a Node parent without an
// EPIPE handler crashed), and the envelope at its start still yields the
// event.
func TestHookDrainsStdin(t *testing.T) {
	payload := []byte(`{"session_id":"s-huge","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_2","tool_input":{"command":"cat huge"},"tool_response":{"stdout":"` + strings.Repeat("y", 40<<20) + `"}}`)
	home := t.TempDir()
	r, werr, _ := hookProc(t, hookEnv(home, t.TempDir(), roomyDeadline), payload, "claude-code")
	if werr != nil || r.code != 0 || r.stderr != "" {
		t.Fatalf("write %v exit %d stderr %q", werr, r.code, r.stderr)
	}
	ev := onlyEvent(t, home, "claude-code", "s-huge")
	if ev["type"] != "tool.completed" || ev["subject"] != "Bash" {
		t.Errorf("event %v", ev)
	}
	if data, _ := ev["data"].(map[string]any); data["result_digest"] != nil {
		t.Errorf("a digest of output the hook never saw whole: %v", data)
	}
}

// TestShipRetryForBoundsTheRun: with the collector answering 500, `ship
// --retry-for` used to retry each log that long (2.6 s for one log, 35 s
// for twelve); the destination is now given up once it has failed for that
// long, whatever the number of logs: fewer requests than there are logs.
func TestShipRetryForBoundsTheRun(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	home := t.TempDir()
	env := hookEnv(home, t.TempDir())
	for i := range 12 {
		runHook(t, env, codexTool(fmt.Sprintf("s-ship-%d", i), i), "codex")
	}
	r := runHook(t, append(env, "AEP_INSECURE=1"), nil, "ship", "--out", srv.URL, "--retry-for", "1s")
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (not delivered)", r.code)
	}
	if n := requests.Load(); n == 0 || n >= 12 {
		t.Errorf("%d requests for 12 logs, want the retries of one failing destination", n)
	}
}
