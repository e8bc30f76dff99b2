//go:build linux

package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// The process tests of the attacks on aep-hook's local surfaces: each
// drives the built binary the way the attacker did.

// request sends method path to base with Host (when set) and headers, and
// returns the status and body.
func request(t *testing.T, method, url, host string, hdr map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func codexJSON(t *testing.T, ld plog.Logs) []byte {
	t.Helper()
	b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// logsUnder lists the session logs written under home.
func logsUnder(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	filepath.Walk(filepath.Join(home, "logs"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// After DNS rebinding a page is same-origin with the sidecar and can post
// a simple (preflight-free) JSON export and read /healthz; the sidecar now
// answers only requests that name it in Host, and refuses foreign
// origins.
func TestAttackSidecarRebinding(t *testing.T) {
	home := t.TempDir()
	s := startSidecar(t, home)
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	body := codexJSON(t, codexExport(1, 1, 0))
	auth := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + s.token}
	cases := []struct {
		name, method, path, host string
		hdr                      map[string]string
		want                     int
	}{
		{"rebound name posts", "POST", "/v1/logs", "attacker.example:" + port, auth, 403},
		{"rebound name reads health", "GET", "/healthz", "attacker.example:" + port, nil, 403},
		{"foreign origin posts", "POST", "/v1/logs", "", map[string]string{"Content-Type": "application/json",
			"Authorization": "Bearer " + s.token, "Origin": "http://attacker.example"}, 403},
		{"cross-site form post", "POST", "/v1/logs", "", map[string]string{"Content-Type": "application/json",
			"Authorization": "Bearer " + s.token, "Sec-Fetch-Site": "cross-site"}, 403},
	}
	for _, c := range cases {
		if got, b := request(t, c.method, s.url+c.path, c.host, c.hdr, body); got != c.want {
			t.Errorf("%s: status %d (%s), want %d", c.name, got, b, c.want)
		}
	}
	if l := logsUnder(t, home); len(l) != 0 {
		t.Fatalf("a refused request wrote %v", l)
	}
	if got, b := request(t, "GET", s.url+"/healthz", "localhost:"+port, nil, nil); got != 200 {
		t.Errorf("health by localhost: %d %s", got, b)
	}
	if got, b := request(t, "POST", s.url+"/v1/logs", "", auth, body); got != 200 {
		t.Errorf("the exporter's own post: %d %s", got, b)
	}
}

// Another local user could post into this user's sidecar: it now needs the
// per-user token, which only this user can read.
func TestAttackSidecarOtherUser(t *testing.T) {
	home := t.TempDir()
	s := startSidecar(t, home)
	body := codexJSON(t, codexExport(1, 1, 0))
	for _, tok := range []string{"", "guess"} {
		hdr := map[string]string{"Content-Type": "application/json"}
		if tok != "" {
			hdr["Authorization"] = "Bearer " + tok
		}
		if got, b := request(t, "POST", s.url+"/v1/logs", "", hdr, body); got != http.StatusUnauthorized {
			t.Errorf("token %q: status %d (%s), want 401", tok, got, b)
		}
	}
	if l := logsUnder(t, home); len(l) != 0 {
		t.Fatalf("an unauthenticated post wrote %v", l)
	}
	tokenPrivate(t, home)
	// The refusal is recorded where doctor shows it.
	if fs := failuresIn(t, filepath.Join(home, "internal", "errors.jsonl")); len(fs) == 0 || fs[0].Stage != "refused" {
		t.Errorf("refusals recorded: %+v", fs)
	}
	// --auth none is refused off loopback.
	cmd := exec.Command(bin, "otel", "--listen", "0.0.0.0:0", "--auth", "none")
	cmd.Env = hookEnv(t.TempDir(), t.TempDir())
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "off loopback needs the bearer token") {
		t.Errorf("--auth none off loopback: %v %s", err, out)
	}
}

// upstreamSpy is an HTTP upstream that records the Host of what reaches it.
type upstreamSpy struct {
	mu    sync.Mutex
	hosts []string
	auth  []string
}

func (u *upstreamSpy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.hosts = append(u.hosts, r.Host)
	u.auth = append(u.auth, r.Header.Get("Authorization")+"|"+r.Header.Get("Proxy-Authorization"))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
}

var teeAddr = regexp.MustCompile(`proxying http://(\S+) `)

// startTee runs `aep-hook VERB --listen 127.0.0.1:0 --upstream URL ARGS`
// and returns its base URL.
func startTee(t *testing.T, home, verb, upstream string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{verb, "--listen", "127.0.0.1:0", "--upstream", upstream}, args...)...)
	cmd.Env = hookEnv(home, t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	line, _ := bufio.NewReader(stderr).ReadString('\n')
	m := teeAddr.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("%s said %q", verb, line)
	}
	go io.Copy(io.Discard, stderr)
	return "http://" + m[1]
}

// The HTTP tees accepted any Host and rewrote it to the upstream's own,
// undoing the upstream's rebinding defence; now only requests addressed to
// the tee pass, and the tee's token (when required) is never forwarded.
func TestAttackTeesHost(t *testing.T) {
	for _, verb := range []string{"agui", "a2a"} {
		t.Run(verb, func(t *testing.T) {
			spy := &upstreamSpy{}
			up := httptest.NewServer(spy)
			defer up.Close()
			tee := startTee(t, t.TempDir(), verb, up.URL)
			port := tee[strings.LastIndex(tee, ":")+1:]
			rpc := []byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`)
			js := map[string]string{"Content-Type": "application/json"}
			for _, c := range []struct {
				name, host string
				hdr        map[string]string
			}{
				{"rebound name", "attacker.example:" + port, js},
				{"foreign origin", "", map[string]string{"Content-Type": "application/json", "Origin": "http://attacker.example"}},
			} {
				if got, b := request(t, "POST", tee+"/", c.host, c.hdr, rpc); got != 403 {
					t.Errorf("%s: status %d (%s), want 403", c.name, got, b)
				}
			}
			if len(spy.hosts) != 0 {
				t.Fatalf("refused requests reached the upstream: %v", spy.hosts)
			}
			if got, b := request(t, "POST", tee+"/", "", js, rpc); got != 200 {
				t.Fatalf("the client's own request: %d %s", got, b)
			}
			if want := strings.TrimPrefix(up.URL, "http://"); len(spy.hosts) != 1 || spy.hosts[0] != want {
				t.Errorf("upstream saw Host %v, want %s", spy.hosts, want)
			}
		})
	}
	// With --auth token, the token rides in Proxy-Authorization (or
	// Authorization) and never reaches the upstream; the client's own
	// Authorization for the upstream does.
	spy := &upstreamSpy{}
	up := httptest.NewServer(spy)
	defer up.Close()
	home := t.TempDir()
	tee := startTee(t, home, "agui", up.URL, "--auth", "token")
	tokb, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(tokb))
	if got, _ := request(t, "POST", tee+"/", "", map[string]string{"Content-Type": "application/json"}, []byte("{}")); got != 401 {
		t.Errorf("no token: %d, want 401", got)
	}
	request(t, "POST", tee+"/", "", map[string]string{"Proxy-Authorization": "Bearer " + tok, "Authorization": "Bearer agent-key"}, []byte("{}"))
	request(t, "POST", tee+"/", "", map[string]string{"Authorization": "Bearer " + tok}, []byte("{}"))
	if want := []string{"Bearer agent-key|", "|"}; strings.Join(spy.auth, ",") != strings.Join(want, ",") {
		t.Errorf("upstream saw credentials %q, want %q", spy.auth, want)
	}
}

// After logrotate moved a session's log aside and its state was swept or
// truncated, the next hook wrote (epoch 0, seq 0) again; a corrupt state
// with an emptied log seeded its epoch from Unix seconds, below the
// microseconds a write without the lock had used. One clock rule now
// gives every such session a higher epoch than any it could have used.
func TestAttackPositionsNeverRepeat(t *testing.T) {
	home := t.TempDir()
	env := hookEnv(home, t.TempDir())
	logPath := filepath.Join(home, "logs", "codex", "s.jsonl")
	state := statePath(home, "codex", "s")
	var used [][2]int64
	hook := func(i int) {
		t.Helper()
		if r := runHook(t, env, codexTool("s", i), "codex"); r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	}
	rotate := func() {
		used = append(used, positionsOf(t, logPath)...)
		if err := os.Rename(logPath, logPath+".1"); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name string) {
		t.Helper()
		ps := append(append([][2]int64(nil), used...), positionsOf(t, logPath)...)
		seen := map[[2]int64]bool{}
		for i, p := range ps {
			if seen[p] {
				t.Fatalf("%s: position %v used twice (%v)", name, p, ps)
			}
			seen[p] = true
			if i > 0 && (p[0] < ps[i-1][0] || p[0] == ps[i-1][0] && p[1] <= ps[i-1][1]) {
				t.Fatalf("%s: position %v after %v", name, p, ps[i-1])
			}
		}
	}
	for i := range 3 {
		hook(i)
	}
	// logrotate moves the log aside; the state is swept.
	rotate()
	os.Remove(state)
	hook(3)
	check("log rotated, state swept")
	// logrotate again; the state file is truncated.
	rotate()
	os.WriteFile(state, nil, 0o600)
	hook(4)
	check("log rotated, state truncated")
	// A write that cannot use the state (a folder there) takes a clock
	// epoch; then the state is corrupt and the log emptied.
	os.Remove(state)
	os.Mkdir(state, 0o700)
	hook(5)
	check("unusable state")
	os.Remove(state)
	os.WriteFile(state, []byte("{garbage"), 0o600)
	used = append(used, positionsOf(t, logPath)...)
	os.WriteFile(logPath, nil, 0o600) // copytruncate
	hook(6)
	check("corrupt state, emptied log")
}

// When the editor closed both pipes while the agent ran, the tee died of
// SIGPIPE and its agent was left running under init. The tee now survives
// the closed pipe, closes the agent's stdin, gives it a bounded time, stops
// it, and exits as the agent did.
func TestAttackACPEditorGone(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "agent.pid")
	// An agent that ignores SIGPIPE and the end of its input and keeps
	// writing: the worst case for an orphan.
	script := `trap "" PIPE; echo $$ > ` + pidFile + `; while :; do echo '{"jsonrpc":"2.0","method":"x"}' 2>/dev/null; sleep 0.05; done`
	cmd := exec.Command(bin, "acp", "--", "sh", "-c", script)
	cmd.Env = hookEnv(t.TempDir(), t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(stdout).ReadString('\n') // the agent runs and writes
	stdin.Close()
	stdout.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second): // a safety net, far above the tee's bound
		cmd.Process.Kill()
		t.Fatal("the tee did not exit after its editor went away")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() && ws.Signal() == syscall.SIGPIPE {
		t.Fatalf("the tee died of SIGPIPE: %v", err)
	}
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the tee ended %v, want as the agent did (stopped by SIGTERM)", err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("agent pid %q", b)
	}
	if syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the agent %d was left running", pid)
	}
}

// install --otel writes the sidecar's token where the vendor sends
// exporter headers: Codex's [otel] exporter headers, and for VS Code an
// environment file with OTEL_EXPORTER_OTLP_HEADERS; what it writes is what
// the sidecar accepts, and the files holding it are the user's alone.
func TestAttackInstallOTelToken(t *testing.T) {
	home := t.TempDir()
	aepHome := filepath.Join(home, ".aep")
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"gpt-5\"\n"), 0o644)
	var out []byte
	for _, args := range [][]string{{"codex"}, {"vscode", "--scope", "project"}} {
		cmd := exec.Command(bin, append([]string{"install", "--otel", "--binary", bin}, args...)...)
		cmd.Env = []string{"HOME=" + home, "AEP_HOME=" + aepHome, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir()}
		cmd.Dir = t.TempDir()
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("install --otel %v: %v\n%s", args, err, o)
		}
		out = append(out, o...)
	}
	tokb, _ := os.ReadFile(filepath.Join(aepHome, "token"))
	tok := strings.TrimSpace(string(tokb))
	if tok == "" || strings.Contains(string(out), tok) {
		t.Fatalf("token %q; install printed it: %v\n%s", tok, strings.Contains(string(out), tok), out)
	}
	cfg, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	env, _ := os.ReadFile(filepath.Join(aepHome, "otel.env"))
	if !strings.Contains(string(cfg), `headers = { authorization = "Bearer `+tok+`" }`) || !strings.Contains(string(cfg), `model = "gpt-5"`) {
		t.Errorf("config.toml:\n%s", cfg)
	}
	if !strings.Contains(string(env), "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20"+tok+"\n") {
		t.Errorf("otel.env:\n%s", env)
	}
	for _, p := range []string{filepath.Join(home, ".codex", "config.toml"), filepath.Join(aepHome, "otel.env")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s holds the token with mode %v", p, fi.Mode())
		}
	}
	// The sidecar of that home takes exactly that header.
	s := startSidecar(t, aepHome)
	body := codexJSON(t, codexExport(1, 1, 0))
	if got, _ := request(t, "POST", s.url+"/v1/logs", "", map[string]string{"Content-Type": "application/json", "authorization": "Bearer " + tok}, body); got != 200 {
		t.Errorf("the configured header: %d", got)
	}
}

// tokenPrivate checks the user's token file under home is 0600 and, when
// the test runs as root, that another uid cannot read it.
func tokenPrivate(t *testing.T, home string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(home, "token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	if os.Getuid() == 0 {
		// As another uid, the token file cannot be read.
		os.Chmod(home, 0o755)
		cat := exec.Command("cat", filepath.Join(home, "token"))
		cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := cat.CombinedOutput(); err == nil {
			t.Errorf("another user read the token: %q", out)
		}
	}
}
