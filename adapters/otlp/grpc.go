//go:build grpc

package otlp

import (
	"context"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // accept gzip-compressed exports
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPCAvailable reports whether this build serves OTLP/gRPC (build tag
// "grpc", `make build-grpc`).
const GRPCAvailable = true

// ErrNoGRPC is never returned by the grpc-tagged build.
var ErrNoGRPC error

// newGRPCServer builds the gRPC server with the OTLP logs service and the
// trace and metric services (accepted, counted, ignored). Messages are
// bounded by MaxRequestBytes after decompression.
func (r *Receiver) newGRPCServer() (grpcServer, error) {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(r.cfg.MaxRequestBytes)),
		grpc.MaxConcurrentStreams(uint32(r.cfg.MaxConcurrent)),
	}
	if g := r.cfg.Guard; g != nil && g.Auth != nil {
		opts = append(opts, grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			tok := ""
			if md, ok := metadata.FromIncomingContext(ctx); ok {
				for _, v := range md.Get("authorization") {
					if scheme, rest, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "bearer") {
						tok = strings.TrimSpace(rest)
					}
				}
			}
			ctx, ok := g.Auth(ctx, tok)
			if !ok {
				return nil, status.Error(codes.Unauthenticated, "missing or invalid bearer token")
			}
			return h(ctx, req)
		}))
	}
	s := grpc.NewServer(opts...)
	plogotlp.RegisterGRPCServer(s, &logsService{r: r})
	ptraceotlp.RegisterGRPCServer(s, &tracesService{r: r})
	pmetricotlp.RegisterGRPCServer(s, &metricsService{r: r})
	return s, nil
}

type logsService struct {
	plogotlp.UnimplementedGRPCServer
	r *Receiver
}

// Export implements plogotlp.GRPCServer.
func (s *logsService) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	resp := plogotlp.NewExportResponse()
	if !s.r.acquire() {
		return resp, status.Error(codes.Unavailable, "receiver busy: too many concurrent requests")
	}
	defer s.r.release()
	rejected, err := s.r.ConsumeLogs(req.Logs())
	if err != nil {
		return resp, status.Error(codes.Unavailable, "could not record the events; retry")
	}
	if rejected > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedLogRecords(rejected)
		ps.SetErrorMessage("unreadable log records")
	}
	return resp, nil
}

type tracesService struct {
	ptraceotlp.UnimplementedGRPCServer
	r *Receiver
}

// Export implements ptraceotlp.GRPCServer: counted and ignored.
func (s *tracesService) Export(context.Context, ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.r.stats.ignoredTraces.Add(1)
	return ptraceotlp.NewExportResponse(), nil
}

type metricsService struct {
	pmetricotlp.UnimplementedGRPCServer
	r *Receiver
}

// Export implements pmetricotlp.GRPCServer: counted and ignored.
func (s *metricsService) Export(context.Context, pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.r.stats.ignoredMetrics.Add(1)
	return pmetricotlp.NewExportResponse(), nil
}
