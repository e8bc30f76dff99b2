package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control"
)

// The control scenarios: the bridge holds an emitter link to a real
// `aep-hook relay` and the driver answers as an AEP-0004 sender (alice),
// so the server's asks are answered through the bridge's own reply calls;
// the server's behaviour proves the answer (the tool ran or did not, the
// question's answer reached the model, the turn was aborted). The tape
// keeps what the bridge read, as for every scenario: its replay maps the
// server's broadcasts of those answers, while the via-control record is
// checked live, here.

const (
	ctlEmitToken  = "emit-real-bus-token-0123456789"
	ctlAliceToken = "alice-real-bus-token-0123456789"
)

// startRelay runs bin's relay on a free loopback port with an emitter
// token for host's bridge and a commanding consumer, alice.
func startRelay(bin, dir, host string) (*realagents.Relay, error) {
	lines := `{"token":"` + ctlEmitToken + `","identity":"emitter:` + host + `/*","scopes":["write:*"]}` + "\n" +
		`{"token":"` + ctlAliceToken + `","identity":"consumer:alice","scopes":["subscribe:*","read:*","control:control.*"]}` + "\n"
	return realagents.StartRelay(bin, dir, append(os.Environ(), "AEP_HOME="+filepath.Join(dir, "relay-home")), lines)
}

// controlLink starts the relay (none when down: a port nothing listens
// on) and the bridge's control link to it, waiting until the link is up.
func controlLink(ctx context.Context, bin, dir string, down bool, v mapping.Vendor, em *shim.Emitter, bridge *opencode.Bridge) (*control.Stream, string, func(), error) {
	url, stopRelay := "", func() {}
	if down {
		port, err := freePort()
		if err != nil {
			return nil, "", nil, err
		}
		url = fmt.Sprintf("ws://127.0.0.1:%d/socket", port)
	} else {
		r, err := startRelay(bin, dir, em.Host)
		if err != nil {
			return nil, "", nil, err
		}
		url, stopRelay = r.URL, r.Stop
	}
	link := &control.Stream{
		Config: &control.Config{URL: url, Token: ctlEmitToken}, Vendor: v, Emitter: em,
		Identity: control.Identity{Agent: v.AgentName(), Instance: em.Host + "/bus"},
		Accepts:  []string{control.Respond, control.Cancel}, Handlers: map[string]control.Handler{control.Cancel: bridge.Cancel},
	}
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { link.Run(lctx); close(done) }()
	stop := func() { cancel(); <-done; stopRelay() }
	if down {
		return link, url, stop, nil
	}
	for deadline := time.Now().Add(30 * time.Second); !link.Live(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			return nil, "", nil, errors.New("the control link never came up")
		}
	}
	return link, url, stop, nil
}

// Answer waits for the session's answerable request whose subject is
// subject ("" any) and answers it over the relay as alice: the command
// must be accepted and its outcome read back via control.
func (d *Driver) Answer(subject string, a answer.Answer) error {
	if d.relay == "" {
		return errors.New("the scenario runs without a relay")
	}
	return d.sender().Answer(d.sid, subject, a)
}

// sender is alice on the driver's relay.
func (d *Driver) sender() realagents.Sender {
	return realagents.Sender{URL: d.relay, Token: ctlAliceToken, As: "alice"}
}

// CancelRun sends control.cancel{scope run} for the driver's session as
// alice and wants it accepted.
func (d *Driver) CancelRun() error {
	return d.sender().Cancel(d.sid, "01KREALCANCEL000000000001")
}

// toolOutcome waits for the driver's session's tool part of tool to end
// and returns its status (completed, error).
func (d *Driver) toolOutcome(tool string) (string, error) {
	part, err := d.toolPart(tool)
	return part.Get("state.status").String(), err
}

// toolPart waits for the driver's session's tool part of tool to end and
// returns it.
func (d *Driver) toolPart(tool string) (gjson.Result, error) {
	for {
		p, err := d.Wait("message.part.updated", 3*time.Minute)
		if err != nil {
			return gjson.Result{}, err
		}
		part := p.Get("properties.part")
		if part.Get("tool").String() != tool {
			continue
		}
		if st := part.Get("state.status").String(); st == "completed" || st == "error" {
			return part, nil
		}
	}
}

// cursor is how far the driver's waits have read the stream.
func (d *Driver) cursor() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.next
}

// seenSince says whether the stream carried an event of typ for the
// driver's session at or after position from, whatever a wait consumed.
func (d *Driver) seenSince(from int, typ string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ev := range d.events[from:] {
		if ev.Get("type").String() == typ && ev.Get("properties.sessionID").String() == d.sid {
			return true
		}
	}
	return false
}

// controlScenarios are the sessions answered over the relay.
func controlScenarios() []Scenario {
	permOver := func(a answer.Answer, want string) func(d *Driver) error {
		return func(d *Driver) error {
			if err := d.Prompt("SCENARIO:perm list files"); err != nil {
				return err
			}
			if _, err := d.Wait("permission.asked", 3*time.Minute); err != nil {
				return err
			}
			if err := d.Answer("bash", a); err != nil {
				return err
			}
			got, err := d.toolOutcome("bash")
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("the bash call ended %s, want %s", got, want)
			}
			return d.Idle()
		}
	}
	return []Scenario{
		{Name: "control_perm_once", Description: "bash asks permission; answered once over the relay (the bridge's reply call): the call runs",
			Control: true, Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}, Model: permModel,
			Drive: permOver(answer.Answer{Option: "once"}, "completed")},
		{Name: "control_perm_reject", Description: "bash asks permission; answered over the relay with free text: a rejection whose text the model reads; the call does not run",
			Control: true, Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}, Model: permModel,
			Drive: permOver(answer.Answer{Text: "not now, use the staging box"}, "error")},
		{Name: "control_question", Description: "the question tool asks one select question; answered over the relay with a choice id, which reaches the server as its label",
			Control: true, Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1},
			Model: dbQuestion("thanks"),
			Drive: func(d *Driver) error {
				q, err := d.askDB()
				if err != nil {
					return err
				}
				if err := d.Answer(q.Get("properties.id").String(), answer.Answer{Values: map[string]any{"1": "2"}}); err != nil {
					return err
				}
				r, err := d.Wait("question.replied", 3*time.Minute)
				if err != nil {
					return err
				}
				if got := r.Get("properties.answers").Raw; !strings.Contains(got, "SQLite") {
					return fmt.Errorf("the server took the answers %s", got)
				}
				return d.Idle()
			}},
		// Live, the refusal is the command's answer via control (the
		// sender reads it back); the tape holds only the server's
		// question.rejected, which a replay with no command noted (and the
		// read-only plugin) records as a dismissal: no answer.
		{Name: "control_question_reject", Description: "the question tool asks one select question; refused over the relay (option reject), which the bridge sends to the server's own reject route: the server reports question.rejected and the question call ends as a dismissal; the sender reads the refusal back via control, the tape's replay sees a dismissal",
			Control: true, Facts: truth.Facts{Turns: 1, Sessions: 1},
			Model: dbQuestion("understood"),
			Drive: func(d *Driver) error {
				q, err := d.askDB()
				if err != nil {
					return err
				}
				from := d.cursor()
				if err := d.Answer(q.Get("properties.id").String(), answer.Answer{Option: "reject"}); err != nil {
					return err
				}
				// OpenCode 1.18.33 fails the call with its rejection error;
				// Kilo 7.7.7 completes it saying the user dismissed the
				// question. Either way the model reads a dismissal.
				part, err := d.toolPart("question")
				if err != nil {
					return err
				}
				if said := part.Get("state.error").String() + part.Get("state.output").String(); !strings.Contains(said, "dismissed") {
					return fmt.Errorf("the refused question call ended %s saying %q, not a dismissal", part.Get("state.status"), said)
				}
				if !d.seenSince(from, "question.rejected") {
					return errors.New("the server never reported the question rejected")
				}
				return d.Idle()
			}},
		{Name: "control_cancel", Description: "a reply the model never finishes, cancelled over the relay (control.cancel scope run → the server's session abort)",
			Control: true, Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1},
			Model: map[string][]fakemodel.Reply{"slow": {{Hang: true}}},
			Drive: func(d *Driver) error {
				if err := midReply(d); err != nil {
					return err
				}
				if err := d.CancelRun(); err != nil {
					return err
				}
				return d.Idle()
			}},
		{Name: "control_ui_answer", Description: "bash asks permission with the relay live (the ask answerable over it), but the server's own REST route answers it first: the call runs, the ask settles once as that answer and nothing waits on the relay",
			Control: true, Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}, Model: permModel,
			Drive: func(d *Driver) error {
				if err := d.Prompt("SCENARIO:perm list files"); err != nil {
					return err
				}
				ask, err := d.Wait("permission.asked", 3*time.Minute)
				if err != nil {
					return err
				}
				if err := d.sender().Pending(d.sid, true); err != nil {
					return err
				}
				if err := d.ReplyPermission(ask.Get("properties.id").String(), "once"); err != nil {
					return err
				}
				if got, err := d.toolOutcome("bash"); err != nil || got != "completed" {
					return fmt.Errorf("the bash call ended %q (%v), want completed", got, err)
				}
				if err := d.Idle(); err != nil {
					return err
				}
				return d.sender().Pending(d.sid, false)
			}},
		{Name: "control_relay_down", Description: "control on, no relay listening: the ask claims no answer path and is answered over the server's own REST route, without delay",
			Control: true, RelayDown: true, Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}, Model: permModel,
			Drive: func(d *Driver) error { return permTurn(d, "once") }},
	}
}
