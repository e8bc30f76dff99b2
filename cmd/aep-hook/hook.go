package main

import (
	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control/wss"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// CaptureFlags are the capture settings every emitting mode takes, each with
// its environment twin so a vendor's hook registration can stay bare.
type CaptureFlags struct {
	Capture         string   `help:"Capture ceiling: none, metadata, redacted or full." env:"AEP_CAPTURE" placeholder:"LEVEL"`
	CaptureOverride []string `help:"Per-category ceiling, CATEGORY_GLOB=LEVEL (repeatable); default attention.*=redacted." env:"AEP_CAPTURE_OVERRIDES" sep:"," placeholder:"GLOB=LEVEL"`
	SecretEnv       []string `help:"Environment variable whose value is a secret to redact (repeatable)." env:"AEP_SECRET_ENV" sep:"," placeholder:"NAME"`
	KeepPII         bool     `name:"keep-pii" aliases:"no-pii" help:"Keep e-mail addresses and phone numbers: do not redact them (--no-pii is the old, deprecated name)."`
}

// config gathers the shim configuration.
func (f CaptureFlags) config(getenv func(string) string) shim.Config {
	return f.capture().Config(getenv)
}

// capture is the settings as hookmode reads them.
func (f CaptureFlags) capture() hookmode.Capture {
	return hookmode.Capture{Capture: f.Capture, CaptureOverride: f.CaptureOverride, SecretEnv: f.SecretEnv, KeepPII: f.KeepPII}
}

// HookCmd is `aep-hook <adapter> [HOOK]`: one hook firing on stdin.
type HookCmd struct {
	CaptureFlags
	OutFlags
	Hook string `arg:"" optional:"" help:"The hook event name, for vendors that pass it on the command line (Antigravity)."`

	vendor   mapping.Vendor
	getenv   func(string) string
	parseErr error
}

// Run is never called by kong for hook mode; run() dispatches to (*HookCmd).run.
func (c *HookCmd) Run(s *Streams) error {
	c.run(s)
	return nil
}

// run handles one hook firing and returns the exit status, always 0.
func (c *HookCmd) run(s *Streams) int {
	// With destinations, a recorder after the log notes which logs this
	// hook wrote, for delivery once the reply is out.
	var rec *deliver.Recorder
	var extra []shim.Sink
	if len(c.Out) > 0 {
		rec = &deliver.Recorder{}
		extra = append(extra, rec)
	}
	f := hookmode.Flags{Capture: c.capture(), Out: c.Out, Token: c.Token, Insecure: c.Insecure,
		OtlpMaxCapture: c.OtlpMaxCapture, Hook: c.Hook, Secure: wss.Client}
	res := hookmode.Run(c.vendor, f, c.parseErr, s.In, s.Out, c.getenv, extra...)
	if res.Interrupted {
		return res.Code // the agent asked the hook to stop: the record is written, delivery can wait for ship
	}
	if rec != nil {
		c.deliverAfterHook(res.Config, c.vendor.Name, rec.Logs(), c.getenv)
	}
	hookmode.SweepOccasionally(res.Emitter, c.vendor.AgentName())
	return res.Code
}
