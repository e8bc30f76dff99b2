package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// bin is the aep-hook binary built once for the process tests.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aep-hook-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "aep-hook")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build aep-hook: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testDeadline is the hook deadline of the process tests: they check what
// a hook writes, not how fast, so the default (750 ms) must not decide them
// on a loaded machine. Tests of the deadline, or that guard against slow
// work with one, set theirs (the last setting of a variable wins).
const testDeadline = "AEP_HOOK_DEADLINE=30s"

// hookEnv is a clean environment for one hook process.
func hookEnv(home, tmp string, extra ...string) []string {
	return append([]string{"AEP_HOME=" + home, "TMPDIR=" + tmp, "PATH=" + os.Getenv("PATH"), "AEP_HOST=test-host", testDeadline}, extra...)
}

type hookRun struct {
	stdout, stderr string
	code           int
}

// runHook runs one hook process with payload on stdin. The context bound is
// a safety net against a hung test, not a performance threshold.
func runHook(t *testing.T, env []string, payload []byte, args ...string) hookRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return hookRun{out.String(), errb.String(), code}
}

func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read log: %v", err)
	}
	var evs []map[string]any
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %d is not intact JSON: %v", i+1, err)
		}
		evs = append(evs, m)
	}
	return evs
}

func codexTool(session string, i int) []byte {
	sid, _ := json.Marshal(session)
	return fmt.Appendf(nil, `{"hook_event_name":"PreToolUse","session_id":%s,"turn_id":"t1","tool_name":"shell","tool_use_id":"call_%d","tool_input":{"command":"echo %d"}}`, sid, i, i)
}

// TestConcurrentHooks runs 8 hook processes at once, 40 hooks each, on one
// session: every line intact, ids unique, (epoch, seq) strictly increasing
// in file order.
func TestConcurrentHooks(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	env := hookEnv(home, tmp)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				r := runHook(t, env, codexTool("s-conc", w*100+i), "codex")
				if r.code != 0 || r.stdout != "" {
					t.Errorf("hook exit %d stdout %q", r.code, r.stdout)
				}
			}
		}()
	}
	wg.Wait()
	evs := readLog(t, filepath.Join(home, "logs", "codex", "s-conc.jsonl"))
	accounted(t, home, len(evs), 320)
	ids := map[string]bool{}
	prevE, prevS := -1.0, -1.0
	for i, e := range evs {
		id := e["id"].(string)
		if ids[id] {
			t.Errorf("duplicate id %s", id)
		}
		ids[id] = true
		ep, sq := e["epoch"].(float64), e["seq"].(float64)
		if ep < prevE || ep == prevE && sq <= prevS {
			t.Fatalf("line %d: (epoch, seq) = (%v, %v) after (%v, %v)", i+1, ep, sq, prevE, prevS)
		}
		prevE, prevS = ep, sq
	}
}

// lostIn sums the events the failures recorded at paths count lost.
func lostIn(t *testing.T, paths ...string) int {
	t.Helper()
	lost := 0
	for _, p := range paths {
		for _, f := range failuresIn(t, p) {
			lost += f.Lost
		}
	}
	return lost
}

// failuresIn reads the failures a hook recorded at path.
func failuresIn(t *testing.T, path string) []shim.Failure {
	t.Helper()
	list, err := shim.ReadFailures(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return list
}

// accounted checks that each of the want events a run of concurrent hooks
// was given is among the got written or counted lost in the error log, and
// that nothing else failed: a hook may overrun even a roomy deadline on an
// overloaded machine, and then records the moment it lost (fail open), but
// nothing may go missing unrecorded. It returns how many were recorded lost.
func accounted(t *testing.T, home string, got, want int) int {
	t.Helper()
	lost := 0
	for _, f := range failuresIn(t, filepath.Join(home, "internal", "errors.jsonl")) {
		if f.Stage != "deadline" {
			t.Errorf("failure recorded: %+v", f)
			continue
		}
		lost += f.Lost
	}
	if lost > 0 {
		t.Logf("%d hooks overran the %s on this machine, each recorded", lost, testDeadline)
	}
	// A hook the watchdog ends just after its write is counted in both.
	if got > want || got+lost < want {
		t.Fatalf("%d events written and %d recorded lost, want %d", got, lost, want)
	}
	return lost
}

// TestFailOpen checks the hook's promises to the agent: exit 0 and the
// neutral reply whatever happens, and every failure recorded without
// payload content.
func TestFailOpen(t *testing.T) {
	const secret = "sk-live-SECRET-CONTENT-123"
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, []byte("x"), 0o600)
	cases := []struct {
		name    string
		home    string // "" = fresh temp dir
		payload []byte
		args    []string
		// where the failure must be recorded: "home", "fallback" or "" (none)
		recorded string
		logged   string // a log path (relative to home/logs) that must hold one event
	}{
		{name: "unwritable home", home: filepath.Join(blocker, "home"), payload: codexTool("s1", 1), args: []string{"codex"}, recorded: "fallback"},
		{name: "malformed JSON", payload: []byte(`{"hook_event_name":"PreToolUse","prompt":"` + secret), args: []string{"codex"}, recorded: "home"},
		{name: "not JSON at all", payload: []byte(secret), args: []string{"claude-code"}, recorded: "home"},
		{name: "empty stdin", payload: nil, args: []string{"codex"}, recorded: "home"},
		{name: "hostile session id", payload: codexTool("../../../etc/passwd\x00"+strings.Repeat("x", 4096), 1), args: []string{"codex"}},
		{name: "unknown flag", payload: codexTool("s2", 1), args: []string{"codex", "--no-such-flag"}, recorded: "home", logged: "codex/s2.jsonl"},
		{name: "invalid capture", payload: codexTool("s3", 1), args: []string{"codex", "--capture", "everything"}, recorded: "home", logged: "codex/s3.jsonl"},
		{name: "oversized payload", payload: append(append([]byte(`{"hook_event_name":"PreToolUse","session_id":"s4","x":"`), bytes.Repeat([]byte("a"), 33<<20)...), '"', '}'), args: []string{"codex"}, recorded: "home"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, tmp := c.home, t.TempDir()
			if home == "" {
				home = t.TempDir()
			}
			r := runHook(t, hookEnv(home, tmp), c.payload, c.args...)
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and silence", r.code, r.stdout, r.stderr)
			}
			paths := map[string]string{
				"home":     filepath.Join(home, "internal", "errors.jsonl"),
				"fallback": filepath.Join(tmp, fmt.Sprintf("aep-hook-%d", os.Getuid()), "errors.jsonl"),
			}
			if c.recorded != "" {
				b, err := os.ReadFile(paths[c.recorded])
				if err != nil || len(b) == 0 {
					t.Fatalf("failure not recorded in %s: %v", c.recorded, err)
				}
				if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("aaaa")) {
					t.Errorf("error log carries payload content: %s", b)
				}
			}
			if c.logged != "" {
				if evs := readLog(t, filepath.Join(home, "logs", c.logged)); len(evs) != 1 {
					t.Errorf("%d events logged, want 1", len(evs))
				}
			}
			if c.name == "hostile session id" {
				var found []string
				filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
					if err == nil && strings.HasSuffix(p, ".jsonl") {
						found = append(found, p)
					}
					return nil
				})
				if len(found) != 1 || !strings.HasPrefix(found[0], filepath.Join(home, "logs", "codex")+string(os.PathSeparator)) {
					t.Errorf("logs %v, want one file inside logs/codex", found)
				}
			}
		})
	}
}

// TestHungStdin: a vendor that never closes stdin still gets the neutral
// reply once the hook's deadline passes.
func TestHungStdin(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "codex")
	cmd.Env = hookEnv(home, t.TempDir(), "AEP_HOOK_DEADLINE=200ms")
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte(`{"hook_event_name":`))
	out, err := cmd.Output()
	if err != nil || len(out) != 0 {
		t.Fatalf("err %v out %q", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	if !bytes.Contains(b, []byte(`"deadline"`)) {
		t.Errorf("deadline not recorded: %s", b)
	}
}

// TestMultiCall: a link named aep-<adapter> runs that adapter's hook.
func TestMultiCall(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	link := filepath.Join(dir, "aep-codex")
	if err := os.Symlink(bin, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	cmd := exec.Command(link)
	cmd.Env = hookEnv(home, t.TempDir())
	cmd.Stdin = bytes.NewReader(codexTool("s-link", 1))
	if out, err := cmd.Output(); err != nil || len(out) != 0 {
		t.Fatalf("err %v out %q", err, out)
	}
	if evs := readLog(t, filepath.Join(home, "logs", "codex", "s-link.jsonl")); len(evs) != 1 || evs[0]["type"] != "tool.requested" {
		t.Errorf("events %v", evs)
	}
}

// TestTruncatedPayloadEveryVendor: for every hook vendor, a pinned payload
// cut in half, and one that is not JSON at all, get that vendor's neutral
// reply, exit 0 and silence on stderr, and the failure is recorded.
func TestTruncatedPayloadEveryVendor(t *testing.T) {
	dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", "../shared/aep-spec/conformance/fixtures/mappings")
	for _, v := range mapping.Vendors() {
		if v.Transport != mapping.TransportHook {
			continue
		}
		payload := []byte(`{"hook_event_name":"PreToolUse","session_id":"s1","tool_input":{"command":"echo hi"}}`)
		if ok {
			if cases, _, err := pins.LoadPins(dir, v.Name); err == nil && len(cases) > 0 {
				payload = cases[0].Steps[0].Input
			}
		}
		for name, in := range map[string][]byte{"truncated": payload[:len(payload)/2], "not JSON": []byte("hello\x00world")} {
			t.Run(v.Name+"/"+name, func(t *testing.T) {
				home := t.TempDir()
				args := []string{v.Name}
				hook := ""
				if v.HookFromArgv {
					hook = "PreToolUse"
					args = append(args, hook)
				}
				r := runHook(t, hookEnv(home, t.TempDir()), in, args...)
				want := ""
				if v.Reply != nil {
					want = string(v.Reply(hook))
				}
				if r.code != 0 || r.stdout != want || r.stderr != "" {
					t.Fatalf("exit %d stdout %q stderr %q; want 0, %q, silence", r.code, r.stdout, r.stderr, want)
				}
				fs, err := shim.ReadFailures(filepath.Join(home, "internal", "errors.jsonl"))
				if err != nil || len(fs) != 1 || fs[0].Stage != "parse" {
					t.Errorf("failures %+v (%v), want one parse failure", fs, err)
				}
			})
		}
	}
}
