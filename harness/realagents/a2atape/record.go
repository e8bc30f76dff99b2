package a2atape

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// The scripted agent and client, written into the install folder so Node
// resolves the pinned SDK next to them.
var (
	//go:embed agent.mjs
	agentJS []byte
	//go:embed client.mjs
	clientJS []byte
)

// Scenario is one recorded A2A session.
type Scenario struct {
	Name, Description string
	// Channel is "tee" or "follow".
	Channel string
	Facts   truth.Facts
}

// Scenarios are the sessions `make real` records: each of the scripted
// agent's behaviours through the tee, and a task answered while the
// follower follows it.
func Scenarios() []Scenario {
	one := truth.Facts{Turns: 1, Sessions: 1}
	with := func(f func(*truth.Facts)) truth.Facts { x := one; f(&x); return x }
	return []Scenario{
		{"stream", "a streamed task: submitted, working, an artifact in two chunks, completed; then GetTask", "tee", one},
		{"input", "the task asks for input (INPUT_REQUIRED, the stream ends); the user's follow-up on the task completes it", "tee",
			with(func(f *truth.Facts) { f.Answers = 1 })},
		{"auth", "blocking SendMessage: the task asks for authentication (AUTH_REQUIRED); the follow-up completes it", "tee",
			with(func(f *truth.Facts) { f.Answers = 1 })},
		{"reject", "the agent rejects the task (REJECTED)", "tee", with(func(f *truth.Facts) { f.Failures = 1 })},
		{"fail", "the task works, then fails (FAILED); then GetTask", "tee", with(func(f *truth.Facts) { f.Failures = 1 })},
		{"cancel", "a long task cancelled by the client (CancelTask while its stream is open)", "tee",
			with(func(f *truth.Facts) { f.Interrupts = 1 })},
		{"message", "a SendMessage answered by a plain message, no task", "tee", one},
		{"legacy", "a v0.3 peer (the server's compat layer): message/stream asks for input, message/send answers it", "tee",
			with(func(f *truth.Facts) { f.Answers = 1 })},
		{"follow", "aep-hook follow a2a follows a task in INPUT_REQUIRED; the user answers it (out of the follower's sight) and it completes", "follow",
			with(func(f *truth.Facts) { f.Answers = 1 })},
	}
}

// Recording is the A2A part of the real-agent harness.
type Recording struct {
	Cache    string    // the install cache (realagents.DefaultCache)
	AEPHook  string    // the aep-hook binary
	Fixtures string    // the fixtures folder
	Log      io.Writer // progress lines
}

// Dir is the install folder of the pinned SDK.
func (h *Recording) Dir() string { return filepath.Join(h.Cache, "a2a-sdk-"+SDKVersion) }

// Install makes sure the pinned SDK (and Express, its server's peer) is in
// the cache, installing it from the npm registry when it is not, and
// writes the scripts beside it.
func (h *Recording) Install() error {
	dir := h.Dir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(h.Log, "installing %s@%s into %s\n", SDKPackage, SDKVersion, dir)
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir,
			SDKPackage+"@"+SDKVersion, "express@"+ExpressVersion)
		cmd.Stdout, cmd.Stderr = h.Log, h.Log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm install %s@%s: %w", SDKPackage, SDKVersion, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.mjs"), agentJS, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "client.mjs"), clientJS, 0o644)
}

// Harness is the A2A tape harness on the shared record-and-replay loop.
func (h *Recording) Harness() realagents.TapeHarness[Scenario, *Tape] {
	return realagents.TapeHarness[Scenario, *Tape]{
		Tapes: realagents.Tapes[*Tape]{Agent: "a2a", Log: h.Log, Fixtures: h.Fixtures, Replay: Replay, Load: LoadTapes,
			Name: func(t *Tape) string { return t.Scenario }, Save: (*Tape).Save},
		Scenarios: Scenarios(), Install: h.Install, Record: h.Record,
	}
}

// ScenarioName and ScenarioFacts serve realagents.TapeHarness.
func (s Scenario) ScenarioName() string { return s.Name }

// ScenarioFacts are what really happens in the scenario.
func (s Scenario) ScenarioFacts() truth.Facts { return s.Facts }

// proc is a started helper process.
type proc struct {
	cmd *exec.Cmd
	out *lineBuf
}

// start runs name with args in dir, its output collected.
func start(dir string, env []string, name string, args ...string) (*proc, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out := &lineBuf{lines: make(chan string, 256)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{cmd: cmd, out: out}, nil
}

// wait returns the first output line matching re, or fails after d.
func (p *proc) wait(re *regexp.Regexp, d time.Duration) ([]string, error) {
	deadline := time.After(d)
	for {
		select {
		case l := <-p.out.lines:
			if m := re.FindStringSubmatch(l); m != nil {
				return m, nil
			}
		case <-deadline:
			return nil, fmt.Errorf("%s: no %q within %v (output: %s)", filepath.Base(p.cmd.Path), re, d, p.out.String())
		}
	}
}

// stop ends the process with SIGTERM, then SIGKILL after a grace.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// lineBuf keeps a process's output and hands its lines out.
type lineBuf struct {
	mu    sync.Mutex
	buf   strings.Builder
	part  string
	lines chan string
}

func (b *lineBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.part + string(p)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		l := s[:i]
		b.buf.WriteString(l + "\n")
		select {
		case b.lines <- l:
		default:
		}
		s = s[i+1:]
	}
	b.part = s
	return len(p), nil
}

func (b *lineBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String() + b.part
}

// serve runs h on a local port until the returned stop is called.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

var (
	listening = regexp.MustCompile(`^listening (\d+)`)
	proxying  = regexp.MustCompile(`proxying (http://\S+) ->`)
	taskLine  = regexp.MustCompile(`^\{"task":"([^"]+)"`)
)

// Record runs one scenario live and returns its tape and the live record.
func (h *Recording) Record(s Scenario) (*Tape, []truth.Log, error) {
	tmp, err := os.MkdirTemp("", "a2a-real-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "aep")
	port, err := realagents.FreePort()
	if err != nil {
		return nil, nil, err
	}
	serverURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	su, _ := url.Parse(serverURL)
	rec := NewRecorder(su)
	recURL, stopRec, err := serve(rec)
	if err != nil {
		return nil, nil, err
	}
	defer stopRec()
	env := []string{"AEP_HOME=" + home}
	t := &Tape{Agent: "a2a", Version: SDKVersion, Scenario: s.Name, Description: s.Description,
		Channel: s.Channel, Facts: s.Facts, RecordedAt: time.Now().UTC().Truncate(time.Millisecond)}
	switch s.Channel {
	case "tee":
		tee, err := start(tmp, env, h.AEPHook, "a2a", "--listen", "127.0.0.1:0", "--upstream", recURL)
		if err != nil {
			return nil, nil, err
		}
		defer tee.stop()
		m, err := tee.wait(proxying, 10*time.Second)
		if err != nil {
			return nil, nil, err
		}
		teeURL := m[1]
		agent, err := start(h.Dir(), nil, "node", "agent.mjs", fmt.Sprint(port), teeURL)
		if err != nil {
			return nil, nil, err
		}
		defer agent.stop()
		if _, err := agent.wait(listening, 20*time.Second); err != nil {
			return nil, nil, err
		}
		client := exec.Command("node", "client.mjs", teeURL, s.Name)
		client.Dir = h.Dir()
		if out, err := runFor(client, time.Minute); err != nil {
			return nil, nil, fmt.Errorf("client: %v: %s", err, out)
		}
		tee.stop() // writes what it observed, then exits
	case "follow":
		agent, err := start(h.Dir(), nil, "node", "agent.mjs", fmt.Sprint(port), serverURL)
		if err != nil {
			return nil, nil, err
		}
		defer agent.stop()
		if _, err := agent.wait(listening, 20*time.Second); err != nil {
			return nil, nil, err
		}
		client := exec.Command("node", "client.mjs", serverURL, "input-hold")
		client.Dir = h.Dir()
		stdin, _ := client.StdinPipe()
		cout := &lineBuf{lines: make(chan string, 16)}
		client.Stdout, client.Stderr = cout, cout
		if err := client.Start(); err != nil {
			return nil, nil, err
		}
		cp := &proc{cmd: client, out: cout}
		defer func() { stdin.Close(); cp.stop() }()
		m, err := cp.wait(taskLine, 30*time.Second)
		if err != nil {
			return nil, nil, err
		}
		t.Task = m[1]
		fol, err := start(tmp, env, h.AEPHook, "follow", "a2a", "--url", recURL+"/a2a/jsonrpc", "--task", t.Task)
		if err != nil {
			return nil, nil, err
		}
		defer fol.stop()
		for i := 0; rec.Seen("SubscribeToTask") == 0; i++ {
			if i > 200 {
				return nil, nil, errors.New("the follower never subscribed")
			}
			time.Sleep(50 * time.Millisecond)
		}
		io.WriteString(stdin, "go\n")
		if _, err := fol.wait(regexp.MustCompile(`the task ended`), 30*time.Second); err != nil {
			return nil, nil, err
		}
		fol.cmd.Wait()
	}
	for _, x := range rec.Exchanges() {
		if gjson.Valid(string(x.Request)) {
			t.Exchanges = append(t.Exchanges, x)
		}
	}
	live, err := realagents.ReadLogs(filepath.Join(home, "logs", "a2a"))
	return t, live, err
}

// runFor runs cmd with a deadline and returns its output.
func runFor(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("timed out after %v", d)
	}
}
