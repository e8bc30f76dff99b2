package realagents

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/mapping"
)

// pi drives @earendil-works/pi-coding-agent in RPC mode (`pi --mode rpc`),
// the extension `aep-hook plugin pi` prints placed in its extensions folder
// as `aep-hook install pi` places it, with the harness recorder in place of
// `aep-hook forward pi`. Approvals and questions come from small extensions
// the scenarios load (pi has neither of its own), answered over RPC's
// extension UI protocol.
func piAgent() *Agent {
	return &Agent{
		Name: "pi", Package: "@earendil-works/pi-coding-agent", Version: "1.6.0", Bin: "pi",
		API:   fakemodel.ChatCompletions,
		Setup: piSetup,
		Scenarios: []Scenario{
			{
				Name: "tools", Mode: "rpc",
				Description: "pi --mode rpc: a command that succeeds, one that fails, a missing file; then the session closes; " +
					"then the same prompt without the extension: the model requests must be identical (" + modelRequestsFile + ")",
				Facts: truth.Facts{Runs: 1, Sessions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"tools": {
					calls(call("bash", obj{"command": "echo hello"})),
					calls(call("bash", obj{"command": "ls /nonexistent-dir"})),
					calls(call("read", obj{"path": "missing.txt"})),
					say("One worked, two failed."),
				}}),
				Drive: func(r *Run) error {
					return sameModelRequests(r, registered, func() error {
						return piSession(r, nil, func(p *piRPC) error {
							return p.prompt("SCENARIO:tools run the commands", 1)
						})
					})
				},
			},
			{
				Name: "approvals", Mode: "rpc",
				Description: "pi --mode rpc with a gate extension asking before rm: blocked once, allowed once (two prompts)",
				Facts:       truth.Facts{Runs: 2, Sessions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"deny":  {calls(call("bash", obj{"command": "rm -f gone.txt"})), say("It was blocked.")},
					"allow": {calls(call("bash", obj{"command": "rm -f gone.txt"})), say("Removed.")},
				}),
				Drive: func(r *Run) error {
					answers := []string{"Block", "Allow"}
					ui := func(req gjson.Result) map[string]any {
						a := answers[0]
						answers = answers[1:]
						return map[string]any{"value": a}
					}
					return piSession(r, ui, func(p *piRPC) error {
						if err := p.prompt("SCENARIO:deny remove the file", 1); err != nil {
							return err
						}
						return p.prompt("SCENARIO:allow remove the file", 2)
					}, "-e", r.piExtension("gate.js", piGateExtension))
				},
			},
			{
				Name: "control-allow", Mode: "rpc",
				Description: "pi --mode rpc, the extension's tool_call gate on for bash, its posture written into the extension as `aep-hook install pi --control --gate-tools bash` writes it: the command's tool_call is held and answered allow over the relay, so the command runs (the file exists)",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("allow", call("bash", obj{"command": "touch made-by-control"}), "Created."),
				Control:     &Control{Budget: "20s", Tools: []string{"bash"}, Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "allow"}}}},
				Drive: func(r *Run) error {
					if err := piInstallPosture(r); err != nil {
						return err
					}
					if err := piSession(r, nil, func(p *piRPC) error { return p.prompt("SCENARIO:allow create a file", 1) }); err != nil {
						return err
					}
					return r.Exists("made-by-control")
				},
			},
			{
				Name: "control-deny", Mode: "rpc",
				Description: "pi --mode rpc, the extension's tool_call gate on for bash: the command is denied over the relay with a reason; the handler blocks it, pi ends the call as an error carrying the reason (recorded as the call's tool.denied by policy, caused by the command), the file is never made and the model reads the reason",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Ended: 1, Answers: 1, Control: 1, ViaControl: 1},
				Model:       callThenSay("deny", call("bash", obj{"command": "touch not-this-file"}), "Understood."),
				Control:     &Control{Budget: "20s", Tools: []string{"bash"}, Answers: []ControlAnswer{{Answer: &answer.Answer{Option: "deny", Text: "Use the scratch folder instead."}}}},
				Drive: func(r *Run) error {
					if err := piSession(r, nil, func(p *piRPC) error { return p.prompt("SCENARIO:deny create a file", 1) }); err != nil {
						return err
					}
					if err := r.Absent("not-this-file"); err != nil {
						return err
					}
					return r.ModelSaw("Use the scratch folder instead.")
				},
			},
			{
				Name: "control-down", Mode: "rpc",
				Description: "pi --mode rpc, the extension's tool_call gate on for bash but no relay listening: the held run finds none, replies at once, asks nothing (no attention request), and the command runs",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Ended: 1},
				Model:       callThenSay("down", call("bash", obj{"command": "touch made-without-relay"}), "Created."),
				Control:     &Control{Down: true, Budget: "20s", Tools: []string{"bash"}},
				Drive: func(r *Run) error {
					if err := piSession(r, nil, func(p *piRPC) error { return p.prompt("SCENARIO:down create a file", 1) }); err != nil {
						return err
					}
					return r.Exists("made-without-relay")
				},
			},
			{
				Name: "control-timeout", Mode: "rpc",
				Description: "pi --mode rpc, the extension's tool_call gate on for bash with a 2 s budget and nobody answering: the held run gives up, the handler returns nothing and the command runs (the request settles dismissed at the call's end)",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Ended: 1, Control: 1},
				Model:       callThenSay("late", call("bash", obj{"command": "touch made-after-budget"}), "Created."),
				Control:     &Control{Budget: "2s", Tools: []string{"bash"}, Answers: []ControlAnswer{{}}},
				Drive: func(r *Run) error {
					if err := piSession(r, nil, func(p *piRPC) error { return p.prompt("SCENARIO:late create a file", 1) }); err != nil {
						return err
					}
					return r.Exists("made-after-budget")
				},
			},
			{
				Name: "control-abort", Mode: "rpc",
				Description: "pi --mode rpc, the extension's tool_call gate on for bash with a 60 s budget: while the call waits for an answer the user aborts over RPC; the handler stops the held run and returns at once, pi ends the call aborted (the command never runs, the request settles dismissed) and the loop ends cancelled",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Ended: 1, Interrupts: 1, Control: 1},
				Model:       callThenSay("abort", call("bash", obj{"command": "touch not-after-abort"}), "Aborted."),
				Control:     &Control{Budget: "60s", Tools: []string{"bash"}, Answers: []ControlAnswer{{}}},
				Drive: func(r *Run) error {
					if err := piSession(r, nil, func(p *piRPC) error {
						if err := p.send(obj{"type": "prompt", "message": "SCENARIO:abort create a file"}); err != nil {
							return err
						}
						if err := r.waitHeld(time.Minute); err != nil {
							return err
						}
						time.Sleep(time.Second) // the request offered to the relay
						start := time.Now()
						if err := p.send(obj{"type": "abort"}); err != nil {
							return err
						}
						if err := p.waitForwarded("agent_settled", 1, 20*time.Second); err != nil {
							return fmt.Errorf("the abort did not end the held call: %w", err)
						}
						r.Notes = append(r.Notes, fmt.Sprintf("pi settled %d ms after the abort", time.Since(start).Milliseconds()))
						return nil
					}); err != nil {
						return err
					}
					return r.Absent("not-after-abort")
				},
			},
			{
				Name: "question", Mode: "rpc",
				Description: "pi --mode rpc with an ask_user tool extension: the model asks, the human picks an option",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Ended: 1},
				Model:       callThenSay("question", call("ask_user", obj{"question": "Which env?", "options": []string{"dev", "prod"}}), "Deploying to dev."),
				Drive: func(r *Run) error {
					ui := func(req gjson.Result) map[string]any { return map[string]any{"value": "dev"} }
					return piSession(r, ui, func(p *piRPC) error {
						return p.prompt("SCENARIO:question ask me", 1)
					}, "-e", r.piExtension("ask.js", piAskExtension))
				},
			},
			{
				Name: "abort", Mode: "rpc",
				Description: "pi --mode rpc: a long command, aborted over RPC while it runs",
				Facts:       truth.Facts{Runs: 1, Sessions: 1, Interrupts: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{"abort": {
					calls(call("bash", obj{"command": "sleep 30"})), say("Slept."),
				}}),
				Drive: func(r *Run) error {
					return piSession(r, nil, func(p *piRPC) error {
						if err := p.send(obj{"type": "prompt", "message": "SCENARIO:abort take long"}); err != nil {
							return err
						}
						if err := p.waitForwarded("tool_execution_start", 1, time.Minute); err != nil {
							return err
						}
						time.Sleep(500 * time.Millisecond)
						if err := p.send(obj{"type": "abort"}); err != nil {
							return err
						}
						return p.waitForwarded("agent_settled", 1, time.Minute)
					})
				},
			},
			{
				Name: "retry", Mode: "rpc",
				Description: "pi --mode rpc: the model API answers 500 once; pi retries on its own and the retry succeeds",
				Facts:       truth.Facts{Runs: 2, Sessions: 1, Failures: 1, Ended: 1},
				Model:       failingOnce("retry", 500, say("Worked the second time.")),
				Drive: func(r *Run) error {
					return piSession(r, nil, func(p *piRPC) error {
						return p.prompt("SCENARIO:retry try it", 1)
					})
				},
			},
			{
				Name: "compact-model", Mode: "rpc",
				Description: "pi --mode rpc: a turn, /compact, a thinking-level change and a model change over RPC, a second turn",
				Facts:       truth.Facts{Runs: 2, Sessions: 1, Compactions: 1, Ended: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"first":  {calls(call("bash", obj{"command": "echo one"})), say("First done.")},
					"second": {say("Second done.")},
				}),
				Drive: func(r *Run) error {
					return piSession(r, nil, func(p *piRPC) error {
						if err := p.prompt("SCENARIO:first go", 1); err != nil {
							return err
						}
						if err := p.call(obj{"type": "compact"}, 2*time.Minute); err != nil {
							return err
						}
						if err := p.call(obj{"type": "set_thinking_level", "level": "high"}, time.Minute); err != nil {
							return err
						}
						if err := p.call(obj{"type": "set_model", "provider": "fake", "modelId": "fake-model-2"}, time.Minute); err != nil {
							return err
						}
						return p.prompt("SCENARIO:second again", 2)
					})
				},
			},
		},
	}
}

// piSetup installs the Node pi needs, configures the fake provider, and
// places the extension through `aep-hook install pi`'s own plan, its
// forwarder being the harness recorder (`<harness> forward pi`).
func piSetup(r *Run) error {
	if err := r.useNodeRuntime(); err != nil {
		return err
	}
	r.Setenv("PI_OFFLINE", "1")
	models := obj{"providers": obj{"fake": obj{
		"baseUrl": r.Model.URL + "/v1", "api": "openai-completions", "apiKey": "sk-fake-pi",
		"models": []obj{{"id": "fake-model", "reasoning": true}, {"id": "fake-model-2", "reasoning": true}},
	}}}
	if err := r.WriteJSON(".pi/agent/models.json", models); err != nil {
		return err
	}
	settings := obj{"defaultProvider": "fake", "defaultModel": "fake-model", "retry": obj{"enabled": true, "baseDelayMs": 200},
		"compaction": obj{"keepRecentTokens": 10}}
	if err := r.WriteJSON(".pi/agent/settings.json", settings); err != nil {
		return err
	}
	return r.Register(true)
}

// piExtension writes a scenario's own extension into the run and returns
// its path.
func (r *Run) piExtension(name, text string) string {
	p := filepath.Join(r.Dir, "ext", name)
	r.WriteFile(p, text)
	return p
}

// piGateExtension asks before any bash command that removes files and
// blocks unless the answer is Allow: the shape of pi's permission-gate
// example, over the extension UI.
const piGateExtension = `export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash" || !/\brm\b/.test(event.input.command)) return undefined;
    const choice = await ctx.ui.select("Allow " + event.input.command + "?", ["Allow", "Block"]);
    return choice === "Allow" ? undefined : { block: true, reason: "Blocked by user" };
  });
}
`

// piAskExtension is a question tool over the extension UI.
const piAskExtension = `export default function (pi) {
  pi.registerTool({
    name: "ask_user", label: "Ask", description: "Ask the user a question with options.",
    parameters: { type: "object", properties: { question: { type: "string" }, options: { type: "array", items: { type: "string" } } }, required: ["question", "options"] },
    async execute(id, params, signal, onUpdate, ctx) {
      const answer = await ctx.ui.select(params.question, params.options);
      return { content: [{ type: "text", text: "The user answered: " + answer }], details: { answer } };
    },
  });
}
`

// piRPC is one pi process in RPC mode.
type piRPC struct {
	r    *Run
	cmd  *exec.Cmd
	in   io.WriteCloser
	ui   func(req gjson.Result) map[string]any
	mu   sync.Mutex
	recs []string // every stdout record
	done chan struct{}
	n    int
}

// piSession starts pi in RPC mode (with extra arguments), runs drive, then
// closes pi's input and waits for it to shut down.
func piSession(r *Run, ui func(gjson.Result) map[string]any, drive func(*piRPC) error, args ...string) error {
	cmd := exec.Command(r.AgentBin(), append([]string{"--mode", "rpc", "--offline"}, args...)...)
	cmd.Dir, cmd.Env = r.Work, r.Env
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(r.Dir, "pi-stderr.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &piRPC{r: r, cmd: cmd, in: in, ui: ui, done: make(chan struct{})}
	go p.read(out)
	derr := drive(p)
	if derr == nil {
		// Let the last loop's settlement reach the forwarder before exit.
		derr = p.waitForwarded("agent_settled", 0, 0)
	}
	in.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		if derr == nil {
			derr = fmt.Errorf("pi did not exit after its input closed")
		}
	}
	os.WriteFile(filepath.Join(r.Dir, "pi-rpc.jsonl"), []byte(strings.Join(p.records(), "\n")+"\n"), 0o644)
	// The forwarder reads what pi wrote before it exited.
	if r.Unregistered {
		return derr // no extension: nothing forwarded
	}
	if err := p.waitForwarded("session_shutdown", 1, 30*time.Second); err != nil && derr == nil {
		derr = err
	}
	return derr
}

// read keeps pi's stdout records and answers extension UI requests.
func (p *piRPC) read(out io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		rec := sc.Text()
		p.mu.Lock()
		p.recs = append(p.recs, rec)
		p.mu.Unlock()
		g := gjson.Parse(rec)
		if g.Get("type").String() == "extension_ui_request" {
			switch g.Get("method").String() {
			case "select", "confirm", "input", "editor":
				resp := map[string]any{"cancelled": true}
				if p.ui != nil {
					resp = p.ui(g)
				}
				resp["type"], resp["id"] = "extension_ui_response", g.Get("id").String()
				p.send(resp)
			}
		}
	}
}

func (p *piRPC) records() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.recs...)
}

// send writes one command.
func (p *piRPC) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err = p.in.Write(append(b, '\n'))
	return err
}

// call sends a command with an id and waits for its response.
func (p *piRPC) call(v obj, timeout time.Duration) error {
	p.mu.Lock()
	p.n++
	id := fmt.Sprintf("h%d", p.n)
	p.mu.Unlock()
	v["id"] = id
	if err := p.send(v); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, rec := range p.records() {
			g := gjson.Parse(rec)
			if g.Get("type").String() == "response" && g.Get("id").String() == id {
				if !g.Get("success").Bool() {
					return fmt.Errorf("pi %s: %s", v["type"], g.Get("error").String())
				}
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("pi %s: no response within %s", v["type"], timeout)
}

// prompt sends a prompt and waits until the n-th loop settled.
func (p *piRPC) prompt(text string, n int) error {
	if err := p.call(obj{"type": "prompt", "message": text}, time.Minute); err != nil {
		return err
	}
	return p.waitForwarded("agent_settled", n, 2*time.Minute)
}

// forwarded counts the bus events of type typ the extension forwarded
// (pi's own RPC stream's while the extension is removed).
func (p *piRPC) forwarded(typ string) int {
	c := 0
	if p.r.Unregistered {
		for _, rec := range p.records() {
			if gjson.Get(rec, "type").String() == typ {
				c++
			}
		}
		return c
	}
	paths, _ := filepath.Glob(filepath.Join(p.r.Dir, "stream", "*.jsonl"))
	for _, path := range paths {
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if gjson.Get(l, "event.type").String() == typ {
				c++
			}
		}
	}
	return c
}

// waitForwarded waits until the extension forwarded the bus event typ n
// times (n 0: as many as were forwarded so far settle, briefly); with the
// extension removed (Run.Unregistered), until pi's own RPC stream carried
// it n times.
func (p *piRPC) waitForwarded(typ string, n int, timeout time.Duration) error {
	if n == 0 {
		time.Sleep(300 * time.Millisecond)
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		c := p.forwarded(typ)
		if c >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pi forwarded %s %d times, want %d, within %s", typ, c, n, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Held reports whether the plugin recorder's arguments are a held pi
// tool_call (`forward pi --hold`), which is recorded as a hook firing.
func Held(args []string) bool {
	if len(args) < 2 || args[0] != "pi" {
		return false
	}
	for _, a := range args[1:] {
		if a == "--hold" {
			return true
		}
	}
	return false
}

// RecordHeld records a held pi tool_call (`realagents forward pi --hold`)
// as a firing of `aep-hook forward pi --hold`, its reply passed through,
// and notes how many forwarded lines the run had recorded when it began
// (Firing.After), where replay runs it.
func RecordHeld(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	after := 0
	if dir := os.Getenv(EnvRecordDir); dir != "" {
		paths, _ := filepath.Glob(filepath.Join(dir, "stream", "*.jsonl"))
		for _, p := range paths {
			b, _ := os.ReadFile(p)
			after += strings.Count(string(b), "\n")
		}
	}
	return recordHook(append([]string{"forward"}, args...), stdin, stdout, stderr, after)
}

// replayPiControl replays a pi control recording: the forwarded lines
// through `aep-hook forward pi`, cut at each held tool_call, which runs
// where it was recorded (Firing.After) as replayControl runs a firing;
// the home is the replay's.
func replayPiControl(bin string, vendor mapping.Vendor, fx Fixture, env []string, home, tmp string) []string {
	pos := 0
	feed := func(upto int) []string {
		upto = min(max(upto, pos), len(fx.Stream))
		seg := fx.Stream[pos:upto]
		pos = upto
		if len(seg) == 0 {
			return nil
		}
		return replayPipes(bin, vendor.Name, env, seg)
	}
	bad := replayControl(bin, vendor, fx, replayEnv(home, tmp), home, tmp, func(f Firing) []string { return feed(f.After) })
	return append(bad, feed(len(fx.Stream))...)
}

// piInstallPosture moves the control posture StartControl put in pi's
// environment into the extension file, as `aep-hook install pi --control`
// writes it, so the extension's reading of its own posture is what runs.
// The relay token stays in the environment: install never writes one.
func piInstallPosture(r *Run) error {
	c := r.Scenario.Control
	budget, err := time.ParseDuration(c.Budget)
	if err != nil {
		return err
	}
	a, ok := installer.Lookup("pi")
	if !ok {
		return fmt.Errorf("aep-hook install knows no pi")
	}
	e := installer.Env{Home: r.Home, Dir: r.Work, Binary: r.H.Self, Program: r.Recorder(), Getenv: r.Getenv, Now: time.Now,
		Control: &installer.Control{Relay: r.Getenv("AEP_RELAY"), Budget: budget, Tools: c.Tools}}
	if err := Install(a, e, false); err != nil {
		return err
	}
	var env []string
	for _, kv := range r.Env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "AEP_CONTROL", "AEP_RELAY", "AEP_CONTROL_BUDGET", "AEP_CONTROL_TOOLS":
		default:
			env = append(env, kv)
		}
	}
	r.Env = env
	return nil
}

// waitHeld waits until a held run started (its firing file is there).
func (r *Run) waitHeld(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if fs, _ := filepath.Glob(filepath.Join(r.Dir, "firings", "*.json")); len(fs) > 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no held run within %s", timeout)
}
