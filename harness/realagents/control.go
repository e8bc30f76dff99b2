package realagents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/adapters/pi"
	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/mapping"
)

// Control is a scenario's control loop (AEP-0004): the harness runs a real
// `aep-hook relay`, the hooks run with AEP_CONTROL=1 against it, and a
// sender (package answer, as `aep-hook answer` uses it) answers the
// requests held live, in the order they appear, with Answers. A recording
// keeps them in its scenario file, and replay runs the same loop: a real
// relay, each held firing answered again with its recorded answer.
type Control struct {
	// Answers are the held requests' answers in order; an entry with no
	// answer is left to its budget (the agent's own dialog takes over).
	Answers []ControlAnswer `json:"answers,omitempty"`
	// Down runs no relay: the hooks find none and reply at once.
	Down bool `json:"down,omitempty"`
	// Budget is AEP_CONTROL_BUDGET for the recording (replay shortens it
	// for unanswered requests).
	Budget string `json:"budget,omitempty"`
	// Tools is AEP_CONTROL_TOOLS (the opt-in gates' tool list).
	Tools []string `json:"tools,omitempty"`
}

// ControlAnswer is one held request's answer.
type ControlAnswer struct {
	// Answer is what the sender sent; nil leaves the request unanswered.
	Answer *answer.Answer `json:"answer,omitempty"`
	// Outcome is how the command settled when recorded: accepted,
	// rejected, refused or timeout ("" for an unanswered request).
	Outcome string `json:"outcome,omitempty"`
}

// The tokens of a control run's relay.
const (
	controlEmitTok   = "real-emitter-token-0123456789"
	controlSenderTok = "real-sender-token-0123456789"
	controlSender    = "operator"
)

// Relay is a running `aep-hook relay` for a scenario that answers over
// control: the recorder's, the bus's and kimi web's runs share it.
type Relay struct {
	cmd *exec.Cmd
	// URL is its WebSocket binding, ws://HOST:PORT/socket.
	URL    string
	stderr strings.Builder
	mu     sync.Mutex
}

var relayServing = regexp.MustCompile(`serving http://(\S+) `)

// StartRelay runs bin's relay on an ephemeral loopback port with env as
// its whole environment and tokens (lines of the tokens file) written
// under dir, and returns once it says where it serves.
func StartRelay(bin, dir string, env []string, tokens string) (*Relay, error) {
	file := filepath.Join(dir, "relay-tokens")
	if err := os.WriteFile(file, []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	cr := &Relay{}
	cr.cmd = exec.Command(bin, "relay", "--listen", "127.0.0.1:0", "--tokens", file)
	cr.cmd.Env = env
	cr.cmd.Stderr = lockedWriter{&cr.mu, &cr.stderr}
	if err := cr.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		cr.mu.Lock()
		m := relayServing.FindStringSubmatch(cr.stderr.String())
		cr.mu.Unlock()
		if m != nil {
			cr.URL = "ws://" + m[1] + "/socket"
			return cr, nil
		}
		time.Sleep(10 * time.Millisecond) // the relay's start line is its only signal
	}
	cr.Stop()
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return nil, fmt.Errorf("the relay did not start: %s", cr.stderr.String())
}

// startRelay runs bin's relay over home with tokens for the emitters of
// host and the sender.
func startRelay(bin, dir, home, host string) (*Relay, error) {
	lines := `{"token":"` + controlEmitTok + `","identity":"emitter:` + host + `/*","scopes":["write:*"]}` + "\n" +
		`{"token":"` + controlSenderTok + `","identity":"consumer:` + controlSender + `","scopes":["subscribe:*","read:*","control:control.*"]}` + "\n"
	return StartRelay(bin, dir, []string{"AEP_HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir}, lines)
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// Stop interrupts the relay and waits for it, killing it after 10 s.
func (cr *Relay) Stop() {
	cr.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cr.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cr.cmd.Process.Kill()
		<-done
	}
}

// controlEnv is the hooks' control posture against url.
func controlEnv(c *Control, url, budget string) []string {
	env := []string{"AEP_CONTROL=1", "AEP_RELAY=" + url, "AEP_RELAY_TOKEN=" + controlEmitTok}
	if budget != "" {
		env = append(env, "AEP_CONTROL_BUDGET="+budget)
	}
	if len(c.Tools) > 0 {
		env = append(env, "AEP_CONTROL_TOOLS="+strings.Join(c.Tools, ","))
	}
	return env
}

// downURL is a relay address nothing listens on.
const downURL = "ws://127.0.0.1:9/socket"

// StartControl, from a scenario's Setup, runs the control loop for r: the
// relay (unless Down), the hooks' environment, and the sender answering
// the held requests in order. It stops when the drive is over; the
// answers sent are kept for the scenario file.
func (r *Run) StartControl() error {
	c := r.Scenario.Control
	if c == nil {
		return nil
	}
	if c.Down {
		for _, kv := range controlEnv(c, downURL, c.Budget) {
			k, v, _ := strings.Cut(kv, "=")
			r.Setenv(k, v)
		}
		return nil
	}
	cr, err := startRelay(r.H.AEPHook, r.Dir, r.Getenv("AEP_HOME"), r.Getenv("AEP_HOST"))
	if err != nil {
		return err
	}
	for _, kv := range controlEnv(c, cr.URL, c.Budget) {
		k, v, _ := strings.Cut(kv, "=")
		r.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var notes []string
	go func() {
		defer close(done)
		sendAnswers(ctx, cr.URL, c.Answers, func(i int, outcome string) {
			c.Answers[i].Outcome = outcome
			notes = append(notes, fmt.Sprintf("control: request %d answered: %s", i+1, firstNonEmpty(outcome, "left to its budget")))
		})
	}()
	r.OnDone(func() {
		cancel()
		<-done
		cr.Stop()
		r.Notes = append(r.Notes, notes...)
	})
	return nil
}

// sendAnswers answers the held requests at url as they appear, one step
// of steps each, in order, until ctx ends or every step is spent.
func sendAnswers(ctx context.Context, url string, steps []ControlAnswer, settled func(i int, outcome string)) {
	cl := &answer.Client{URL: url, Token: controlSenderTok, Agent: controlSender, Host: "sender-host", Window: 5 * time.Second}
	var cn *answer.Conn
	seen := map[string]bool{}
	for i := 0; i < len(steps) && ctx.Err() == nil; {
		if cn == nil {
			var err error
			if cn, err = cl.Dial(ctx); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			defer cn.Close()
		}
		rs, err := cn.Pending(ctx)
		if err != nil {
			cn = nil
			continue
		}
		for _, req := range rs {
			if seen[req.ID] || !req.Answerable || i >= len(steps) {
				continue
			}
			if steps[i].Answer == nil {
				seen[req.ID] = true
				settled(i, "")
				i++
				continue
			}
			out, err := cn.Respond(ctx, req, *steps[i].Answer)
			if err != nil {
				// Still unseen: the answer goes again, over a new
				// connection, while the request is waiting.
				cn = nil
				break
			}
			seen[req.ID] = true
			settled(i, out.Ack)
			i++
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heldFirings numbers the firings a vendor's table holds under the
// gate: the requests a control loop could answer, in order.
func heldFirings(v mapping.Vendor, fs []Firing, tools []string) map[int]int {
	out := map[int]int{}
	if v.Hold == nil {
		return out
	}
	if v.Transport == mapping.TransportPi {
		v = pi.Held(v) // its firings are forwarder lines
	}
	n := 0
	for i, f := range fs {
		hook := ""
		if v.HookFromArgv && len(f.Args) > 0 {
			hook = f.Args[0]
		}
		if v.Hold(mapping.Moment{Hook: hook, Raw: f.Stdin()}, mapping.Gate{Tools: tools}) != nil {
			out[i] = n
			n++
		}
	}
	return out
}

// replayRelay is a replay's relay over home: a fresh one, or with c.Down
// an address where none listens. stop ends it.
func replayRelay(bin, tmp, home string, c *Control) (url string, stop func(), err error) {
	if c.Down {
		return downURL, func() {}, nil
	}
	cr, err := startRelay(bin, tmp, home, "replay-host")
	if err != nil {
		return "", nil, err
	}
	return cr.URL, cr.Stop, nil
}

// replayControl replays a control recording: a fresh relay over the
// replay's home (unless the recording had none), every firing run with
// the hooks' control posture, each held one answered again with its
// recorded answer by a sender (an unanswered one gets a short budget: the
// neutral reply is what its agent saw once its own dialog took over). It
// returns the per-firing problems; the reply of an answered firing must be
// the one recorded. before, when set, runs ahead of each firing (what a
// stream recorded before it) and returns its problems.
func replayControl(bin string, vendor mapping.Vendor, fx Fixture, env []string, home, tmp string, before func(Firing) []string) []string {
	c := fx.Scenario.Control
	var bad []string
	url, stop, err := replayRelay(bin, tmp, home, c)
	if err != nil {
		return []string{err.Error()}
	}
	defer stop()
	held := heldFirings(vendor, fx.Firings, c.Tools)
	for i, f := range fx.Firings {
		if before != nil {
			bad = append(bad, before(f)...)
		}
		n, isHeld := held[i]
		budget := "20s"
		var step *ControlAnswer
		if isHeld && n < len(c.Answers) {
			step = &c.Answers[n]
		}
		switch {
		case step == nil || step.Answer == nil:
			budget = "300ms"
		case step.Outcome != answer.Accepted && c.Budget != "":
			// A refused answer leaves the hook waiting out its budget:
			// the recording's, as its agent waited.
			budget = c.Budget
		}
		fenv := append(append([]string(nil), env...), controlEnv(c, url, budget)...)
		var wg sync.WaitGroup
		var sendErr error
		if step != nil && step.Answer != nil && !c.Down {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sendErr = answerOne(url, *step.Answer, step.Outcome)
			}()
		}
		want := f.Stdout
		if !isHeld || step == nil || step.Answer == nil || step.Outcome != answer.Accepted {
			want = ""
			if vendor.Reply != nil {
				want = string(vendor.Reply(f.Hook()))
			}
		}
		bad = append(bad, replayFiringWant(bin, vendor, fenv, f, want)...)
		wg.Wait()
		if sendErr != nil {
			bad = append(bad, fmt.Sprintf("firing %d (%s): the sender: %v", f.N, f.Hook(), sendErr))
		}
	}
	return bad
}

// answerOne waits for the request the firing being replayed raises to be
// pending and answerable, answers it and checks the outcome is the
// recorded one.
func answerOne(url string, a answer.Answer, want string) error {
	cl := &answer.Client{URL: url, Token: controlSenderTok, Agent: controlSender, Host: "sender-host", Window: 5 * time.Second}
	// Replay runs one firing at a time: the one answerable request is this
	// firing's.
	out, err := respondFirst(cl, 30*time.Second, 50*time.Millisecond, a, func(r answer.Request) bool { return r.Answerable })
	if err != nil {
		return err
	}
	if out.Ack != want {
		return fmt.Errorf("outcome %s (%s %s), recorded %s", out.Ack, out.Reason, out.Detail, want)
	}
	return nil
}

// Exists checks that the agent's tool made the file name in the
// workspace: the proof an allowed call ran.
func (r *Run) Exists(name string) error {
	if _, err := os.Stat(filepath.Join(r.Work, name)); err != nil {
		return fmt.Errorf("the call did not run: %s is not in the workspace", name)
	}
	return nil
}

// Absent checks that no tool made the file name: the proof a refused call
// did not run.
func (r *Run) Absent(name string) error {
	if _, err := os.Stat(filepath.Join(r.Work, name)); err == nil {
		return fmt.Errorf("the refused call ran: %s is in the workspace", name)
	}
	return nil
}

// ModelSaw checks that a model request after the first carried text (a
// refusal's guidance, an answer the agent took): what the agent did with
// the answer, seen from the model's side.
func (r *Run) ModelSaw(text string) error {
	for _, q := range r.Model.Requests() {
		if strings.Contains(string(q.Body), text) {
			return nil
		}
	}
	return fmt.Errorf("no model request carried %q", text)
}

// ModelSaw is Run.ModelSaw as a TUI step.
func ModelSaw(text string) Step { return func(t *Tmux) error { return t.r.ModelSaw(text) } }

// downDelay is the most a held firing may take when no relay listens: the
// hook must find none and reply at once (a few milliseconds on an idle
// machine), never wait on its budget of tens of seconds. Generous, since a
// recording shares a loaded machine.
const downDelay = time.Second

// heldElapsed keeps, in a control recording, the hook's elapsed time on
// every firing (the observe-only firings are the held ones' yardstick on
// the same loaded machine) and drops it elsewhere (timings there prove
// nothing and would churn the fixtures). It notes each held firing's time,
// and with the relay down fails the recording when one waited.
func heldElapsed(r *Run, fs []Firing) error {
	c := r.Scenario.Control
	v, ok := mapping.Lookup(r.Agent.Name)
	if c == nil || !ok {
		for i := range fs {
			fs[i].ElapsedMS = 0
		}
		return nil
	}
	var slow []string
	for i := range heldFirings(v, fs, c.Tools) {
		r.Notes = append(r.Notes, fmt.Sprintf("control: held firing %d (%s) took %d ms", fs[i].N, fs[i].Hook(), fs[i].ElapsedMS))
		if c.Down && time.Duration(fs[i].ElapsedMS)*time.Millisecond >= downDelay {
			slow = append(slow, fmt.Sprintf("firing %d took %d ms", fs[i].N, fs[i].ElapsedMS))
		}
	}
	if len(slow) > 0 {
		return fmt.Errorf("with no relay the hook waited: %s", strings.Join(slow, ", "))
	}
	return nil
}

// controlDenied begins the message aep-hook's refusal gives the model
// when the answer carried no text of its own.
const controlDenied = "Denied over the control loop"

// Made is Run.Exists as a TUI step.
func Made(name string) Step { return func(t *Tmux) error { return t.r.Exists(name) } }

// NotMade is Run.Absent as a TUI step.
func NotMade(name string) Step { return func(t *Tmux) error { return t.r.Absent(name) } }
