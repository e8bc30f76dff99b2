package realagents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// kimiWebAgent drives `kimi web` (the Kimi Code CLI's server, the same
// install as kimi-code) with `aep-hook follow kimi-web --mode primary`
// attached through a recording proxy; the scenarios act over the server's
// REST API as its web UI would (prompts, approvals, answers, aborts), and
// the proxy's recording of the bridge's connections is the fixture.
func kimiWebAgent() *Agent {
	bash := func(cmd string) fakemodel.Reply { return calls(call("Bash", obj{"command": cmd})) }
	return &Agent{
		Name: "kimi-web", Package: "@moonshot-ai/kimi-code", Version: "2.1.0", Bin: "kimi",
		Cache: "kimi-code-2.1.0",
		API:   fakemodel.ChatCompletions,
		Setup: kimiWebSetup,
		Scenarios: []Scenario{
			{
				Name: "tools", Mode: "rest",
				Description: "kimi web: a command that succeeds and one that fails, each approved over REST",
				Facts:       truth.Facts{Turns: 1, Answers: 2},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"tools": {bash("echo hello"), bash("ls /nonexistent-dir"), say("One worked, one failed.")}}),
				Drive:       kimiWebTurn("SCENARIO:tools run them", "approved", "approved"),
			},
			kimiWebControlApprove(bash), kimiWebControlReject(bash), kimiWebControlCancel(bash),
			kimiWebControlQuestion(), kimiWebControlQuestionDismiss(), kimiWebControlDown(bash), kimiWebControlUI(bash),
			{
				Name: "approvals", Mode: "rest",
				Description: "kimi web: an approval rejected with feedback, then one granted (two prompts)",
				Facts:       truth.Facts{Turns: 2, Answers: 2},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"ask": {bash("echo approve-me > f.txt"), say("Asked.")}}),
				Drive: func(r *Run) error {
					return kimiWebSession(r, func(k *kimiWeb, sid string) error {
						if err := k.turn(sid, "SCENARIO:ask write the file", "rejected"); err != nil {
							return err
						}
						return k.turn(sid, "SCENARIO:ask write the file", "approved")
					})
				},
			},
			{
				Name: "question", Mode: "rest",
				Description: "kimi web: the model asks with AskUserQuestion, the answer comes over REST",
				Facts:       truth.Facts{Turns: 1, Answers: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"question": {calls(call("AskUserQuestion", obj{"questions": []obj{{
					"question": "Which env?", "header": "Env", "multi_select": false,
					"options": []obj{{"label": "dev", "description": "the dev stack"}, {"label": "prod", "description": "production"}},
				}}})), say("Deploying to dev.")}}),
				Drive: func(r *Run) error {
					return kimiWebSession(r, func(k *kimiWeb, sid string) error {
						q, err := k.ask(sid)
						if err != nil {
							return err
						}
						qs := q.Get("payload.questions.0")
						body := obj{"answers": obj{qs.Get("id").String(): obj{"kind": "single", "option_id": qs.Get("options.0.id").String()}}}
						if _, err := k.rest("POST", "/sessions/"+sid+"/questions/"+q.Get("payload.question_id").String(), body); err != nil {
							return err
						}
						return k.waitTurns(sid, 1)
					})
				},
			},
			{
				Name: "abort", Mode: "rest",
				Description: "kimi web: a long command, approved, then the prompt aborted over REST",
				Facts:       truth.Facts{Turns: 1, Answers: 1, Interrupts: 1},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"slow": {bash("sleep 30"), say("Slept.")}}),
				Drive: func(r *Run) error {
					return kimiWebSession(r, func(k *kimiWeb, sid string) error {
						pid, err := k.prompt(sid, "SCENARIO:slow take long")
						if err != nil {
							return err
						}
						if err := k.resolveApproval(sid, "approved", 1); err != nil {
							return err
						}
						if _, err := k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "tool.call.started" }, 1, time.Minute); err != nil {
							return err
						}
						time.Sleep(time.Second)
						if _, err := k.rest("POST", "/sessions/"+sid+"/prompts/"+pid+":abort", obj{}); err != nil {
							return err
						}
						return k.waitTurns(sid, 1)
					})
				},
			},
			{
				Name: "abort-pending", Mode: "rest",
				Description: "kimi web: the prompt is aborted over REST while its approval is still pending; the turn ends cancelled, then the server resolves the approval on its own",
				Facts:       truth.Facts{Turns: 1, Interrupts: 1, OpenTools: truth.Any},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"pending": {bash("touch never-made"), say("Never.")}}),
				Drive: func(r *Run) error {
					return kimiWebSession(r, func(k *kimiWeb, sid string) error {
						pid, err := k.prompt(sid, "SCENARIO:pending ask then abort")
						if err != nil {
							return err
						}
						if _, err := k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "event.approval.requested" }, 1, time.Minute); err != nil {
							return err
						}
						time.Sleep(time.Second)
						if _, err := k.rest("POST", "/sessions/"+sid+"/prompts/"+pid+":abort", obj{}); err != nil {
							return err
						}
						if err := k.waitTurns(sid, 1); err != nil {
							return err
						}
						// The server's own resolution of the approval follows
						// the turn's end.
						_, err = k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "event.approval.resolved" }, 1, 20*time.Second)
						if err != nil {
							r.Notes = append(r.Notes, "no event.approval.resolved after the abort: "+err.Error())
						}
						return nil
					})
				},
			},
			{
				Name: "retry", Mode: "rest",
				Description: "kimi web: the model API answers 500 once; Kimi retries the step and the turn completes",
				Facts:       truth.Facts{Turns: 1},
				Model:       failingOnce("retry", 500, say("Worked the second time.")),
				Drive:       kimiWebTurn("SCENARIO:retry try it"),
			},
			{
				Name: "api-error", Mode: "rest",
				Description: "kimi web: the model API refuses the request (400, which Kimi does not retry); the turn fails",
				Facts:       truth.Facts{Turns: 1, Failures: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if req.Marker == "apierror" {
						return fakemodel.Reply{Status: 400}
					}
					return say("Done.")
				},
				Drive: kimiWebTurn("SCENARIO:apierror fail"),
			},
			{
				Name: "reconnect", Mode: "rest",
				Description: "kimi web: the bridge's connection drops while an approval waits; the approval and the rest of the turn happen while it is away; it reconnects from its cursor",
				Facts:       truth.Facts{Turns: 1, Answers: 1},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"drop": {bash("echo across"), say("Done across a reconnect.")}}),
				Drive: func(r *Run) error {
					return kimiWebSession(r, func(k *kimiWeb, sid string) error {
						if _, err := k.prompt(sid, "SCENARIO:drop go"); err != nil {
							return err
						}
						if _, err := k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "event.approval.requested" }, 1, time.Minute); err != nil {
							return err
						}
						k.proxy.Hold(true)
						k.proxy.Drop()
						if err := k.resolveApproval(sid, "approved", 1); err != nil {
							return err
						}
						if err := k.waitIdle(sid, time.Minute); err != nil {
							return err
						}
						k.proxy.Hold(false)
						return k.waitTurns(sid, 1)
					})
				},
			},
			{
				Name: "restart", Mode: "rest",
				Description: "kimi web: a turn, the server stopped and started again on the same home and port, a second turn in the same session",
				Facts:       truth.Facts{Turns: 2, Answers: 2},
				Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"first": {bash("echo one"), say("First done.")}, "second": {bash("echo two"), say("Second done.")}}),
				Drive: func(r *Run) error {
					return kimiWebSession(r, func(k *kimiWeb, sid string) error {
						if err := k.turn(sid, "SCENARIO:first go", "approved"); err != nil {
							return err
						}
						conns, acked := k.proxy.Conns(), k.acks()
						if err := k.stopServer(); err != nil {
							return err
						}
						if err := k.startServer(); err != nil {
							return err
						}
						if err := k.waitConns(conns+1, time.Minute); err != nil {
							return err
						}
						// The restarted server loads the session lazily: the
						// bridge loads it and subscribes again before the
						// prompt.
						if _, err := k.waitFrame(func(f gjson.Result) bool {
							return f.Get("type").String() == "ack" && len(f.Get("payload.accepted").Array()) > 0
						}, acked+1, time.Minute); err != nil {
							return err
						}
						return k.turn(sid, "SCENARIO:second go on", "approved")
					})
				},
			},
		},
	}
}

// kimiWebTurn drives one turn in a new session, deciding its approvals.
func kimiWebTurn(prompt string, decisions ...string) func(*Run) error {
	return func(r *Run) error {
		return kimiWebSession(r, func(k *kimiWeb, sid string) error { return k.turn(sid, prompt, decisions...) })
	}
}

// kimiWebSetup configures the Kimi Code CLI for the fake model, with no
// hooks registered (primary mode: the channel is the only source).
func kimiWebSetup(r *Run) error {
	if err := r.useNodeRuntime(); err != nil {
		return err
	}
	r.Setenv("KIMI_CODE_HOME", filepath.Join(r.Home, ".kimi-code"))
	return kimiWriteConfig(r, false)
}

// kimiWeb is one recorded kimi web session: the server, the recording
// proxy, the bridge.
type kimiWeb struct {
	r      *Run
	port   int
	server *exec.Cmd
	proxy  *RecordingProxy
	bridge *exec.Cmd
	token  string
	turns  map[string]int
}

// kimiWebSession starts the server, the proxy and the bridge (linked to
// the scenario's relay when it has Control), creates a session, runs drive
// in it, and stops them all (the bridge first, so it ends its connection).
func kimiWebSession(r *Run, drive func(k *kimiWeb, sid string) error) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	k := &kimiWeb{r: r, port: port, turns: map[string]int{}}
	defer k.stopServer()
	if err := k.startServer(); err != nil {
		return err
	}
	tok, err := os.ReadFile(filepath.Join(r.Home, ".kimi-code", "server.token"))
	if err != nil {
		return err
	}
	k.token = strings.TrimSpace(string(tok))
	k.proxy, err = StartRecordingProxy(k.base(), filepath.Join(r.Dir, "ws.jsonl"))
	if err != nil {
		return err
	}
	defer k.proxy.Close()
	logf, err := os.Create(filepath.Join(r.Dir, "follow.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	k.bridge = exec.Command(r.H.AEPHook, "follow", "kimi-web", "--url", k.proxy.URL,
		"--token-file", filepath.Join(r.Home, ".kimi-code", "server.token"), "--mode", "primary")
	k.bridge.Env, k.bridge.Stdout, k.bridge.Stderr = r.Env, logf, logf
	if r.Scenario.Control != nil {
		// The relay and its emitter token come from the environment
		// StartControl set, as an installed follower has them.
		k.bridge.Args = append(k.bridge.Args, "--control", "--relay", r.Getenv("AEP_RELAY"))
	}
	if err := k.bridge.Start(); err != nil {
		return err
	}
	derr := k.waitConns(1, time.Minute)
	sid := ""
	if derr == nil {
		sid, derr = k.newSession()
	}
	if derr == nil {
		derr = drive(k, sid)
	}
	time.Sleep(500 * time.Millisecond) // the last frames reach the bridge
	k.bridge.Process.Signal(syscall.SIGTERM)
	k.bridge.Wait()
	return derr
}

func (k *kimiWeb) base() string { return fmt.Sprintf("http://127.0.0.1:%d", k.port) }

// startServer starts `kimi web` on the session's port and waits until its
// REST API answers.
func (k *kimiWeb) startServer() error {
	cmd := exec.Command(k.r.AgentBin(), "web", "--port", fmt.Sprint(k.port), "--no-open")
	cmd.Dir, cmd.Env = k.r.Work, k.r.Env
	logf, err := os.OpenFile(filepath.Join(k.r.Dir, "kimi-web.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	go func() { cmd.Wait(); logf.Close() }()
	k.server = cmd
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		tok, err := os.ReadFile(filepath.Join(k.r.Home, ".kimi-code", "server.token"))
		if err == nil {
			k.token = strings.TrimSpace(string(tok))
			if _, err := k.rest("GET", "/sessions", nil); err == nil {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("kimi web did not answer on port %d within 90s", k.port)
}

// stopServer stops `kimi web` (its whole process group) and waits.
func (k *kimiWeb) stopServer() error {
	if k.server == nil || k.server.Process == nil {
		return nil
	}
	pid := k.server.Process.Pid
	SignalGroup(pid, false)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			k.server = nil
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	SignalGroup(pid, true)
	k.server = nil
	return nil
}

// rest calls the server's REST API directly (not through the proxy: the
// driver's own requests are no part of the bridge's recording) and returns
// the envelope's data.
func (k *kimiWeb) rest(method, path string, body any) (gjson.Result, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, k.base()+"/api/v1"+path, rd)
	if err != nil {
		return gjson.Result{}, err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return gjson.Result{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	env := gjson.ParseBytes(b)
	if resp.StatusCode != 200 || env.Get("code").Int() != 0 {
		return gjson.Result{}, fmt.Errorf("%s %s: HTTP %d %s", method, path, resp.StatusCode, env.Get("msg").String())
	}
	return env.Get("data"), nil
}

// newSession creates a session in the workspace.
func (k *kimiWeb) newSession() (string, error) {
	d, err := k.rest("POST", "/sessions", obj{"metadata": obj{"cwd": k.r.Work}})
	if err != nil {
		return "", err
	}
	return d.Get("id").String(), nil
}

// prompt submits a prompt and returns its id.
func (k *kimiWeb) prompt(sid, text string) (string, error) {
	d, err := k.rest("POST", "/sessions/"+sid+"/prompts", obj{"content": []obj{{"type": "text", "text": text}}, "model": "fake"})
	if err != nil {
		return "", err
	}
	return d.Get("prompt_id").String(), nil
}

// turn submits a prompt, answers its approvals in order with decisions,
// and waits for the turn's end.
func (k *kimiWeb) turn(sid, text string, decisions ...string) error {
	if _, err := k.prompt(sid, text); err != nil {
		return err
	}
	for i, d := range decisions {
		if err := k.resolveApproval(sid, d, i+1); err != nil {
			return err
		}
	}
	return k.waitTurns(sid, k.turns[sid]+1)
}

// resolveApproval waits for the session's n-th approval request of this
// turn and decides it (a rejection with feedback).
func (k *kimiWeb) resolveApproval(sid, decision string, n int) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d, err := k.rest("GET", "/sessions/"+sid+"/approvals?status=pending", nil)
		if err == nil {
			if items := d.Get("items").Array(); len(items) > 0 {
				body := obj{"decision": decision}
				if decision == "rejected" {
					body["feedback"] = "not now"
				}
				_, err := k.rest("POST", "/sessions/"+sid+"/approvals/"+items[0].Get("approval_id").String(), body)
				return err
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("approval %d of session %s never came", n, sid)
}

// waitTurns waits until the bridge received the end of the session's n-th
// turn of the main agent.
func (k *kimiWeb) waitTurns(sid string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		seen := map[int64]bool{}
		for _, f := range k.frames() {
			if f.Get("type").String() == "turn.ended" && f.Get("session_id").String() == sid &&
				f.Get("payload.agentId").String() == "main" {
				seen[f.Get("seq").Int()] = true
			}
		}
		if len(seen) >= n {
			k.turns[sid] = n
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s: the bridge saw %d turn ends, want %d", sid, len(seen), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitIdle waits until the session has no turn running.
func (k *kimiWeb) waitIdle(sid string, timeout time.Duration) error {
	time.Sleep(500 * time.Millisecond)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		d, err := k.rest("GET", "/sessions/"+sid, nil)
		if err == nil && !d.Get("busy").Bool() && !d.Get("main_turn_active").Bool() {
			return nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("session %s still busy after %s", sid, timeout)
}

// frames returns the frames the server sent the bridge so far.
func (k *kimiWeb) frames() []gjson.Result {
	b, _ := os.ReadFile(filepath.Join(k.r.Dir, "ws.jsonl"))
	var out []gjson.Result
	for _, l := range strings.Split(string(b), "\n") {
		g := gjson.Parse(l)
		if g.Get("dir").String() == "in" && g.Get("data").Exists() {
			out = append(out, g.Get("data"))
		}
	}
	return out
}

// waitFrame waits until the bridge received n frames matching pred and
// returns the n-th.
func (k *kimiWeb) waitFrame(pred func(gjson.Result) bool, n int, timeout time.Duration) (gjson.Result, error) {
	deadline := time.Now().Add(timeout)
	for {
		c := 0
		for _, f := range k.frames() {
			if pred(f) {
				c++
				if c == n {
					return f, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return gjson.Result{}, fmt.Errorf("the bridge received %d matching frames, want %d, within %s", c, n, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// acks counts the subscribe acks that accepted a session.
func (k *kimiWeb) acks() int {
	n := 0
	for _, f := range k.frames() {
		if f.Get("type").String() == "ack" && len(f.Get("payload.accepted").Array()) > 0 {
			n++
		}
	}
	return n
}

// waitConns waits until the bridge opened n connections.
func (k *kimiWeb) waitConns(n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for k.proxy.Conns() < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("the bridge opened %d connections, want %d, within %s", k.proxy.Conns(), n, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// ask prompts the question scenario in sid and waits for the server's
// event.question.requested: the model's AskUserQuestion card.
func (k *kimiWeb) ask(sid string) (gjson.Result, error) {
	if _, err := k.prompt(sid, "SCENARIO:question ask me"); err != nil {
		return gjson.Result{}, err
	}
	return k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "event.question.requested" }, 1, time.Minute)
}
