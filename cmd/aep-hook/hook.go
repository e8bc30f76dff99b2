package main

import (
	"errors"
	"time"

	"github.com/aep-hook/aep-hook/adapters/hook"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control"
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
	return shim.Config{
		Home:      getenv("AEP_HOME"),
		Host:      getenv("AEP_HOST"),
		Capture:   f.Capture,
		Overrides: cleanList(f.CaptureOverride),
		SecretEnv: cleanList(f.SecretEnv),
		NoPII:     f.KeepPII,
		Tenant:    getenv("AEP_TENANT"),
	}
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
	cfg := c.config(c.getenv)
	home := cfg.HomeDir()
	setup := c.parseErr
	p, err := cfg.Policy()
	if err != nil {
		// Fail closed: record and continue on the metadata posture.
		setup, p = err, redact.Policy{Default: redact.Metadata}
	}
	if _, err := cfg.TenantAttr(); err != nil {
		// Recorded, and the events go out without the attribute.
		setup = errors.Join(setup, err)
	}
	ctl, err := control.FromEnv(c.getenv)
	if err != nil {
		// Recorded, and the hook stays observe-only.
		setup = errors.Join(setup, err)
	}
	// With destinations, a recorder after the log notes which logs this
	// hook wrote, for delivery once the reply is out.
	var rec *deliver.Recorder
	var extra []shim.Sink
	if len(c.Out) > 0 {
		rec = &deliver.Recorder{}
		extra = append(extra, rec)
	}
	d := deadline(c.getenv("AEP_HOOK_DEADLINE"))
	if d == 0 {
		d = hook.DefaultDeadline
	}
	// A session lock whose holders make no progress for a third of the
	// deadline has a stuck holder: the hook then writes without it, in a
	// fresh epoch, rather than lose the moment to the deadline.
	cfg.LockWait = d / 3
	r := hook.Runner{
		Vendor:   c.vendor,
		Emitter:  cfg.NewFileEmitter(p, extra...),
		Errors:   shim.NewErrorLog(home),
		Deadline: d,
		Setup:    setup,
		Control:  ctl,
	}
	code := r.Run(c.Hook, s.In, s.Out)
	if r.Interrupted() {
		return code // the agent asked the hook to stop: the record is written, delivery can wait for ship
	}
	if rec != nil {
		c.deliverAfterHook(cfg, c.vendor.Name, rec.Logs(), c.getenv)
	}
	sweepOccasionally(r.Emitter, c.vendor.AgentName())
	return code
}

// Sessions may never end, so idle session state is swept by recency: about
// one hook in sweepEvery, after its reply, removes up to sweepMax state
// files of its agent untouched for sweepAge (the logs stay).
const (
	sweepEvery = 256
	sweepAge   = 30 * 24 * time.Hour
	sweepMax   = 32
)

func sweepOccasionally(em *shim.Emitter, agent string) {
	fs, ok := em.Store.(*shim.FileStore)
	if !ok || time.Now().UnixNano()%sweepEvery != 0 {
		return
	}
	fs.Sweep(agent, sweepAge, sweepMax)
}

// deadline parses AEP_HOOK_DEADLINE (a Go duration); 0 means the default.
func deadline(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > 30*time.Second {
		return 0
	}
	return d
}
