package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

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
	if _, err := cfg.TenantAttr(); err != nil {
		errs.Record(shim.Failure{Stage: "config", Error: err.Error()})
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
	// The tee's heap is a few megabytes while the emitter allocates a few
	// kilobytes per observed line: at the default pacing a burst runs a
	// collection every few milliseconds, beside the relays on the same
	// processors. A larger pacing trades some megabytes for fewer of them;
	// a GOGC the user set wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	em, errs := teeEmitter(c.CaptureFlags)
	v := mapping.ACP()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// An editor that closes its pipes while the agent runs must not kill
	// the tee by SIGPIPE (leaving the agent to init): caught (never read,
	// and a caught signal is not inherited by the agent as an ignored one
	// would be), a write to a closed stdout fails with EPIPE instead, and
	// the tee stops the agent in order.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
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
	TeeAuthFlags
}

// Run serves the proxy until SIGINT or SIGTERM.
func (c *AguiCmd) Run(s *Streams) error {
	return serveTee(s, "agui", c.Listen, c.Upstream, c.CaptureFlags, c.TeeAuthFlags, mapping.AGUI(),
		func(u *url.URL, h shim.Handler, errs shim.Recorder) httpTee {
			return &agui.Proxy{Upstream: u, Handle: h, Errors: errs, Deltas: c.Deltas}
		})
}

// TeeAuthFlags are an HTTP tee's guard settings. On loopback a tee needs
// no token by default: whoever can reach it can reach the agent it fronts
// directly, and what it records is what really passed between a client
// and that agent. Off loopback the token is required.
type TeeAuthFlags struct {
	ListenFlags
	Auth string `help:"auto (default: none on loopback, token off it), none (loopback only) or token: clients present the bearer token (from --token-file or $AEP_HOME/token) in Proxy-Authorization: Bearer, or in Authorization: Bearer when the agent takes no credentials of its own; the tee never forwards it." enum:"auto,token,none" default:"auto" env:"AEP_TEE_AUTH"`
}

// httpTee is an HTTP tee's proxy (a2a.Proxy, agui.Proxy).
type httpTee interface {
	http.Handler
	// Wait returns once what was relayed so far is observed.
	Wait()
}

// serveTee runs an HTTP tee verb: upstream must be an http(s) URL; only
// requests addressed to the tee itself pass its guard (so a rebound page
// cannot reach the agent through it: the tee sends the upstream its own
// Host only after checking the client's); the proxy newTee builds (writing through the emitter's handler for v, its
// failures into the error log) is served on listen until SIGINT or
// SIGTERM, then the server shuts down: the exchanges in flight get up to
// 5 s, and within the same bound observed (what was relayed is observed
// before the tee leaves). It prints the address it listens on, so a caller
// that asked for port 0 learns the port.
func serveTee(s *Streams, name, listen, upstream string, f CaptureFlags, af TeeAuthFlags, v mapping.Vendor,
	newTee func(u *url.URL, h shim.Handler, errs shim.Recorder) httpTee) error {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitError{code: 2, msg: fmt.Sprintf("%s: --upstream %q is not an http(s) URL", name, upstream)}
	}
	em, errs := teeEmitter(f)
	l, err := af.guardFor(name, listen, af.Auth, f.config(os.Getenv).HomeDir(), errs)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	l.guard.ProxyAuthorization, l.guard.Strip = true, true
	h := newTee(u, em.Handler(v), errs)
	ctx, stop := untilInterrupted()
	defer stop()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("%s: listen: %v", name, err)}
	}
	srv := &http.Server{Handler: l.guard.Wrap(h), ReadHeaderTimeout: 30 * time.Second}
	fmt.Fprintf(s.Err, "aep-hook %s: proxying http://%s -> %s\n", name, ln.Addr(), redact.Destination(u.String()))
	fmt.Fprintf(s.Err, "aep-hook %s: auth: %s\n", name, l.describe())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return exitError{code: 1, msg: fmt.Sprintf("%s: serve: %v", name, err)}
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		observed := make(chan struct{})
		go func() { h.Wait(); close(observed) }()
		select {
		case <-observed:
		case <-sctx.Done():
		}
	}
	return nil
}
