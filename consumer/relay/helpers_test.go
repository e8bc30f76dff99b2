package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/harness/relaytest"
)

// bin is the aep-hook binary the tests run, built once.
var bin string

func TestMain(m *testing.M) {
	relaytest.Main(m, "aep-relay-e2e-", func(dir string) error {
		bin = filepath.Join(dir, "aep-hook")
		return relaytest.Build(bin, "../../cmd/aep-hook", relaytest.Race)
	})
}

// wait bounds every wait for something the relay must do: a failure
// bound against a hang, never a measure of speed.
const wait = 20 * time.Second

// relayProc is one running `aep-hook relay`.
type relayProc struct {
	t    *testing.T
	home string
	base string // http://127.0.0.1:PORT
	addr string
	proc *relaytest.Proc
	cmd  *exec.Cmd
	// token is the user's own token of a relay started without --tokens
	// or --open (its default identity): the helpers present it when a
	// test gives no token, as the user's tools do.
	token string
}

// startRelay runs the relay on an ephemeral port over home (a fresh one
// when ""), with args, and waits for it to listen.
func startRelay(t *testing.T, home string, args ...string) *relayProc {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	proc, addr := relaytest.StartRelay(t, relaytest.Relay{
		Bin:  bin,
		Env:  append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=relay-test"),
		Args: args,
		Wait: wait,
	})
	p := &relayProc{t: t, home: home, base: "http://" + addr, addr: addr, proc: proc, cmd: proc.Cmd}
	if !slices.Contains(args, "--tokens") && !slices.Contains(args, "--open") {
		p.token = relaytest.UserToken(t, home)
	}
	return p
}

// or is token, or the user's own token when the test gave none.
func (p *relayProc) or(token string) string {
	if token == "" {
		return p.token
	}
	return token
}

func (p *relayProc) output() string { return p.proc.Output() }

// stop ends the relay with SIGTERM and returns its exit error.
func (p *relayProc) stop() error { return p.proc.Stop(syscall.SIGTERM, wait) }

// kill ends the relay with SIGKILL.
func (p *relayProc) kill() { p.proc.Kill() }

// tokensFile writes lines as a private tokens file in a fresh folder.
func tokensFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mkEvent is one event line: sequenced when seq >= 0.
func mkEvent(typ, agent, session string, seq int, extra string) string {
	src := "aep://h/agent/" + agent
	pos := ""
	if session != "" {
		src += "/session/" + session
		pos = fmt.Sprintf(`,"session":%q`, session)
		if seq >= 0 {
			pos += fmt.Sprintf(`,"seq":%d,"epoch":0`, seq)
		}
	}
	return fmt.Sprintf(`{"aep":"0.1","id":"%s-%s-%d","type":%q,"time":"2026-07-03T10:15:04.221Z","source":%q,"agent":%q%s%s}`,
		agent, session, seq, typ, src, agent, pos, extra)
}

// post sends body to /events and returns the status and the decoded body.
func (p *relayProc) post(body, ctype, token string, hdr ...string) (int, map[string]any) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", p.base+"/events", strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("AEP-Version", "0.1")
	if token = p.or(token); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func (p *relayProc) get(path, token string) (int, []byte) {
	p.t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	if token = p.or(token); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// sseMsg is one SSE message, or a comment (Comment set).
type sseMsg struct {
	Event, ID, Data string
	HasID           bool
	Comment         string
}

// sseStream is a real SSE client reading one /stream response.
type sseStream struct {
	t      *testing.T
	Status int
	Body   []byte // the error body when Status is not 200
	msgs   chan sseMsg
	cancel context.CancelFunc
	done   chan struct{}
}

// stream opens /stream with query q and headers hdr (name, value pairs).
func (p *relayProc) stream(q url.Values, hdr ...string) *sseStream {
	p.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := p.base + "/stream"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	if p.token != "" && q.Get("access_token") == "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		p.t.Fatal(err)
	}
	s := &sseStream{t: p.t, Status: resp.StatusCode, msgs: make(chan sseMsg, 100000), cancel: cancel, done: make(chan struct{})}
	p.t.Cleanup(s.close)
	if resp.StatusCode != 200 {
		s.Body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		close(s.msgs)
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		defer close(s.msgs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var m sseMsg
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m.Event != "" || m.Data != "" {
					s.msgs <- m
				}
				m = sseMsg{}
			case strings.HasPrefix(line, ":"):
				s.msgs <- sseMsg{Comment: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				m.Event = line[7:]
			case strings.HasPrefix(line, "id: "):
				m.ID, m.HasID = line[4:], true
			case strings.HasPrefix(line, "data: "):
				m.Data = line[6:]
			}
		}
	}()
	return s
}

func (s *sseStream) close() {
	s.cancel()
	<-s.done
}

// next returns the next event message (comments skipped unless
// comments), failing after wait.
func (s *sseStream) next(comments bool) sseMsg {
	s.t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("the stream ended")
			}
			if m.Comment != "" && !comments {
				continue
			}
			return m
		case <-timer.C:
			s.t.Fatalf("no SSE message within %s", wait)
		}
	}
}

// events reads n event messages.
func (s *sseStream) events(n int) []sseMsg {
	s.t.Helper()
	out := make([]sseMsg, 0, n)
	for len(out) < n {
		out = append(out, s.next(false))
	}
	return out
}

// rest reads every message until the stream ends (live=0).
func (s *sseStream) rest() []sseMsg {
	s.t.Helper()
	var out []sseMsg
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				return out
			}
			out = append(out, m)
		case <-timer.C:
			s.t.Fatalf("the stream did not end within %s", wait)
		}
	}
}

// wsClient is a real WebSocket client on /socket.
type wsClient struct {
	t  *testing.T
	c  *websocket.Conn
	in chan wsFrame
}

type wsFrame struct {
	raw    []byte
	m      map[string]any
	err    error // the read error that ended the connection
	binary bool
}

func (f wsFrame) typ() string {
	s, _ := f.m["type"].(string)
	return s
}

func (f wsFrame) str(k string) string {
	s, _ := f.m[k].(string)
	return s
}

// dial opens /socket (with a bearer token when token is set, through
// the query when query is true) and starts reading.
func (p *relayProc) dial(token string, hdr ...string) (*wsClient, *http.Response, error) {
	u := "ws://" + p.addr + "/socket"
	h := http.Header{}
	if token = p.or(token); token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, resp, err
	}
	c.SetReadLimit(64 << 20)
	w := &wsClient{t: p.t, c: c, in: make(chan wsFrame, 100000)}
	go func() {
		defer close(w.in)
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				w.in <- wsFrame{err: err}
				return
			}
			f := wsFrame{raw: b, binary: typ == websocket.MessageBinary}
			json.Unmarshal(b, &f.m)
			w.in <- f
		}
	}()
	p.t.Cleanup(func() { c.CloseNow() })
	return w, resp, nil
}

// mustDial dials and sends a hello with role and agent.
func (p *relayProc) mustDial(token, role, agent string, caps string) *wsClient {
	p.t.Helper()
	w, _, err := p.dial(token)
	if err != nil {
		p.t.Fatal(err)
	}
	if caps == "" {
		caps = "{}"
	}
	w.send(fmt.Sprintf(`{"type":"hello","versions":["0.1"],"role":%q,"identity":{"agent":%q,"instance":"test"},"capabilities":%s}`, role, agent, caps))
	if h := w.expect("hello"); len(h.m["versions"].([]any)) != 1 {
		p.t.Fatalf("hello reply %s", h.raw)
	}
	return w
}

func (w *wsClient) send(s string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatalf("send: %v", err)
	}
}

// next returns the next frame (pings answered and skipped).
func (w *wsClient) next() wsFrame {
	w.t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-w.in:
			if !ok {
				w.t.Fatalf("the connection ended")
			}
			if f.typ() == "ping" {
				w.send(fmt.Sprintf(`{"type":"pong","t":%v}`, f.m["t"]))
				continue
			}
			return f
		case <-timer.C:
			w.t.Fatalf("no frame within %s", wait)
		}
	}
}

// expect returns the next frame, which must be of type typ.
func (w *wsClient) expect(typ string) wsFrame {
	w.t.Helper()
	f := w.next()
	if f.err != nil || f.typ() != typ {
		w.t.Fatalf("want a %s frame, got %s (err %v)", typ, f.raw, f.err)
	}
	return f
}

// until returns the frames up to and including the first for which stop
// is true.
func (w *wsClient) until(stop func(wsFrame) bool) []wsFrame {
	w.t.Helper()
	var out []wsFrame
	for {
		f := w.next()
		if f.err != nil {
			w.t.Fatalf("connection ended (%v) after %d frames", f.err, len(out))
		}
		out = append(out, f)
		if stop(f) {
			return out
		}
	}
}

// closed waits for the connection to end and returns its close error.
func (w *wsClient) closed() (frames []wsFrame, err error) {
	w.t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-w.in:
			if !ok {
				return frames, nil
			}
			if f.err != nil {
				return frames, f.err
			}
			frames = append(frames, f)
		case <-timer.C:
			w.t.Fatalf("the connection did not end within %s", wait)
		}
	}
}

// auditLines reads the relay's audit log.
func (p *relayProc) auditLines() []map[string]any {
	b, _ := os.ReadFile(filepath.Join(p.home, "relay", "audit.jsonl"))
	var out []map[string]any
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// postQuiet posts one event and reports the status, 0 when the relay is
// gone.
func (p *relayProc) postQuiet(body string) (int, error) {
	req, _ := http.NewRequest("POST", p.base+"/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("AEP-Version", "0.1")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
