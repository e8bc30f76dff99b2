package otlp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aep-hook/aep-hook/shim"
)

// grpcServer is what grpc.go builds: a gRPC server carrying the OTLP
// services.
type grpcServer interface {
	Serve(net.Listener) error
	GracefulStop()
	Stop()
}

// Run serves OTLP/HTTP on httpLn and, in the grpc-tagged build, OTLP/gRPC on
// grpcLn (either may be nil) until ctx is done, then shuts down gracefully:
// in-flight requests finish (bounded by ShutdownTimeout) and the emitter's
// sinks are flushed. It returns the first serving error, if any.
func (r *Receiver) Run(ctx context.Context, httpLn, grpcLn net.Listener) error {
	if httpLn == nil && grpcLn == nil {
		return errors.New("otlp: nothing to serve: no HTTP or gRPC listener")
	}
	errc := make(chan error, 2)
	var hs *http.Server
	if httpLn != nil {
		h := r.Handler()
		if r.cfg.Guard != nil {
			h = r.cfg.Guard.Wrap(h)
		}
		hs = &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
		}
		go func() {
			if err := hs.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("otlp http: %w", err)
			}
		}()
	}
	var gs grpcServer
	if grpcLn != nil {
		var err error
		if gs, err = r.newGRPCServer(); err != nil {
			if hs != nil {
				hs.Close()
			}
			return err
		}
		go func() {
			if err := gs.Serve(grpcLn); err != nil {
				errc <- fmt.Errorf("otlp grpc: %w", err)
			}
		}()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), r.cfg.ShutdownTimeout)
	defer cancel()
	if hs != nil {
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
	}
	if gs != nil {
		done := make(chan struct{})
		go func() { gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-sctx.Done():
			gs.Stop()
		}
	}
	if err := flush(r.em.Sink); err != nil && serveErr == nil {
		serveErr = fmt.Errorf("otlp: flush sinks: %w", err)
	}
	return serveErr
}

// flush flushes (or, failing that, closes) every sink that buffers. The
// JSONL log writes through and needs neither.
func flush(s shim.Sink) error {
	var errs []error
	switch x := s.(type) {
	case shim.Sinks:
		for _, e := range x {
			errs = append(errs, flush(e))
		}
	case interface{ Flush() error }:
		errs = append(errs, x.Flush())
	case interface{ Close() error }:
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}
