package realagents

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// The kimi web scenarios answered over control: the bridge runs with
// --control against a real `aep-hook relay` (the scenario's Control, as
// for the hooks), and the harness's sender answers the requests in order
// instead of the web UI; the server's behaviour proves the answer (the
// file written or not, the turn aborted). The recording is the bridge's
// connections, its calls to the server among them, and the replay answers
// again over a fresh relay.

// kwSender is the harness's sender on the scenario's relay.
func kwSender(r *Run) Sender {
	return Sender{URL: r.Getenv("AEP_RELAY"), Token: controlSenderTok, As: controlSender}
}

// kwCancelID is the control.cancel the scenarios send.
const kwCancelID = "01KREALKWCANCEL0000000001"

// answered is a Control answering its requests with as, in order.
func answered(as ...answer.Answer) *Control {
	c := &Control{}
	for i := range as {
		c.Answers = append(c.Answers, ControlAnswer{Answer: &as[i]})
	}
	return c
}

func kimiWebControlApprove(bash func(string) fakemodel.Reply) Scenario {
	return Scenario{
		Name: "control-approve", Mode: "rest",
		Description: "kimi web: an approval answered approved over the relay (the bridge's decision call): the command runs",
		Facts:       truth.Facts{Turns: 1, Answers: 1, Control: 1, ViaControl: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"write": {bash("echo over-control > ctl.txt"), say("Written.")}}),
		Control:     answered(answer.Answer{Option: "approved"}),
		Drive: func(r *Run) error {
			err := kimiWebSession(r, func(k *kimiWeb, sid string) error {
				if _, err := k.prompt(sid, "SCENARIO:write the file"); err != nil {
					return err
				}
				return k.waitTurns(sid, 1)
			})
			if err != nil {
				return err
			}
			return r.Exists("ctl.txt")
		},
	}
}

func kimiWebControlReject(bash func(string) fakemodel.Reply) Scenario {
	return Scenario{
		Name: "control-reject", Mode: "rest",
		Description: "kimi web: an approval answered over the relay with free text: rejected with the text as feedback; the command does not run",
		Facts:       truth.Facts{Turns: 1, Answers: 1, Control: 1, ViaControl: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"write": {bash("echo never > ctl.txt"), say("Not written.")}}),
		Control:     answered(answer.Answer{Text: "not now, use the staging box"}),
		Drive: func(r *Run) error {
			err := kimiWebSession(r, func(k *kimiWeb, sid string) error {
				if _, err := k.prompt(sid, "SCENARIO:write the file"); err != nil {
					return err
				}
				return k.waitTurns(sid, 1)
			})
			if err != nil {
				return err
			}
			return r.Absent("ctl.txt")
		},
	}
}

func kimiWebControlCancel(bash func(string) fakemodel.Reply) Scenario {
	return Scenario{
		Name: "control-cancel", Mode: "rest",
		Description: "kimi web: a long command approved over the relay, then the turn cancelled over the relay (control.cancel → the prompt's abort)",
		Facts:       truth.Facts{Turns: 1, Answers: 1, Interrupts: 1, Control: 1, ViaControl: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"slow": {bash("sleep 30"), say("Slept.")}}),
		Control:     answered(answer.Answer{Option: "approved"}),
		Drive: func(r *Run) error {
			return kimiWebSession(r, func(k *kimiWeb, sid string) error {
				if _, err := k.prompt(sid, "SCENARIO:slow take long"); err != nil {
					return err
				}
				if _, err := k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "tool.call.started" }, 1, time.Minute); err != nil {
					return err
				}
				if err := kwSender(r).Cancel(sid, kwCancelID); err != nil {
					return err
				}
				return k.waitTurns(sid, 1)
			})
		},
	}
}

// kimiWebAsk is the model's AskUserQuestion of the question scenarios.
func kimiWebAsk() fakemodel.Reply {
	return calls(call("AskUserQuestion", obj{"questions": []obj{{
		"question": "Which env?", "header": "Env", "multi_select": false,
		"options": []obj{{"label": "dev", "description": "the dev stack"}, {"label": "prod", "description": "production"}},
	}}}))
}

// toolOutput waits for the question call's result and returns its
// output (what the model reads).
func (k *kimiWeb) toolOutput() (string, error) {
	f, err := k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "tool.result" }, 1, time.Minute)
	if err != nil {
		return "", err
	}
	return f.Get("payload.output").String(), nil
}

// The ids kimi-code's server gives the ask's one question and its second
// option (it numbers them from 0 in the order the model listed them): the
// form's field and choice ids, so the answer can be written down ahead.
const (
	kwAskID   = "q_0"
	kwAskProd = "opt_0_1"
)

func kimiWebControlQuestion() Scenario {
	return Scenario{
		Name: "control-question", Mode: "rest",
		Description: "kimi web: an AskUserQuestion card answered over the relay with the form's choice id (the bridge's answer call, kind single): the server takes it as the option's label, which the model reads",
		Facts:       truth.Facts{Turns: 1, Answers: 1, Control: 1, ViaControl: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"question": {kimiWebAsk(), say("Deploying to prod.")}}),
		Control:     answered(answer.Answer{Values: map[string]any{kwAskID: kwAskProd}}),
		Drive: func(r *Run) error {
			return kimiWebSession(r, func(k *kimiWeb, sid string) error {
				q, err := k.ask(sid)
				if err != nil {
					return err
				}
				qs := q.Get("payload.questions.0")
				if qs.Get("id").String() != kwAskID || qs.Get("options.1.id").String() != kwAskProd {
					return fmt.Errorf("the server numbered the question %s and its second option %s, the scenario answers %s with %s",
						qs.Get("id"), qs.Get("options.1.id"), kwAskID, kwAskProd)
				}
				out, err := k.toolOutput()
				if err != nil {
					return err
				}
				if !strings.Contains(out, `"prod"`) {
					return fmt.Errorf("answered prod over control, yet the tool returned %s", out)
				}
				return k.waitTurns(sid, 1)
			})
		},
	}
}

// kimiWebControlQuestionDismiss: refused over control, the request is the
// operator's answer (via control); the server reports the card dismissed
// and the call returns no answer.
func kimiWebControlQuestionDismiss() Scenario {
	return Scenario{
		Name: "control-question-dismiss", Mode: "rest",
		Description: "kimi web: an AskUserQuestion card dismissed over the relay (the bridge's dismiss call): the server reports it dismissed and the call returns no answer; the record has the dismissal as the operator's answer via control",
		Facts:       truth.Facts{Turns: 1, Answers: 1, Control: 1, ViaControl: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"question": {kimiWebAsk(), say("No answer, then.")}}),
		Control:     answered(answer.Answer{Option: "dismiss"}),
		Drive: func(r *Run) error {
			return kimiWebSession(r, func(k *kimiWeb, sid string) error {
				if _, err := k.ask(sid); err != nil {
					return err
				}
				if _, err := k.waitFrame(func(f gjson.Result) bool { return f.Get("type").String() == "event.question.dismissed" }, 1, time.Minute); err != nil {
					return err
				}
				out, err := k.toolOutput()
				if err != nil {
					return err
				}
				r.Notes = append(r.Notes, "the dismissed question's tool result: "+out)
				return k.waitTurns(sid, 1)
			})
		},
	}
}

// kimiWebControlUI: the loop is live for the approval (the relay lists it
// answerable), yet the web UI decides it first, over REST. The server's
// broadcast of its own decision settles the request once, as the UI's
// answer: the relay then holds nothing waiting, and no command is
// recorded as having answered it.
func kimiWebControlUI(bash func(string) fakemodel.Reply) Scenario {
	return Scenario{
		Name: "control-ui", Mode: "rest",
		Description: "kimi web: the bridge linked to a live relay, the approval answerable over it, but decided approved in the web UI (REST) first: the command runs, the request settles once as the UI's answer and nothing waits on the relay",
		Facts:       truth.Facts{Turns: 1, Answers: 1, Control: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"ui": {bash("echo from-the-ui > ui.txt"), say("Written.")}}),
		Control:     &Control{Answers: []ControlAnswer{{}}},
		Drive: func(r *Run) error {
			return kimiWebSession(r, func(k *kimiWeb, sid string) error {
				if _, err := k.prompt(sid, "SCENARIO:ui write the file"); err != nil {
					return err
				}
				if err := kwSender(r).Pending(sid, true); err != nil {
					return err
				}
				if err := k.resolveApproval(sid, "approved", 1); err != nil {
					return err
				}
				if err := k.waitTurns(sid, 1); err != nil {
					return err
				}
				if err := r.Exists("ui.txt"); err != nil {
					return err
				}
				return kwSender(r).Pending(sid, false)
			})
		},
	}
}

// kimiWebControlDown: the bridge runs with --control but no relay listens
// at the address it is given. It follows as ever, the approval is decided
// over REST (the web UI's way) with no delay from the missing link, and the
// bridge's record offers no answer path for the request: nothing could
// have answered it over control.
func kimiWebControlDown(bash func(string) fakemodel.Reply) Scenario {
	return Scenario{
		Name: "control-down", Mode: "rest",
		Description: "kimi web: the bridge run with --control and no relay listening: it follows as ever, the approval decided over REST lets the command run, and the record claims no control path",
		Facts:       truth.Facts{Turns: 1, Answers: 1},
		Model:       fakemodel.Turns(map[string][]fakemodel.Reply{"down": {bash("echo without-relay > down.txt"), say("Written.")}}),
		Control:     &Control{Down: true},
		Drive: func(r *Run) error {
			err := kimiWebSession(r, func(k *kimiWeb, sid string) error {
				return k.turn(sid, "SCENARIO:down write the file", "approved")
			})
			if err != nil {
				return err
			}
			if err := r.Exists("down.txt"); err != nil {
				return err
			}
			return noControlClaims(filepath.Join(r.Getenv("AEP_HOME"), "logs"))
		},
	}
}

// noControlClaims fails when any attention.requested written under root
// names control as a way to answer it, or when none was written at all.
func noControlClaims(root string) error {
	asks := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			ev := gjson.Parse(line)
			if ev.Get("type").String() != "attention.requested" {
				continue
			}
			asks++
			for _, v := range ev.Get("data.respond_via").Array() {
				if v.String() == "control" {
					return fmt.Errorf("%s: a request no relay could answer claims control: %s", filepath.Base(p), line)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if asks == 0 {
		return fmt.Errorf("no attention.requested recorded under %s", root)
	}
	return nil
}
