package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aep-hook/aep-hook/adapters/a2a"
	"github.com/aep-hook/aep-hook/mapping"
)

// A2aCmd is `aep-hook a2a --listen ADDR --upstream URL`: the A2A tee, a
// reverse proxy the A2A client is pointed at instead of the server.
type A2aCmd struct {
	CaptureFlags
	Listen   string `help:"Address to listen on." default:"127.0.0.1:8789" env:"AEP_A2A_LISTEN" placeholder:"ADDR"`
	Upstream string `help:"The A2A server's base URL (the agent card's host)." required:"" env:"AEP_A2A_UPSTREAM" placeholder:"URL"`
	Deltas   bool   `help:"Record appended artifact chunks (x.a2a.artifact.delta); pair with --capture redacted for their text." env:"AEP_A2A_DELTAS"`
}

// Run serves the proxy until SIGINT or SIGTERM.
func (c *A2aCmd) Run(s *Streams) error {
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitError{code: 2, msg: fmt.Sprintf("a2a: --upstream %q is not an http(s) URL", c.Upstream)}
	}
	em, errs := teeEmitter(c.CaptureFlags)
	p := &a2a.Proxy{Upstream: u, Handle: em.Handler(mapping.A2A()), Errors: errs, Deltas: c.Deltas}
	ctx, stop := untilInterrupted()
	defer stop()
	return serveProxy(ctx, s.Err, "a2a", c.Listen, u, p, p.Wait)
}

// serveProxy serves a tee's handler on listen until ctx ends, then shuts
// the server down: the exchanges in flight get up to 5 s, and within the
// same bound observed (wait: what was relayed is observed before the tee
// leaves). It prints the address it listens on, so a caller that asked
// for port 0 learns the port.
func serveProxy(ctx context.Context, stderr io.Writer, name, listen string, upstream *url.URL, h http.Handler, wait func()) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("%s: listen: %v", name, err)}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	fmt.Fprintf(stderr, "aep-hook %s: proxying http://%s -> %s\n", name, ln.Addr(), upstream.Redacted())
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
		go func() { wait(); close(observed) }()
		select {
		case <-observed:
		case <-sctx.Done():
		}
	}
	return nil
}
