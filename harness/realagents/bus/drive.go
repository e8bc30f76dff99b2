package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/adapters/sse"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Server is one pinned bus server.
type Server struct {
	Agent, Vendor    string // fixtures folder, follow verb word
	Package, Version string // npm
	Bin              string // the command in node_modules/.bin
	ConfigDir        string // under XDG_CONFIG_HOME
	Scenarios        []Scenario
}

// Scenario is one scripted session against a server.
type Scenario struct {
	Name, Description string
	Facts             truth.Facts
	// Differs holds, by Server.Agent, the facts of a server that lives
	// the scenario differently (Kilo queues a steering prompt as a turn
	// of its own).
	Differs map[string]truth.Facts
	// Model answers by marker, one reply per round of the turn.
	Model map[string][]fakemodel.Reply
	// Script, when set, makes a fresh model script for each recording
	// instead (replies that depend on the calls so far: retries).
	Script func() fakemodel.Script
	// Drive runs the session through the server's REST API.
	Drive func(d *Driver) error
	// Control runs the bridge with control on, linked to a real relay the
	// driver answers through (Driver.Answer, Driver.CancelRun);
	// RelayDown points it at a port nothing listens on instead.
	Control, RelayDown bool
	// Plugin holds, by Server.Agent ("*": both), the facts aep-hook's
	// plugin channel can honestly meet where the plugin cannot see all
	// the stream does; PluginWhy says what it cannot see.
	Plugin    map[string]truth.Facts
	PluginWhy string
}

// pluginFacts are the facts the plugin record of agent's recording is
// held to (stream: the stream's).
func (sc Scenario) pluginFacts(agent string, stream truth.Facts) *truth.Facts {
	if f, ok := sc.Plugin[agent]; ok {
		return &f
	}
	if f, ok := sc.Plugin["*"]; ok {
		return &f
	}
	return &stream
}

// password is the server password every recording uses.
const password = "aep-real"

// Driver drives one server through a scenario and watches its stream.
type Driver struct {
	Base     string
	user     string
	stop     func()
	start    func() error
	connects func() int64
	hold     *gate

	mu     sync.Mutex
	cond   *sync.Cond
	events []gjson.Result
	next   int // events before next were consumed by a Wait
	opens  int // streams the driver's own watch opened
	opened int // len(events) when the last of them opened
	sid    string
	relay  string // the relay's WebSocket URL, in a control scenario
}

// gate refuses the bridge's stream requests while closed, so a scenario
// can keep the bridge away from the server for a while.
type gate struct {
	next   http.Handler
	closed atomic.Bool
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.closed.Load() && isStream(r.URL.Path) {
		http.Error(w, "held by the driver", http.StatusServiceUnavailable)
		return
	}
	g.next.ServeHTTP(w, r)
}

// call does one REST request and returns its body.
func (d *Driver) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.Base+path, rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(d.user, password)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 3 * time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, out)
	}
	return out, nil
}

// Session creates a session and makes it the driver's.
func (d *Driver) Session() (string, error) {
	b, err := d.call(http.MethodPost, "/session", map[string]any{})
	if err != nil {
		return "", err
	}
	d.sid = gjson.GetBytes(b, "id").String()
	return d.sid, nil
}

// Prompt sends text to the driver's session without waiting.
func (d *Driver) Prompt(text string) error {
	_, err := d.call(http.MethodPost, "/session/"+d.sid+"/prompt_async",
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}})
	return err
}

// Wait returns the next event (after the ones earlier Waits consumed) of
// type typ in the driver's session.
func (d *Driver) Wait(typ string, timeout time.Duration) (gjson.Result, error) {
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() { d.mu.Lock(); d.cond.Broadcast(); d.mu.Unlock() })
	defer timer.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		for ; d.next < len(d.events); d.next++ {
			ev := d.events[d.next]
			s := ev.Get("properties.sessionID").String()
			if ev.Get("type").String() == typ && (s == "" || s == d.sid) {
				d.next++
				return ev, nil
			}
		}
		if time.Now().After(deadline) {
			var last []string
			for i := len(d.events) - 1; i >= 0 && len(last) < 16; i-- {
				if t := d.events[i].Get("type").String(); t != "server.heartbeat" && t != "sync" {
					last = append([]string{t}, last...)
				}
			}
			return gjson.Result{}, fmt.Errorf("no %s within %v (%d events, %d consumed; the last ones but heartbeats: %s)",
				typ, timeout, len(d.events), d.next, strings.Join(last, " "))
		}
		d.cond.Wait()
	}
}

// Idle waits for the session's next session.idle.
func (d *Driver) Idle() error { _, err := d.Wait("session.idle", 4*time.Minute); return err }

// Settled waits for idles until the session's last user message has a
// completed answer: a server that queues prompts (Kilo) goes idle once
// per turn before it takes the queued one.
func (d *Driver) Settled() error {
	for {
		if err := d.Idle(); err != nil {
			return err
		}
		b, err := d.call(http.MethodGet, "/session/"+d.sid+"/message", nil)
		if err != nil {
			return err
		}
		var user string
		answered := map[string]bool{}
		for _, m := range gjson.ParseBytes(b).Array() {
			switch info := m.Get("info"); info.Get("role").String() {
			case "user":
				user = info.Get("id").String()
			case "assistant":
				if info.Get("time.completed").Exists() {
					answered[info.Get("parentID").String()] = true
				}
			}
		}
		if answered[user] {
			return nil
		}
	}
}

// ReplyPermission answers a permission request.
func (d *Driver) ReplyPermission(id, reply string) error {
	_, err := d.call(http.MethodPost, "/permission/"+id+"/reply", map[string]any{"reply": reply})
	return err
}

// ReplyQuestion answers a question request with labels per question.
func (d *Driver) ReplyQuestion(id string, answers [][]string) error {
	_, err := d.call(http.MethodPost, "/question/"+id+"/reply", map[string]any{"answers": answers})
	return err
}

// Abort aborts the session's turn.
func (d *Driver) Abort() error {
	_, err := d.call(http.MethodPost, "/session/"+d.sid+"/abort", map[string]any{})
	return err
}

// Restart stops the server (SIGTERM), starts it again on the same home,
// and waits until the bridge has reconnected (a fresh server holds the
// requests it accepted while booting: the bridge gives up on them and
// dials again).
func (d *Driver) Restart() error {
	before := d.connects()
	if err := d.RestartServer(); err != nil {
		return err
	}
	return d.reconnected(before)
}

// RestartServer stops the server (SIGTERM) and starts it again on the same
// home, without waiting for the bridge; it returns once the driver's own
// watch follows the new server. Events of the stopped server are consumed:
// later Waits see only the new server's (Kilo closes a turn cut by SIGTERM
// itself, and that idle must not end the next turn's wait).
func (d *Driver) RestartServer() error {
	d.stop()
	d.mu.Lock()
	mark := d.opens // every later open reaches the new server
	d.mu.Unlock()
	if err := d.start(); err != nil {
		return err
	}
	deadline := time.AfterFunc(time.Minute, func() { d.mu.Lock(); d.cond.Broadcast(); d.mu.Unlock() })
	defer deadline.Stop()
	begin := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.opens == mark {
		if time.Since(begin) >= time.Minute {
			return errors.New("the driver's watch did not reach the restarted server within 1m")
		}
		d.cond.Wait()
	}
	d.next = max(d.next, d.opened)
	return nil
}

// HoldBridge refuses the bridge's stream requests (it keeps retrying)
// until ReleaseBridge.
func (d *Driver) HoldBridge() { d.hold.closed.Store(true) }

// ReleaseBridge lets the bridge connect again and waits until it has.
func (d *Driver) ReleaseBridge() error {
	before := d.connects()
	d.hold.closed.Store(false)
	return d.reconnected(before)
}

// reconnected waits until the bridge connected more than before times.
func (d *Driver) reconnected(before int64) error {
	deadline := time.Now().Add(2 * time.Minute)
	for d.connects() <= before {
		if time.Now().After(deadline) {
			return errors.New("the bridge did not reconnect within 2m")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// watching waits until the driver's own watch has opened its stream.
func (d *Driver) watching() error {
	deadline := time.AfterFunc(time.Minute, func() { d.mu.Lock(); d.cond.Broadcast(); d.mu.Unlock() })
	defer deadline.Stop()
	begin := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.opens == 0 {
		if time.Since(begin) >= time.Minute {
			return errors.New("the driver's watch did not reach the server within 1m")
		}
		d.cond.Wait()
	}
	return nil
}

// watch reads the server's own /event into the driver until ctx ends,
// reconnecting across restarts.
func (d *Driver) watch(ctx context.Context) {
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.Base+"/event", nil)
		req.SetBasicAuth(d.user, password)
		resp, err := watchClient.Do(req)
		if err == nil {
			d.mu.Lock()
			d.opens++
			d.opened = len(d.events)
			d.cond.Broadcast()
			d.mu.Unlock()
			rd := sse.NewReader(resp.Body, opencode.MaxEvent)
			for {
				ev, err := rd.Next()
				if err != nil {
					break
				}
				d.mu.Lock()
				d.events = append(d.events, gjson.ParseBytes(ev.Data))
				d.cond.Broadcast()
				d.mu.Unlock()
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// watchClient gives up soon on a stream whose headers do not come (a
// server shutting down or still booting accepts and never answers): the
// server replays nothing, so the watch must not miss a turn after a
// restart.
var watchClient = &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 2 * time.Second}}

// Record runs one scenario against the real server, replays its tape and
// returns the truth checker's findings; a true tape replaces
// fixtures/<agent>/recorded/<scenario>/, an untrue one is left out.
func Record(h *realagents.Harness, srv Server, sc Scenario) ([]string, error) {
	if err := h.Install(&realagents.Agent{Name: srv.Agent, Package: srv.Package, Version: srv.Version, Bin: srv.Bin}); err != nil {
		return nil, err
	}
	bin := filepath.Join(h.Cache, srv.Agent+"-"+srv.Version, "node_modules", ".bin", srv.Bin)
	tmp, err := os.MkdirTemp("", "aep-bus-")
	if err != nil {
		return nil, err
	}
	if os.Getenv("AEP_REAL_KEEP") == "" {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Fprintf(h.Log, "keeping %s\n", tmp)
	}
	home, proj := filepath.Join(tmp, "home"), filepath.Join(tmp, "proj")
	os.MkdirAll(proj, 0o755)
	script := fakemodel.Turns(sc.Model)
	if sc.Script != nil {
		script = sc.Script()
	}
	model, err := fakemodel.Start(fakemodel.ChatCompletions, script, nil)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	cfg := map[string]any{
		"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": model.URL + "/v1", "apiKey": "sk-fake"},
			"models":  map[string]any{"m1": map[string]any{"name": "m1"}}}},
		"model": "fake/m1", "small_model": "fake/m1", "autoupdate": false, "share": "disabled",
		"permission": map[string]any{"bash": map[string]any{"*": "ask", "echo *": "allow"}},
	}
	cb, _ := json.Marshal(cfg)
	cdir := filepath.Join(home, ".config", srv.ConfigDir)
	os.MkdirAll(cdir, 0o755)
	os.WriteFile(filepath.Join(cdir, "opencode.json"), cb, 0o644)
	os.WriteFile(filepath.Join(cdir, "kilo.json"), cb, 0o644)
	prof := opencode.Profiles[srv.Vendor]
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), prof.PasswordEnv+"="+password,
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1")
	// aep-hook's plugin, placed as `aep-hook install` places it, forwards
	// to the harness recorder (which pipes on into aep-hook forward).
	plugDir := filepath.Join(tmp, "plugin")
	env = append(env, realagents.EnvRecordDir+"="+plugDir, realagents.EnvAEPHook+"="+h.AEPHook,
		"AEP_HOME="+filepath.Join(tmp, "aep-plugin"), "AEP_HOST=rec")
	if err := placePlugin(h, srv, home, proj, env); err != nil {
		return nil, err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var server *exec.Cmd
	start := func() error {
		server = exec.Command(bin, "serve", "--port", fmt.Sprint(port), "--hostname", "127.0.0.1")
		server.Dir, server.Env = proj, env
		if lf, err := os.OpenFile(filepath.Join(tmp, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			server.Stdout, server.Stderr = lf, lf
		}
		if err := server.Start(); err != nil {
			return err
		}
		return waitHealth(base, prof.User)
	}
	stop := func() {
		if server != nil && server.Process != nil {
			server.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { server.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				server.Process.Kill()
				<-done
			}
			server = nil
		}
	}
	if err := start(); err != nil {
		stop()
		return nil, err
	}
	defer stop()
	// The tape is written beside the run and replaces the committed one
	// only when its replay holds true.
	dir := filepath.Join(tmp, "tape")
	upstream, _ := url.Parse(base)
	rec := NewRecorder(upstream, dir)
	rel := strings.TrimPrefix(tmp, "/")
	rw := strings.NewReplacer(proj, "/home/user/proj", home, "/home/user", tmp, "/tmp/real", rel, "tmp/real")
	rec.Rewrite = func(b []byte) []byte { return []byte(rw.Replace(string(b))) }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hold := &gate{next: rec}
	front := &http.Server{Handler: hold}
	go front.Serve(ln)
	defer front.Close()
	frontURL, _ := url.Parse("http://" + ln.Addr().String())
	scfg := shim.Config{Home: filepath.Join(tmp, "aep"), Host: "rec"}
	v, _ := mapping.Lookup(prof.Table)
	em := scfg.NewFileEmitter(redact.DefaultPolicy())
	bridge := &opencode.Bridge{Base: frontURL, User: prof.User, Password: password, Mode: mapping.Primary}
	runner := &follow.Runner{Name: prof.Table, Handle: em.Handler(v), MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
		Cursor: follow.FileCursor{Path: filepath.Join(tmp, "cursor")},
		Source: bridge}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relayURL := ""
	if sc.Control {
		link, url, stopLink, err := controlLink(ctx, h.AEPHook, tmp, sc.RelayDown, v, em, bridge)
		if err != nil {
			return nil, err
		}
		defer stopLink()
		runner.Handle = link.Handler(runner.Handle, bridge.Deliver)
		relayURL = url
	}
	ran := make(chan struct{})
	go func() { runner.Run(ctx); close(ran) }()
	d := &Driver{Base: base, user: prof.User, hold: hold, relay: relayURL}
	d.cond = sync.NewCond(&d.mu)
	d.stop, d.start = stop, start
	d.connects = func() int64 { return runner.Stats().Connects }
	go d.watch(ctx)
	// Both streams follow the server before the session exists: the
	// server replays nothing, and a bridge that connects after
	// session.created never sees the session start.
	if err := d.reconnected(0); err != nil {
		return nil, err
	}
	if err := d.watching(); err != nil {
		return nil, err
	}
	started := time.Now()
	if _, err := d.Session(); err != nil {
		return nil, err
	}
	derr := sc.Drive(d)
	time.Sleep(2 * time.Second) // the bridge reads the last events through the proxy
	cancel()
	<-ran
	if derr != nil {
		return nil, fmt.Errorf("%s/%s: %w", srv.Agent, sc.Name, derr)
	}
	// The server's exit closes the plugin's pipe: every forwarder then
	// reads to the end.
	stop()
	t := Tape{Agent: srv.Agent, Vendor: srv.Vendor, Version: srv.Version, Scenario: sc.Name,
		Description: sc.Description, RecordedAt: time.Now().UTC().Add(time.Minute), Facts: sc.Facts}
	if f, ok := sc.Differs[srv.Agent]; ok {
		t.Facts = f
	}
	t.Plugin = sc.pluginFacts(srv.Agent, t.Facts)
	if !reflect.DeepEqual(*t.Plugin, t.Facts) {
		t.PluginWhy = sc.PluginWhy
	}
	if err := rec.Save(t); err != nil {
		return nil, err
	}
	lines, err := collectPlugin(plugDir, rec.Rewrite)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: plugin: %w", srv.Agent, sc.Name, err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s/%s: the plugin forwarded nothing (not loaded? see the server log)", srv.Agent, sc.Name)
	}
	if err := realagents.WriteStreamLines(filepath.Join(dir, PluginFile), lines); err != nil {
		return nil, err
	}
	fmt.Fprintf(h.Log, "recorded %s/%s in %v\n", srv.Agent, sc.Name, time.Since(started).Round(time.Second))
	tp, err := LoadTape(dir)
	if err != nil {
		return nil, err
	}
	res := Replay(tp, filepath.Join(tmp, "replay"), nil)
	pres := ReplayPlugin(h.AEPHook, tp, filepath.Join(tmp, "replay-plugin"), nil)
	for _, p := range pres.Problems {
		res.Problems = append(res.Problems, "plugin: "+p)
	}
	if len(res.Problems) > 0 {
		return res.Problems, nil
	}
	return nil, install(dir, filepath.Join(h.Fixtures, srv.Agent, "recorded", sc.Name))
}

// install replaces the fixture folder dst with the files of src.
func install(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHealth waits for the server to answer its health route.
func waitHealth(base, user string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, base+"/global/health", nil)
		req.SetBasicAuth(user, password)
		c := &http.Client{Timeout: 5 * time.Second}
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return errors.New("server did not answer /global/health in 2m")
}

// askDB prompts the question scenario and waits for the server's
// question.asked: the model's one select question (dbQuestion).
func (d *Driver) askDB() (gjson.Result, error) {
	if err := d.Prompt("SCENARIO:question ask me"); err != nil {
		return gjson.Result{}, err
	}
	return d.Wait("question.asked", 3*time.Minute)
}

// dbQuestion is the model of the question scenarios: the question tool
// asks one select question (PG or SQLite), then the model says after.
func dbQuestion(after string) map[string][]fakemodel.Reply {
	return map[string][]fakemodel.Reply{"question": {tool("question", obj{"questions": []any{obj{"question": "Which db?", "header": "DB",
		"options": []any{obj{"label": "PG", "description": "postgres"}, obj{"label": "SQLite", "description": "file"}}}}}), say(after)}}
}
