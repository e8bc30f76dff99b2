// Package otlp is the OTLP sidecar receiver: it takes the OpenTelemetry log
// records coding agents export (Codex's [otel] config, the VS Code agent's
// github.copilot.chat.otel.* settings) and emits them as AEP events through
// the shim emitter.
//
// It is shaped like the OpenTelemetry Collector's receiver/otlpreceiver:
// config.go holds the settings, otlphttp.go the OTLP/HTTP handlers (/v1/logs
// with protobuf or JSON bodies, gzip or not; /v1/traces and /v1/metrics
// accepted and counted but ignored; /healthz), encoder.go the hand-written
// response bodies, grpc.go the OTLP/gRPC services, and receiver.go what both
// transports share: one pdata LogRecord at a time is flattened
// (mapping.OTelRecord), its vendor picked per resource, deduplicated against
// exporter retries and handed to the emitter as one moment.
//
// OTLP/gRPC is built only with the "grpc" build tag (make build-grpc): the
// gRPC stack (pulled in by pdata's plogotlp) initialises in every process of
// the one binary, hooks included, and costs each start about 1.5-2 ms. The
// default build decodes OTLP/HTTP with plog's ProtoUnmarshaler and
// JSONUnmarshaler alone.
//
// Ordering: records of one request are emitted in request order; records of
// one session from concurrent requests keep one (epoch, seq) sequence
// because every emission runs under the shim store's per-session lock.
package otlp
