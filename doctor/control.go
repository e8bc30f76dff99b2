package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

// ControlPosture is how an agent's registrations answer over the control
// loop, read back from the command lines install wrote.
type ControlPosture struct {
	// Holdable are the events the agent's table can hold (none: the
	// agent is observe-only whatever is set).
	Holdable []string
	Gate     bool // the table holds them only for a tool list
	// On are the registered events whose command line turns control on.
	On     []string
	Relay  string
	Tools  []string      // the gate's tool list, as registered
	Budget time.Duration // the wait each held hook allows
	// Timeout is the vendor's hook timeout on a held registration, in
	// seconds (the registered one, else the vendor's stated default; 0:
	// not known here).
	Timeout    int
	TimeoutSet bool // Timeout is registered, not the vendor's default
	// Reach is the relay's reachability: "" when not checked, else what
	// a TCP dial found.
	Reach     string
	Reachable bool
	// Token says whether the user's token file, which the held hooks
	// present to the relay, is there and usable.
	Token   string
	TokenOK bool
	Err     error // a registered setting the hooks refuse (control stays off)
}

// Fits reports whether the vendor's hook timeout leaves the held hook its
// whole budget (true when the timeout is not known here).
func (p ControlPosture) Fits() bool {
	return p.Timeout == 0 || p.Timeout >= installer.FitTimeout(p.Budget)
}

// Control reads agent a's control posture from its registrations found,
// with home the AEP home (its token file) and dial, when set, checking the
// relay (nil: not checked).
func Control(a installer.Agent, found []installer.Found, home string, dial func(hostport string) error) ControlPosture {
	p := ControlPosture{Holdable: a.Held.Events, Gate: a.Held.Gate}
	if len(p.Holdable) == 0 {
		return p
	}
	for _, f := range found {
		if !slices.Contains(p.Holdable, f.Event) {
			continue
		}
		env, _ := installer.CommandEnv(f.Command)
		cfg, err := control.FromEnv(func(k string) string {
			if k == "AEP_RELAY_TOKEN" && env[k] == "" {
				// Only the settings are asked here: the token is
				// doctor's own check (tokenState), never read into it.
				return "-"
			}
			return env[k]
		})
		if err != nil {
			p.Err = fmt.Errorf("%s: %w", f.Event, err)
			continue
		}
		if cfg == nil {
			continue
		}
		p.On = append(p.On, f.Event)
		p.Relay, p.Tools = cfg.URL, cfg.Gate.Tools
		p.Budget = cfg.Budget
		if p.Budget == 0 {
			p.Budget = mapping.DefaultBudget
		}
	}
	if len(p.On) == 0 {
		return p
	}
	p.Timeout = a.Timeout
	for _, f := range found {
		if f.Event == p.On[0] && f.Timeout > 0 {
			p.Timeout, p.TimeoutSet = f.Timeout, true
		}
	}
	if dial != nil {
		p.Reach, p.Reachable = reach(p.Relay, dial)
	}
	p.Token, p.TokenOK = tokenState(home)
	return p
}

// reach dials the relay's host and port.
func reach(relay string, dial func(string) error) (string, bool) {
	u, err := url.Parse(relay)
	if err != nil || u.Host == "" {
		return "not a URL", false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "wss" {
			port = "443"
		}
	}
	hp := net.JoinHostPort(u.Hostname(), port)
	if err := dial(hp); err != nil {
		return "nothing answers at " + hp + " (the held hooks reply at once and the agent's own dialog takes over)", false
	}
	return "reachable (" + hp + " accepts connections)", true
}

// DialTCP is a short TCP connection check.
func DialTCP(hostport string) error {
	c, err := net.DialTimeout("tcp", hostport, 500*time.Millisecond)
	if err != nil {
		return err
	}
	return c.Close()
}

// tokenState says whether the user's token file is present and usable,
// never its content.
func tokenState(home string) (string, bool) {
	path := filepath.Join(home, guard.TokenFile)
	_, err := guard.ReadSecretFile(path)
	switch {
	case err == nil:
		return "present (" + path + ")", true
	case errors.Is(err, fs.ErrNotExist):
		return "none at " + path + " (the held hooks have no token to present unless AEP_RELAY_TOKEN is set where the agent runs)", false
	}
	return "unusable: " + err.Error(), false
}

// Surfaces says what the posture holds, in words.
func (p ControlPosture) Surfaces() string {
	s := strings.Join(p.On, ", ")
	if p.Gate {
		tools := "no tool (the gate holds nothing)"
		if len(p.Tools) > 0 {
			tools = strings.Join(p.Tools, ", ")
		}
		s += " (gate: " + tools + ")"
	}
	return s
}

// TimeoutText is the budget against the vendor's hook timeout.
func (p ControlPosture) TimeoutText() string {
	t := "the vendor's default hook timeout (not known here)"
	switch {
	case p.TimeoutSet:
		t = "hook timeout " + strconv.Itoa(p.Timeout) + " s (registered)"
	case p.Timeout > 0:
		t = "hook timeout " + strconv.Itoa(p.Timeout) + " s (the vendor's default)"
	}
	return fmt.Sprintf("budget %s within %s", p.Budget, t)
}
