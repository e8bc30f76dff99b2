package main

import (
	"net/url"

	"github.com/aep-hook/aep-hook/adapters/a2a"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// A2aCmd is `aep-hook a2a --listen ADDR --upstream URL`: the A2A tee, a
// reverse proxy the A2A client is pointed at instead of the server.
type A2aCmd struct {
	CaptureFlags
	Listen   string `help:"Address to listen on." default:"127.0.0.1:8789" env:"AEP_A2A_LISTEN" placeholder:"ADDR"`
	Upstream string `help:"The A2A server's base URL (the agent card's host)." required:"" env:"AEP_A2A_UPSTREAM" placeholder:"URL"`
	Deltas   bool   `help:"Record appended artifact chunks (x.a2a.artifact.delta); pair with --capture redacted for their text." env:"AEP_A2A_DELTAS"`
	TeeAuthFlags
}

// Run serves the proxy until SIGINT or SIGTERM.
func (c *A2aCmd) Run(s *Streams) error {
	return serveTee(s, "a2a", c.Listen, c.Upstream, c.CaptureFlags, c.TeeAuthFlags, mapping.A2A(),
		func(u *url.URL, h shim.Handler, errs shim.Recorder) httpTee {
			return &a2a.Proxy{Upstream: u, Handle: h, Errors: errs, Deltas: c.Deltas}
		})
}
