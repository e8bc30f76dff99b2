//go:build !grpc

package otlp

import "errors"

// GRPCAvailable reports whether this build serves OTLP/gRPC (build tag
// "grpc", `make build-grpc`).
const GRPCAvailable = false

// ErrNoGRPC is returned when OTLP/gRPC is asked of the default build.
var ErrNoGRPC = errors.New("otlp: this aep-hook was built without OTLP/gRPC; rebuild with -tags grpc (make build-grpc) or use OTLP/HTTP")

func (r *Receiver) newGRPCServer() (grpcServer, error) { return nil, ErrNoGRPC }
