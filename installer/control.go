package installer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

// Control is the control posture `install --control` writes: the hooks of
// the moments an agent's table can hold run with AEP_CONTROL=1 and the
// relay's address, so they wait for an answer over the relay. None of the
// vendors here gives a hook registration an environment of its own (Kimi
// Code's [[hooks]] take only event, matcher, command and timeout), and each
// runs the registered command line through a shell, the grammar the
// installer already writes it in (a quoted binary), so the settings ride
// the command line as leading NAME=value words. The relay token is never
// written: the hook reads it from the user's own token file.
type Control struct {
	Relay  string        // AEP_RELAY (control.DefaultRelay when "")
	Budget time.Duration // AEP_CONTROL_BUDGET (0: the table's)
	Tools  []string      // AEP_CONTROL_TOOLS, the opt-in gates' tool list
}

// relay is the relay URL the posture names.
func (c *Control) relay() string {
	if c.Relay != "" {
		return c.Relay
	}
	return control.DefaultRelay
}

// Check refuses a posture the hooks would refuse (they would stay
// observe-only and record why).
func (c *Control) Check() error {
	r := c.relay()
	if !strings.HasPrefix(r, "ws://") && !strings.HasPrefix(r, "wss://") {
		return fmt.Errorf("relay %q is not a ws:// or wss:// URL", r)
	}
	if c.Budget < 0 || c.Budget > control.MaxBudget {
		return fmt.Errorf("budget %s is not between 0 and %s", c.Budget, control.MaxBudget)
	}
	for _, t := range c.Tools {
		if t == "" || strings.IndexFunc(t, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:*", r))
		}) >= 0 {
			return fmt.Errorf("gate tool %q: a tool name is letters, digits and _-.: (or * for every tool)", t)
		}
	}
	return nil
}

// words are the leading assignments a held hook's command line carries.
func (c *Control) words(gated bool) []string {
	// Values are shell words: a URL's ? or & must not reach the shell.
	w := []string{"AEP_CONTROL=1", "AEP_RELAY=" + Quote(c.relay())}
	if c.Budget > 0 {
		w = append(w, "AEP_CONTROL_BUDGET="+c.Budget.String())
	}
	if gated && len(c.Tools) > 0 {
		w = append(w, "AEP_CONTROL_TOOLS="+Quote(strings.Join(c.Tools, ",")))
	}
	return w
}

// budget is how long a held hook waits under the posture.
func (c *Control) budget() time.Duration {
	if c.Budget > 0 {
		return c.Budget
	}
	return mapping.DefaultBudget
}

// FitTimeout is the hook timeout, in whole seconds, that holds a wait of
// budget: the connection and hello, the wait, and a few seconds for the
// reply and the record after it.
func FitTimeout(budget time.Duration) int {
	return int(math.Ceil((budget + control.DefaultConnect).Seconds())) + 3
}

// Held are the registrations of an agent whose moments the control loop
// can hold: the events, and whether the table holds them only for the
// tools of the gate list (an opt-in gate) rather than always.
type Held struct {
	Events []string
	Gate   bool
	// Sole says the gate is the agent's only approval (pi asks nothing
	// itself): an allow runs the call.
	Sole bool
}

// holds reports whether the posture c makes agent a's event ev a held
// registration.
func (a Agent) holds(c *Control, ev string) bool {
	if c == nil || !slices.Contains(a.Held.Events, ev) {
		return false
	}
	return !a.Held.Gate || len(c.Tools) > 0
}

// regs are the registrations install writes in e: the agent's, with the
// held ones carrying e's control posture. Where the installer sets the
// vendor's hook timeout, a held one gets a timeout that fits the wait;
// elsewhere the vendor's own default stands (doctor compares it with the
// budget where it is known).
func (a Agent) regs(e Env) []Reg {
	rs := a.Regs(e.program())
	if e.Control == nil {
		return rs
	}
	for i := range rs {
		if a.holds(e.Control, rs[i].Event) {
			rs[i].Command = strings.Join(e.Control.words(a.Held.Gate), " ") + " " + rs[i].Command
			if rs[i].Timeout > 0 {
				rs[i].Timeout = max(rs[i].Timeout, FitTimeout(e.Control.budget()))
			}
		}
	}
	return rs
}

// ControlNotes say what a control install did not do for agent a: a table
// that holds nothing, a gate with no tool list.
func (a Agent) ControlNotes(c *Control) []string {
	if c == nil {
		return nil
	}
	switch {
	case len(a.Held.Events) == 0:
		return []string{a.Title + " has no moment the control loop can hold: its hooks stay observe-only."}
	case a.Held.Gate && len(c.Tools) == 0:
		return []string{a.Title + "'s " + strings.Join(a.Held.Events, ", ") + " gate holds only the tools you list: pass --gate-tools (Shell,WriteFile or * for every tool); its hooks stay observe-only."}
	}
	timeout := ""
	for _, h := range a.Hooks {
		if a.holds(c, h.Event) && h.Timeout > 0 {
			timeout = fmt.Sprintf(" (its hook timeout set to %d s)", max(h.Timeout, FitTimeout(c.budget())))
		}
	}
	n := []string{fmt.Sprintf("%s: the held hooks (%s) wait up to %s for an answer over %s%s; with no relay there they reply at once and %s goes on as without aep-hook.",
		a.Title, strings.Join(a.Held.Events, ", "), c.budget(), c.relay(), timeout, a.Title),
		"The relay token is not written into the settings: the held hooks present AEP_RELAY_TOKEN where set, else, for a relay on this machine, your own token file ($AEP_HOME/token)."}
	switch {
	case a.Held.Gate && a.Held.Sole:
		n = append(n, fmt.Sprintf("%s's gate holds %s; %s has no approval of its own, so an allow runs the call.", a.Title, strings.Join(c.Tools, ", "), a.Title))
	case a.Held.Gate:
		n = append(n, fmt.Sprintf("%s's gate holds %s; an allow is no objection from the hook: %s's own approval still runs after it.", a.Title, strings.Join(c.Tools, ", "), a.Title))
	}
	return n
}

// CommandEnv splits a registered command line into its leading NAME=value
// assignments and the words that run.
func CommandEnv(command string) (env map[string]string, words []string) {
	words = SplitCommand(command)
	env = map[string]string{}
	for len(words) > 0 {
		name, val, ok := strings.Cut(words[0], "=")
		if !ok || !envName(name) {
			break
		}
		env[name] = val
		words = words[1:]
	}
	return env, words
}

// envName reports whether s is a shell variable name.
func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// ExportRegs are the registrations install writes for agent a in e, the
// control posture applied (for tests that run them as the vendor would).
func ExportRegs(a Agent, e Env) []Reg { return a.regs(e) }
