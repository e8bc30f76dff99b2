package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aep-hook/aep-hook/internal/secretfile"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Defaults of a hook's control posture.
const (
	// DefaultRelay is the relay's default WebSocket binding.
	DefaultRelay = "ws://127.0.0.1:8787/socket"
	// DefaultConnect bounds the connection and the hello exchange: a relay
	// that is not listening costs nothing like it (the refusal is
	// immediate), one that hangs costs at most this.
	DefaultConnect = 1500 * time.Millisecond
	// AckWindow is the window this target declares (AEP-0004 §3): it
	// acknowledges within milliseconds of a command's arrival.
	AckWindow = 5 * time.Second
	// MaxBudget bounds AEP_CONTROL_BUDGET.
	MaxBudget = 10 * time.Minute
)

// Config is a hook's control posture. The hooks are observe-only unless
// AEP_CONTROL is set: then a moment the vendor's table holds waits, within
// a budget inside the vendor's hook timeout, for an answer over the relay
// at AEP_RELAY, as the emitter AEP_RELAY_TOKEN speaks for.
type Config struct {
	URL   string
	Token string
	// Gate is the tool list of the opt-in gates (AEP_CONTROL_TOOLS).
	Gate mapping.Gate
	// Budget, when set, replaces the table's budget (AEP_CONTROL_BUDGET).
	Budget time.Duration
	// Connect bounds the connection and hello (DefaultConnect when 0).
	Connect time.Duration
	// Secure speaks TLS to a wss:// relay; FromEnv leaves it to the
	// caller (see [Secure]).
	Secure Secure
}

// FromEnv reads the posture: nil when AEP_CONTROL is unset or false. A
// value that cannot be read is an error (the hook stays observe-only and
// records it). Without AEP_RELAY_TOKEN a relay on this machine is
// reached with the user's own token ($AEP_HOME/token), which the relay
// accepts by default: no secret need be written into an agent's settings.
func FromEnv(getenv func(string) string) (*Config, error) {
	on := strings.TrimSpace(getenv("AEP_CONTROL"))
	if on == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(on)
	if err != nil {
		return nil, fmt.Errorf("AEP_CONTROL=%q is not a boolean; control stays off", on)
	}
	if !b {
		return nil, nil
	}
	c := &Config{URL: strings.TrimSpace(getenv("AEP_RELAY")), Token: strings.TrimSpace(getenv("AEP_RELAY_TOKEN"))}
	if c.URL == "" {
		c.URL = DefaultRelay
	}
	if !strings.HasPrefix(c.URL, "ws://") && !strings.HasPrefix(c.URL, "wss://") {
		return nil, fmt.Errorf("AEP_RELAY is not a ws:// or wss:// URL; control stays off")
	}
	for _, t := range strings.Split(getenv("AEP_CONTROL_TOOLS"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			c.Gate.Tools = append(c.Gate.Tools, t)
		}
	}
	if v := strings.TrimSpace(getenv("AEP_CONTROL_BUDGET")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > MaxBudget {
			return nil, fmt.Errorf("AEP_CONTROL_BUDGET=%q is not a duration up to %s; control stays off", v, MaxBudget)
		}
		c.Budget = d
	}
	if c.Token == "" {
		tok, err := secretfile.LocalUser(shim.Config{Home: getenv("AEP_HOME")}.HomeDir(), c.URL)
		if err != nil {
			return nil, fmt.Errorf("AEP_RELAY_TOKEN is unset and the user token file cannot be used: %w; control stays off", err)
		}
		c.Token = tok
	}
	return c, nil
}

// BudgetFor is how long a held moment waits: the configured budget, else
// the table's, else mapping.DefaultBudget.
func (c *Config) BudgetFor(h *mapping.Hold) time.Duration {
	switch {
	case c.Budget > 0:
		return c.Budget
	case h.Budget > 0:
		return h.Budget
	}
	return mapping.DefaultBudget
}

// ConnectWait is the bound on the connection and the hello.
func (c *Config) ConnectWait() time.Duration {
	if c.Connect > 0 {
		return c.Connect
	}
	return DefaultConnect
}

// Absent reports a dial that failed because no relay is there (nothing
// listens, the host is unreachable): the posture of a user who runs the
// relay only sometimes, not a failure to record.
func Absent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

// Hook is one hook firing's held moment.
type Hook struct {
	Config  *Config
	Vendor  mapping.Vendor
	Emitter *shim.Emitter
	// Failed records an internal failure (never content).
	Failed func(stage string, err error)
}

// Dial connects as the vendor's emitter for a held moment, accepting
// control.attention.respond.
func (h *Hook) Dial(ctx context.Context) (*Link, error) {
	id := Identity{Agent: h.Vendor.AgentName(), Instance: h.Emitter.Host + "/" + strconv.Itoa(os.Getpid())}
	return Dial(ctx, h.Config.URL, h.Config.Token, id, Offer{Accepts: []string{Respond}, AckWindow: AckWindow}, h.Config.ConnectWait(), h.Config.Secure)
}

// Wait offers the request (the attention.requested event the moment
// emitted) over link and waits within the budget for an answer, returning
// the vendor's reply; nil means nothing was applied (the budget passed,
// ctx ended, the connection failed or the relay refused the request):
// the hook replies neutrally and the agent's own dialog takes over.
func (h *Hook) Wait(ctx context.Context, link *Link, hold *mapping.Hold, session string, req *shim.Event) []byte {
	line, err := req.MarshalLine()
	if err != nil {
		h.fail("encode", err)
		return nil
	}
	var reply []byte
	r := &Request{ID: req.ID, Session: session, Hold: hold, Deliver: func(b []byte) error {
		reply = b
		return nil
	}}
	loop := &Loop{Link: link, Emitter: h.Emitter, Vendor: h.Vendor, Accepts: []string{Respond}, Failed: h.Failed,
		Nonce: func() string { return shim.NewIDs().New(time.Now()) }}
	if err := loop.Offer(r, line); err != nil {
		h.fail("send", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.Config.BudgetFor(hold))
	defer cancel()
	err = loop.Serve(ctx, r.Done)
	switch {
	case r.Lost != nil:
		h.fail("relay", r.Lost)
	case err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
		h.fail("relay", err)
	}
	if r.Done() && r.Lost == nil {
		return reply
	}
	return nil
}

func (h *Hook) fail(stage string, err error) {
	if h.Failed != nil {
		h.Failed(stage, err)
	}
}
