package console_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/relaytest"
	"github.com/aep-hook/aep-hook/mapping"
)

// bin is the aep-hook binary the browser tests run, built once.
var bin string

func TestMain(m *testing.M) {
	relaytest.Main(m, "aep-console-e2e-", func(dir string) error {
		bin = filepath.Join(dir, "aep-hook")
		// The plain build, even under -race.
		return relaytest.Build(bin, "../../cmd/aep-hook", false)
	})
}

// wait bounds every wait for something the page or the relay must do: a
// failure bound against a hang, never a measure of speed.
const wait = 30 * time.Second

// relayProc is one running `aep-hook relay`.
type relayProc struct {
	t    testing.TB
	home string
	base string // http://127.0.0.1:PORT
	addr string
	proc *relaytest.Proc
}

// startRelay runs the relay over home on listen (127.0.0.1:0 for an
// ephemeral port) with args, and waits for it to serve.
func startRelay(t testing.TB, home, listen string, args ...string) *relayProc {
	t.Helper()
	proc, addr := relaytest.StartRelay(t, relaytest.Relay{
		Bin:      bin,
		Env:      append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=relay-host"),
		Listen:   listen,
		Args:     args,
		Wait:     wait,
		MustStop: true,
	})
	return &relayProc{t: t, home: home, base: "http://" + addr, addr: addr, proc: proc}
}

// printed waits for the relay to write s to its stderr (it prints the
// console's line just after the one startRelay waits for) and says
// whether it did.
func (p *relayProc) printed(s string) bool {
	deadline := time.Now().Add(wait)
	for !strings.Contains(p.output(), s) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-p.proc.Exited():
			return strings.Contains(p.output(), s)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

func (p *relayProc) output() string { return p.proc.Output() }

// stop ends the relay with SIGTERM (it drains) and waits for it.
func (p *relayProc) stop() {
	if errors.Is(p.proc.Stop(syscall.SIGTERM, wait), relaytest.ErrNotStopped) {
		p.t.Errorf("the relay did not stop")
	}
}

// tokensFile writes lines as a private tokens file.
func tokensFile(t testing.TB, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// token is one tokens-file line.
func token(secret, identity, capture string, scopes ...string) string {
	q := make([]string, len(scopes))
	for i, s := range scopes {
		q[i] = fmt.Sprintf("%q", s)
	}
	c := ""
	if capture != "" {
		c = fmt.Sprintf(`,"capture":%q`, capture)
	}
	return fmt.Sprintf(`{"token":%q,"identity":%q,"scopes":[%s]%s}`, secret, identity, strings.Join(q, ","), c)
}

// fixture is a recorded real session (fixtures/<agent>/recorded/<name>).
func fixture(t testing.TB, agent, name string) realagents.Fixture {
	t.Helper()
	fx, err := realagents.LoadFixture(filepath.Join("..", "..", "fixtures", agent, "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// hookEnv is the environment of the hook processes a test runs: full
// capture, so the record holds free text a metadata ceiling must keep off
// the page.
func hookEnv(home string, extra ...string) []string {
	return append([]string{"AEP_HOME=" + home, "AEP_HOST=devbox", "AEP_CAPTURE=full", "AEP_HOOK_DEADLINE=30s",
		"PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}, extra...)
}

// fire runs the firings of fx numbered from..to (1-based, inclusive; to 0:
// all) through real hook processes, as the agent ran them.
func fire(t testing.TB, fx realagents.Fixture, env []string, from, to int) {
	t.Helper()
	for _, f := range fx.Firings {
		if f.N < from || (to > 0 && f.N > to) {
			continue
		}
		if out, errOut, err := runHook(fx.Scenario.Agent, env, f, nil); err != nil || errOut != "" {
			t.Fatalf("firing %d (%s): %v %s %s", f.N, f.Hook(), err, out, errOut)
		}
	}
}

// runHook runs one hook process for firing f; started, when set, is
// closed once the process runs.
func runHook(agent string, env []string, f realagents.Firing, started chan<- struct{}) (stdout, stderr string, err error) {
	v, ok := mapping.Lookup(agent)
	if !ok {
		return "", "", fmt.Errorf("no table for %s", agent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{v.Name}, f.Args...)...)
	cmd.Env = append([]string(nil), env...)
	for k, val := range f.Env {
		cmd.Env = append(cmd.Env, k+"="+val)
	}
	cmd.Stdin = bytes.NewReader(f.Stdin())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	if started != nil {
		close(started)
	}
	err = cmd.Wait()
	return out.String(), errb.String(), err
}

// post sends NDJSON lines to the relay's POST /events under tok.
func (p *relayProc) post(tok string, lines ...string) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", p.base+"/events", strings.NewReader(strings.Join(lines, "\n")+"\n"))
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("AEP-Version", "0.1")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(resp.Body)
		p.t.Fatalf("POST /events: %d %s", resp.StatusCode, b)
	}
}

// ev is one event line of session on host devbox, agent claude-code, at
// time t, with the given type, seq and the rest of its members (capture,
// run, data...) as JSON members after a comma.
func ev(session string, seq int, typ string, t time.Time, rest string) string {
	id := fmt.Sprintf("%s-%06d", session, seq)
	src := "aep://devbox/agent/claude-code/session/" + session
	if rest != "" {
		rest = "," + rest
	}
	return fmt.Sprintf(`{"aep":"0.1","id":%q,"type":%q,"time":%q,"source":%q,"agent":"claude-code","session":%q,"seq":%d,"epoch":0%s}`,
		id, typ, t.UTC().Format("2006-01-02T15:04:05.000Z"), src, session, seq, rest)
}
