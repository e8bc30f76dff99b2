package main

import (
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/aep-hook/aep-hook/adapters/otlp"
	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// OtelCmd is `aep-hook otel`: the OTLP sidecar that receives Codex and VS
// Code agent log exports and records them as AEP events.
type OtelCmd struct {
	CaptureFlags
	Listen        string `help:"OTLP/HTTP listen address (/v1/logs, /healthz); empty disables HTTP. Not 4318, the OpenTelemetry Collector's own." default:"${otel_listen}" env:"AEP_OTEL_LISTEN"`
	GRPC          string `name:"grpc" help:"OTLP/gRPC listen address, e.g. ${otel_grpc} (only in the grpc build: make build-grpc)." env:"AEP_OTEL_GRPC" placeholder:"ADDR"`
	Vendor        string `help:"Vendor profile, one of ${otel_vendors}: auto picks per resource, any other names the agent." enum:"${otel_vendors}" default:"auto"`
	Mode          string `help:"companion (only x.<vendor>.otel.* events; a hook adapter owns the core types) or primary (also the pinned core types)." enum:"companion,primary" default:"companion"`
	MaxBody       int64  `help:"Largest request body accepted, in bytes after decompression." default:"4194304"`
	MaxConcurrent int    `help:"Requests handled at once; more get a retryable 503." default:"32"`
	ListenFlags
	Auth string `help:"token (exporters present the bearer token: Authorization: Bearer, from --token-file or $AEP_HOME/token) or none (loopback only: then any local user can write into your record)." enum:"token,none" default:"token" env:"AEP_OTEL_AUTH"`
}

// guard builds the sidecar's listener guard: the token's posture is
// decided by the widest of its listeners (one off loopback needs it).
// GET /healthz needs no token (Host and Origin are still checked): the
// counters are no secret, and a service manager's probe has no token.
func (c *OtelCmd) guard(home string, errs shim.Recorder) (listener, error) {
	addr := c.Listen
	if addr == "" || (c.GRPC != "" && guard.Loopback(addr) && !guard.Loopback(c.GRPC)) {
		addr = c.GRPC
	}
	l, err := c.guardFor("otel", addr, c.Auth, home, errs)
	if err != nil {
		return l, err
	}
	l.guard.Public = func(r *http.Request) bool {
		return r.URL.Path == otlp.PathHealth && (r.Method == http.MethodGet || r.Method == http.MethodHead)
	}
	return l, nil
}

// Run serves until SIGINT or SIGTERM, then drains in-flight requests.
func (c *OtelCmd) Run(s *Streams) error {
	if c.GRPC != "" && !otlp.GRPCAvailable {
		return exitError{code: 2, msg: otlp.ErrNoGRPC.Error()}
	}
	if c.Listen == "" && c.GRPC == "" {
		return exitError{code: 2, msg: "nothing to serve: give --listen and/or --grpc"}
	}
	cfg := c.config(os.Getenv)
	p, err := cfg.Policy()
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if _, err := cfg.TenantAttr(); err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	errs := shim.NewErrorLog(cfg.HomeDir())
	l, err := c.guard(cfg.HomeDir(), errs)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	em := cfg.NewFileEmitter(p)
	// A record's events get ids derived from the record, so an exporter's
	// retry of a batch after a restart of the sidecar repeats the ids.
	em.StableIDs = true
	rcv, err := otlp.New(otlp.Config{
		Vendor: c.Vendor, Mode: mapping.Mode(c.Mode),
		MaxRequestBytes: c.MaxBody, MaxConcurrent: c.MaxConcurrent,
		Guard: l.guard,
	}, em, errs)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	var httpLn, grpcLn net.Listener
	if c.Listen != "" {
		if httpLn, err = net.Listen("tcp", c.Listen); err != nil {
			return exitError{code: 1, msg: fmt.Sprintf("otel: listen %s: %v", c.Listen, err)}
		}
		fmt.Fprintf(s.Err, "aep-hook otel: OTLP/HTTP on http://%s/v1/logs (vendor %s, %s mode, logs in %s)\n", httpLn.Addr(), c.Vendor, c.Mode, cfg.LogRoot())
	}
	if c.GRPC != "" {
		if grpcLn, err = net.Listen("tcp", c.GRPC); err != nil {
			if httpLn != nil {
				httpLn.Close()
			}
			return exitError{code: 1, msg: fmt.Sprintf("otel: listen %s: %v", c.GRPC, err)}
		}
		fmt.Fprintf(s.Err, "aep-hook otel: OTLP/gRPC on %s\n", grpcLn.Addr())
	}
	fmt.Fprintf(s.Err, "aep-hook otel: auth: %s\n", l.describe())
	ctx, stop := untilInterrupted()
	defer stop()
	if err := rcv.Run(ctx, httpLn, grpcLn); err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	st := rcv.Stats()
	fmt.Fprintf(s.Err, "aep-hook otel: stopped; %d records recorded, %d duplicates dropped\n", st.Records, st.Duplicates)
	return nil
}
