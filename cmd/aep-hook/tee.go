package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/aep-hook/aep-hook/adapters/acp"
	"github.com/aep-hook/aep-hook/adapters/agui"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// teeEmitter wires the on-disk emitter and error log for a tee. A bad
// capture setting is recorded and falls back to the metadata posture: a
// tee never keeps the agent from running.
func teeEmitter(f CaptureFlags) (*shim.Emitter, *shim.ErrorLog) {
	cfg := f.config(os.Getenv)
	errs := shim.NewErrorLog(cfg.HomeDir())
	p, err := cfg.Policy()
	if err != nil {
		errs.Record(shim.Failure{Stage: "config", Error: err.Error()})
		p = redact.Policy{Default: redact.Metadata}
	}
	return cfg.NewFileEmitter(p), errs
}

// AcpCmd is `aep-hook acp [flags] -- CMD [ARGS...]`: the ACP stdio tee,
// configured as the editor's agent command.
type AcpCmd struct {
	CaptureFlags
	Deltas  bool     `help:"Record agent message and thought chunks (x.acp.*.chunk); pair with --capture redacted for their text." env:"AEP_ACP_DELTAS"`
	Command []string `arg:"" passthrough:"" help:"The ACP agent command and its arguments (after --)." placeholder:"CMD"`
}

// Run spawns the agent behind the tee and exits with its status.
func (c *AcpCmd) Run(s *Streams) error {
	cmd := c.Command
	if len(cmd) > 0 && cmd[0] == "--" {
		cmd = cmd[1:]
	}
	if len(cmd) == 0 {
		return exitError{code: 2, msg: "acp: no agent command; usage: aep-hook acp [flags] -- CMD [ARGS...]"}
	}
	em, errs := teeEmitter(c.CaptureFlags)
	v := mapping.ACP()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	tee := &acp.Tee{
		Command: cmd,
		Stdin:   s.In,
		Stdout:  s.Out,
		Stderr:  s.Err,
		Handle:  em.Handler(v),
		Errors:  errs,
		Deltas:  c.Deltas,
		Signals: sigs,
	}
	res, err := tee.Run(context.Background())
	if err != nil {
		return exitError{code: res.ExitCode, msg: err.Error()}
	}
	if res.Signal != nil {
		// The editor sees the agent's own death: everything is written by
		// now, so the tee dies by the same signal (exiting 128+N only
		// where that cannot be done).
		signal.Stop(sigs)
		acp.Reraise(res.Signal)
	}
	if res.ExitCode != 0 {
		return exitError{code: res.ExitCode}
	}
	return nil
}

// AguiCmd is `aep-hook agui --listen ADDR --upstream URL`: the AG-UI tee,
// a reverse proxy the UI is pointed at instead of the agent.
type AguiCmd struct {
	CaptureFlags
	Listen   string `help:"Address to listen on." default:"127.0.0.1:8788" env:"AEP_AGUI_LISTEN" placeholder:"ADDR"`
	Upstream string `help:"The AG-UI agent's base URL." required:"" env:"AEP_AGUI_UPSTREAM" placeholder:"URL"`
	Deltas   bool   `help:"Record token-delta events (x.agui.*.content, tool-call args)." env:"AEP_AGUI_DELTAS"`
}

// Run serves the proxy until SIGINT or SIGTERM.
func (c *AguiCmd) Run(s *Streams) error {
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitError{code: 2, msg: fmt.Sprintf("agui: --upstream %q is not an http(s) URL", c.Upstream)}
	}
	em, errs := teeEmitter(c.CaptureFlags)
	v := mapping.AGUI()
	p := &agui.Proxy{
		Upstream: u,
		Handle:   em.Handler(v),
		Errors:   errs,
		Deltas:   c.Deltas,
	}
	ctx, stop := untilInterrupted()
	defer stop()
	return serveProxy(ctx, s.Err, "agui", c.Listen, u, p, p.Wait)
}
