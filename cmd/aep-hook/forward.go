package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/aep-hook/aep-hook/adapters"
	"github.com/aep-hook/aep-hook/adapters/forward"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/adapters/pi"
	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control/wss"
)

// ForwardCmd is `aep-hook forward opencode|kilo|pi`: the process a
// forwarder plugin (the OpenCode or Kilo plugin, the pi extension) starts
// once per agent process; it records the moments the plugin writes to its
// stdin, one JSON line each in the form `aep-hook map` reads for the
// agent's plugin table, until the agent closes the pipe.
type ForwardCmd struct {
	CaptureFlags
	Vendor string `arg:"" enum:"opencode,kilo,pi" help:"The agent whose plugin writes here: opencode, kilo or pi."`
	Mode   string `help:"primary (the whole record: the default) or companion (only x.<agent>.* events, when aep-hook follow is the primary; OpenCode and Kilo)." enum:"primary,companion" default:"primary" env:"AEP_PLUGIN_MODE"`
	Deltas bool   `help:"Record token deltas (the plugins and the pi extension send them with AEP_DELTAS=1)."`
	Hold   bool   `help:"pi only: one held tool_call line on stdin, the extension's opt-in control gate (AEP_CONTROL, AEP_CONTROL_TOOLS); the handler's reply on stdout."`

	getenv func(string) string
}

// Run records stdin until it ends. It always exits 0: the plugin never
// learns of a failure from aep-hook (failures go to the error log `aep-hook
// doctor` shows).
func (c *ForwardCmd) Run(s *Streams) error {
	table := c.Vendor
	if prof, ok := opencode.Profiles[c.Vendor]; ok {
		table = prof.Plugin
	}
	v, ok := mapping.Lookup(table)
	if !ok {
		return exitError{code: 2, msg: fmt.Sprintf("forward: no table for %q", c.Vendor)}
	}
	if c.Hold {
		return c.hold(s, v)
	}
	// The agent may be interrupted from its terminal; what its plugin
	// already wrote is still read to the end.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	em, errs := teeEmitter(c.CaptureFlags)
	f := &forward.Forwarder{
		Name:   v.Name,
		Decode: func(l []byte) ([]mapping.Moment, error) { return adapters.Decode(v.Transport, l) },
		Handle: em.Handler(v),
		Errors: errs,
		Nonce:  shim.NewIDs().Now,
		Mode:   mapping.Mode(c.Mode),
		Deltas: c.Deltas,
	}
	if _, ok := opencode.Profiles[c.Vendor]; ok && f.Mode == mapping.Primary {
		// The pipe ends when the server exits: close the turns it cut
		// (as companion, the stream bridge's catch-up does).
		f.Session = func(m mapping.Moment) string {
			if _, s := v.Identify(m); s != mapping.UnknownSession {
				return s
			}
			return ""
		}
		f.Ended = opencode.ServerExited
	}
	f.Run(s.In)
	return nil
}

// hold is `aep-hook forward pi --hold`: one hook firing of the pi table,
// the tool_call line the extension holds on stdin. It runs as the hook
// vendors' firings do: the call recorded, held for an answer over the
// relay within the budget when the gate lists its tool and a relay takes
// it, the handler's reply on stdout (nothing: the call proceeds), exit 0
// whatever happens.
func (c *ForwardCmd) hold(s *Streams, v mapping.Vendor) error {
	if c.Vendor != "pi" {
		return exitError{code: 2, msg: "forward: --hold is for pi's tool_call gate"}
	}
	getenv := c.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s.enterHook()
	runPiHold(v, c.capture(), s, getenv)
	return nil
}

// runPiHold runs the held firing of the pi table v.
func runPiHold(v mapping.Vendor, capture hookmode.Capture, s *Streams, getenv func(string) string) {
	f := hookmode.Flags{Capture: capture, Secure: wss.Client}
	hookmode.Run(pi.Held(v), f, nil, s.In, s.Out, getenv)
}

// piHoldFast runs `aep-hook forward pi --hold`, as the extension starts it
// (no other flag: the settings come from the environment), without
// building the command line parser, which costs a held run more than the
// rest of it together; ok is false for any other command line.
func piHoldFast(args []string, s *Streams, getenv func(string) string) (code int, ok bool) {
	if len(args) != 3 || args[0] != "forward" || args[1] != "pi" || args[2] != "--hold" {
		return 0, false
	}
	f, ok := hookmode.ParseArgs(nil, getenv)
	v, found := mapping.Lookup("pi")
	if !ok || !found {
		return 0, false // a setting kong reports, or no table: the full parser
	}
	s.enterHook()
	runPiHold(v, f.Capture, s, getenv)
	return 0, true
}
