package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/internal/guard"
)

// Buttons are the answer buttons of push notifications and the listener
// that serves them. A button is an ntfy http action: a POST to a URL of
// this listener naming the request and the choice, signed with a key only
// this notifier holds, so the URL is unguessable and is the token (a
// listener off loopback serves nothing without one). A press sends
// control.attention.respond over the relay's WebSocket as the notifier's
// own identity, so the agent records the answer by that name, via
// control.
//
// Only permission requests that declare respond_via control get buttons:
// a card answered any other way would show buttons that do nothing. A
// request settles when the relay's stream says it was answered, resolved
// or timed out, or when a press's answer is accepted; a press for a
// settled request answers nothing and says so, which makes each button
// (and each notification) good for one answer.
type Buttons struct {
	base    *url.URL
	key     []byte
	guard   *guard.Guard
	log     io.Writer
	fail    func(stage, msg string)
	respond func(ctx context.Context, r Request, a answer.Answer) (answer.Outcome, error)

	mu    sync.Mutex
	cards map[string][]*card // by request id
	order []*card            // oldest first, for the bound
}

// card is one request the buttons may answer.
type card struct {
	req     Request
	settled bool
	busy    bool // a press is being answered
}

// maxCards bounds the requests remembered (pending and settled); past
// it the oldest are forgotten, and their buttons answer nothing.
const maxCards = 20000

// ButtonOptions wire Buttons to their surroundings.
type ButtonOptions struct {
	// Home holds the signing key (Home/notify/buttons/token, made on
	// first use, mode 0600), so buttons already sent still work after a
	// restart.
	Home string
	// Host is the {host} of the commands' source.
	Host string
	// Log receives one line per answered press (never a URL).
	Log io.Writer
	// Fail records a failure (default: the notifier's internal error
	// log, once New is given these buttons).
	Fail func(stage, msg string)
}

// NewButtons makes the buttons of s (which must have actions): the key,
// the listener's guard, the sender of answers.
func NewButtons(s *Settings, o ButtonOptions) (*Buttons, error) {
	if s.Actions == nil {
		return nil, errors.New("notify: no actions configured")
	}
	key, err := guard.UserToken(filepath.Join(o.Home, "notify", "buttons"))
	if err != nil {
		return nil, fmt.Errorf("notify buttons: the signing key: %w", err)
	}
	b := &Buttons{base: s.Actions.URL, key: []byte(key), log: o.Log, fail: o.Fail, cards: map[string][]*card{},
		guard: &guard.Guard{Hosts: []string{s.Actions.URL.Host}, Origins: s.Actions.Origins}}
	if b.log == nil {
		b.log = io.Discard
	}
	client := answer.Client{URL: s.Actions.Socket, Token: s.Token, Agent: s.Agent, Host: o.Host,
		Outcome: 5 * time.Second}
	b.respond = func(ctx context.Context, r Request, a answer.Answer) (answer.Outcome, error) {
		c := client
		// The relay routes a tenant's commands to its own targets only.
		c.Tenant = r.Tenant
		cn, err := c.Dial(ctx)
		if err != nil {
			return answer.Outcome{}, err
		}
		defer cn.Close()
		return cn.Respond(ctx, answerRequest(r), a)
	}
	return b, nil
}

// answerable reports whether r gets buttons: a permission request that
// declares it takes an answer over control.
func answerable(r Request) bool {
	return r.Kind == "permission" && slices.Contains(r.RespondVia, "control")
}

// track remembers a request the buttons may answer.
func (b *Buttons) track(r Request) {
	if !answerable(r) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.cards[r.ID] {
		if c.req.Source == r.Source {
			return
		}
	}
	c := &card{req: r}
	b.cards[r.ID] = append(b.cards[r.ID], c)
	b.order = append(b.order, c)
	if len(b.order) > maxCards {
		old := b.order[0]
		b.order = b.order[1:]
		b.cards[old.req.ID] = slices.DeleteFunc(b.cards[old.req.ID], func(c *card) bool { return c == old })
		if len(b.cards[old.req.ID]) == 0 {
			delete(b.cards, old.req.ID)
		}
	}
}

// settle marks a request answered, resolved or timed out: its buttons
// answer nothing from now on.
func (b *Buttons) settle(source, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.cards[id] {
		if c.req.Source == source {
			c.settled = true
		}
	}
}

// A button's choice: allow, deny, or o<N>, the request's option N.
const (
	choiceAllow = "allow"
	choiceDeny  = "deny"
)

// actions are the buttons of r, labelled with shown (its options at the
// route's ceiling): one per option the card names (the one that allows
// first, then the one that refuses, then the rest, as many as ntfy
// shows), labelled as the card does where the ceiling shows its labels
// (redacted), else Allow, Deny or the option's id; Allow and Deny when
// the card names no options.
func (b *Buttons) actions(r Request, shown []Option) []Action {
	if !answerable(r) {
		return nil
	}
	if len(r.Options) == 0 {
		return []Action{{Label: "Allow", URL: b.url(r, choiceAllow)}, {Label: "Deny", URL: b.url(r, choiceDeny)}}
	}
	ar := answerRequest(r)
	allow, _ := answer.Allow(ar)
	deny, _ := answer.Deny(ar, "")
	idx := make([]int, 0, len(r.Options))
	for i, o := range r.Options {
		if o.ID == allow.Option {
			idx = append(idx, i)
		}
	}
	for i, o := range r.Options {
		if o.ID == deny.Option && o.ID != allow.Option {
			idx = append(idx, i)
		}
	}
	for i, o := range r.Options {
		if o.ID != allow.Option && o.ID != deny.Option {
			idx = append(idx, i)
		}
	}
	var out []Action
	for _, i := range idx[:min(len(idx), maxNtfyActions)] {
		o := r.Options[i]
		label := ""
		for _, s := range shown {
			// At metadata a label is the id again (the vendor's text is
			// not shown): a word then says what the button does.
			if s.ID == o.ID && s.Label != o.ID {
				label = s.Label
			}
		}
		switch {
		case label != "":
		case o.ID == allow.Option:
			label = "Allow"
		case o.ID == deny.Option:
			label = "Deny"
		default:
			label = clipText(oneLine(o.ID), 60)
		}
		out = append(out, Action{Label: label, URL: b.url(r, "o"+strconv.Itoa(i))})
	}
	return out
}

// url is the button's URL: the listener's public base, then
// /answer/ID/CHOICE/MAC.
func (b *Buttons) url(r Request, choice string) string {
	return strings.TrimSuffix(b.base.String(), "/") + "/answer/" + url.PathEscape(r.ID) + "/" + choice + "/" + b.mac(r.Source, r.ID, choice)
}

// mac signs one button: 144 bits of HMAC-SHA256 over the request's source
// and id and the choice.
func (b *Buttons) mac(source, id, choice string) string {
	h := hmac.New(sha256.New, b.key)
	io.WriteString(h, "aep-hook notify button\x00"+source+"\x00"+id+"\x00"+choice)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// answerRequest is r as the answer package takes it.
func answerRequest(r Request) answer.Request {
	opts := make([]answer.Option, len(r.Options))
	for i, o := range r.Options {
		opts[i] = answer.Option{ID: o.ID, Label: o.Label}
	}
	return answer.Request{ID: r.ID, Agent: r.Agent, Session: r.Session, Source: r.Source,
		Subject: r.Subject, Time: r.At.UTC().Format(time.RFC3339Nano), Kind: r.Kind, Options: opts,
		RespondVia: r.RespondVia, Answerable: true}
}

// answerOf is the answer a choice stands for, and how to name it.
func answerOf(r Request, choice string) (answer.Answer, string, error) {
	ar := answerRequest(r)
	switch {
	case choice == choiceAllow:
		a, err := answer.Allow(ar)
		return a, "allow", err
	case choice == choiceDeny:
		a, err := answer.Deny(ar, "")
		return a, "deny", err
	case strings.HasPrefix(choice, "o"):
		i, err := strconv.Atoi(choice[1:])
		if err == nil && i >= 0 && i < len(r.Options) && choice == "o"+strconv.Itoa(i) {
			return answer.Answer{Option: r.Options[i].ID}, "option " + r.Options[i].ID, nil
		}
	}
	return answer.Answer{}, "", errors.New("not a choice")
}

// Handler is the buttons' listener: every request passes the guard (its
// Host names this listener or the public URL's host; a browser's Origin
// is its own or allowed) and must be a signed button.
func (b *Buttons) Handler() http.Handler { return b.guard.Wrap(http.HandlerFunc(b.press)) }

// Serve serves the buttons on ln until ctx ends.
func (b *Buttons) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(sctx)
			cancel()
		case <-done:
		}
	}()
	err := srv.Serve(ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// pressTimeout bounds one press: the relay's ack window with its
// retries, then the outcome.
const pressTimeout = 30 * time.Second

// press answers one button.
func (b *Buttons) press(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" {
		// The guard let this origin through (its own, or allowed): a web
		// app pressing the button may read the reply.
		w.Header().Set("Access-Control-Allow-Origin", o)
		w.Header().Set("Vary", "Origin")
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, "A button answers with POST; nothing was answered.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	id, choice, sig, ok := parseButton(r.URL.EscapedPath())
	if !ok {
		reply(w, http.StatusNotFound, "Not a button of this notifier; nothing was answered.")
		return
	}
	b.mu.Lock()
	var c *card
	for _, cand := range b.cards[id] {
		if hmac.Equal([]byte(b.mac(cand.req.Source, id, choice)), []byte(sig)) {
			c = cand
		}
	}
	switch {
	case c == nil:
		b.mu.Unlock()
		reply(w, http.StatusNotFound, "This notifier holds no such request (settled long ago, or never answerable here); nothing was answered.")
		return
	case c.settled:
		b.mu.Unlock()
		reply(w, http.StatusGone, "This request was already settled; nothing was answered.")
		return
	case c.busy:
		b.mu.Unlock()
		reply(w, http.StatusConflict, "This request is being answered from another button; nothing more was sent.")
		return
	}
	c.busy = true
	req := c.req
	b.mu.Unlock()

	ans, what, err := answerOf(req, choice)
	if err != nil {
		b.release(c, false)
		reply(w, http.StatusNotFound, "Not a button of this notifier; nothing was answered.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pressTimeout)
	defer cancel()
	out, err := b.respond(ctx, req, ans)
	b.release(c, err == nil && out.Ack == answer.Accepted)
	if err != nil {
		b.failed("answer", fmt.Sprintf("request %s: sending the answer over the relay: %v", req.ID, err))
		reply(w, http.StatusBadGateway, "The relay could not be reached; nothing was answered.")
		return
	}
	switch out.Ack {
	case answer.Accepted:
		fmt.Fprintf(b.log, "aep-hook notify: answered %s %s (%s) from a button\n", req.Kind, req.ID, what)
		reply(w, http.StatusOK, "Answered: "+what+".")
	case answer.Rejected:
		b.failed("answer", fmt.Sprintf("request %s: the agent rejected the answer: %s", req.ID, out.Reason))
		reply(w, http.StatusConflict, "The agent did not take the answer ("+out.Reason+"); it may have been answered already.")
	case answer.Refused:
		b.failed("answer", fmt.Sprintf("request %s: the relay refused the answer: %s", req.ID, out.Reason))
		reply(w, http.StatusConflict, "Nothing was answered: the relay has no agent waiting for it ("+out.Reason+").")
	default:
		b.failed("answer", fmt.Sprintf("request %s: no acknowledgement of the answer in time", req.ID))
		reply(w, http.StatusGatewayTimeout, "The agent did not acknowledge the answer in time; the request may still be waiting.")
	}
}

// failed records a press's failure.
func (b *Buttons) failed(stage, msg string) {
	if b.fail != nil {
		b.fail(stage, msg)
	}
}

// release ends a press: settled when its answer was accepted.
func (b *Buttons) release(c *card, settled bool) {
	b.mu.Lock()
	c.busy = false
	c.settled = c.settled || settled
	b.mu.Unlock()
}

// parseButton reads .../answer/ID/CHOICE/MAC (a reverse proxy may keep a
// prefix of its own in front).
func parseButton(escaped string) (id, choice, mac string, ok bool) {
	parts := strings.Split(escaped, "/")
	if len(parts) < 4 || parts[len(parts)-4] != "answer" {
		return "", "", "", false
	}
	id, err := url.PathUnescape(parts[len(parts)-3])
	choice, mac = parts[len(parts)-2], parts[len(parts)-1]
	if err != nil || id == "" || choice == "" || mac == "" {
		return "", "", "", false
	}
	return id, choice, mac, true
}

// reply answers a press in plain text (the ntfy app shows a failure's
// text).
func reply(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}
