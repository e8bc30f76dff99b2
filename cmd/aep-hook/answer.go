package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/internal/secretfile"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// SenderFlags reach the relay as a control sender.
type SenderFlags struct {
	Relay string `help:"The relay's WebSocket binding." default:"${relay_socket}" env:"AEP_RELAY" placeholder:"ws://HOST:PORT/socket"`
	Token string `help:"Bearer token (a consumer token with subscribe:attention.*, read and control:control.attention.respond scopes); default, for a relay on this machine, your own token ($AEP_HOME/token), which the relay accepts without a tokens file." env:"AEP_RELAY_TOKEN" placeholder:"TOKEN"`
	As    string `help:"The sender's name: the consumer token's NAME (consumer:NAME); the commands' agent." env:"AEP_SENDER" placeholder:"NAME"`
	JSON  bool   `name:"json" help:"Print JSON."`
}

func (f SenderFlags) client(getenv func(string) string) (*answer.Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	as := f.As
	if as == "" {
		as = getenv("USER")
	}
	if as == "" {
		as = userName()
	}
	tok := f.Token
	if tok == "" {
		var err error
		if tok, err = secretfile.LocalUser(shim.Config{Home: getenv("AEP_HOME")}.HomeDir(), f.Relay); err != nil {
			return nil, exitError{code: 2, msg: fmt.Sprintf("no --token, and the user token file cannot be used: %v", err)}
		}
	}
	return &answer.Client{URL: f.Relay, Token: tok, Agent: as, Host: getenv("AEP_HOST"), Tenant: getenv("AEP_TENANT")}, nil
}

// PendingCmd is `aep-hook pending`.
type PendingCmd struct {
	SenderFlags
	getenv func(string) string
}

// Run lists what waits for a human now.
func (c *PendingCmd) Run(s *Streams) error {
	ctx, stop := untilInterrupted()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cl, err := c.client(c.getenv)
	if err != nil {
		return err
	}
	cn, err := cl.Dial(ctx)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	defer cn.Close()
	rs, err := cn.Pending(ctx)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	if c.JSON {
		enc := json.NewEncoder(s.Out)
		for _, r := range rs {
			enc.Encode(r)
		}
		return nil
	}
	printPending(s.Out, rs)
	return nil
}

// printPending is the table of pending requests.
func printPending(w io.Writer, rs []answer.Request) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "nothing waits for a human")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSESSION\tKIND\tANSWER\tPROMPT")
	for _, r := range rs {
		how := "in the agent's own UI"
		if r.Answerable {
			var ids []string
			for _, o := range r.Options {
				ids = append(ids, o.ID)
			}
			how = "aep-hook answer"
			if len(ids) > 0 {
				how += " (" + strings.Join(ids, ", ") + ")"
			} else if r.Kind == "form" {
				how += " --values"
			}
		}
		prompt := strings.Join(strings.Fields(r.Prompt), " ")
		if len(prompt) > 70 {
			prompt = prompt[:67] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Agent, r.Session, r.Kind, how, prompt)
	}
	tw.Flush()
}

// AnswerCmd is `aep-hook answer ID ...`.
type AnswerCmd struct {
	SenderFlags
	ID     string        `arg:"" help:"The request's id (attention.requested), or its unique start."`
	Allow  bool          `help:"Allow it (its own allow-once option)." xor:"answer"`
	Deny   bool          `help:"Refuse it (its own refusing option); with --text, the text is the reason." xor:"answer"`
	Option string        `help:"Answer with this option id." xor:"answer" placeholder:"ID"`
	Text   string        `help:"Answer with text: an option word counts as that option, other text refuses with it as guidance (AEP-0008)." placeholder:"TEXT"`
	Values string        `help:"Answer a form with these values (a JSON object, field id to value)." xor:"answer" placeholder:"JSON"`
	Window time.Duration `help:"The ack window: silence past it is a timeout." default:"10s"`
	getenv func(string) string
}

// Run sends the answer and reports its outcome: exit 0 when the target
// applied it, 1 when it or the relay refused it, 3 on a timeout.
func (c *AnswerCmd) Run(s *Streams) error {
	ctx, stop := untilInterrupted()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := c.client(c.getenv)
	if err != nil {
		return err
	}
	cl.Window = c.Window
	cn, err := cl.Dial(ctx)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	defer cn.Close()
	r, err := cn.Find(ctx, c.ID)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	a, err := c.answer(r)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if !r.Answerable {
		fmt.Fprintf(s.Err, "aep-hook: %s does not declare control or no live target claims its session; sending anyway (the target or the relay will say)\n", r.ID)
	}
	out, err := cn.Respond(ctx, r, a)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	if c.JSON {
		json.NewEncoder(s.Out).Encode(out)
	} else {
		printOutcome(s.Out, r, out)
	}
	switch out.Ack {
	case answer.Accepted:
		return nil
	case answer.Timeout:
		return exitError{code: 3}
	}
	return exitError{code: 1}
}

// answer builds the answer the flags give.
func (c *AnswerCmd) answer(r answer.Request) (answer.Answer, error) {
	switch {
	case c.Allow:
		return answer.Allow(r)
	case c.Deny:
		return answer.Deny(r, c.Text)
	case c.Option != "":
		return answer.Answer{Option: c.Option, Text: c.Text}, nil
	case c.Values != "":
		var v map[string]any
		if err := json.Unmarshal([]byte(c.Values), &v); err != nil || v == nil {
			return answer.Answer{}, errors.New("--values is a JSON object: field id to value")
		}
		return answer.Answer{Values: v}, nil
	case c.Text != "":
		return answer.Answer{Text: c.Text}, nil
	}
	return answer.Answer{}, errors.New("say the answer: --allow, --deny, --option ID, --text TEXT or --values JSON")
}

func printOutcome(w io.Writer, r answer.Request, out answer.Outcome) {
	switch out.Ack {
	case answer.Accepted:
		fmt.Fprintf(w, "accepted by %s (command %s)\n", r.Agent, out.Command)
		if out.Answered != nil {
			var e struct {
				Data struct {
					Answer map[string]any `json:"answer"`
					By     string         `json:"by"`
					Via    string         `json:"via"`
				} `json:"data"`
			}
			json.Unmarshal(out.Answered, &e)
			b, _ := json.Marshal(e.Data.Answer)
			fmt.Fprintf(w, "answered %s by %s via %s\n", redact.Diagnostic(string(b)), e.Data.By, e.Data.Via)
		} else {
			fmt.Fprintln(w, "no attention.answered arrived in time; aep-hook tail shows the session")
		}
		if out.Resolved != nil {
			fmt.Fprintln(w, "resolved")
		}
	case answer.Rejected:
		if out.Detail == "" {
			fmt.Fprintf(w, "rejected by %s: %s (its detail is above the target's capture ceiling for control.*; AEP_CAPTURE_OVERRIDES=control.*=redacted in the target's hooks shows it)\n", r.Agent, out.Reason)
			break
		}
		fmt.Fprintf(w, "rejected by %s: %s: %s\n", r.Agent, out.Reason, redact.Diagnostic(out.Detail))
	case answer.Refused:
		fmt.Fprintf(w, "refused by the relay: %s: %s\n", out.Reason, redact.Diagnostic(out.Detail))
	case answer.Timeout:
		fmt.Fprintf(w, "no acknowledgement within the window (sent %d times with the same id): a timeout\n", out.Sent)
	}
}
