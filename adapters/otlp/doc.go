// Package otlp is the OTLP sidecar receiver: it takes the OpenTelemetry log
// records coding agents export (Codex's [otel] config, the VS Code agent's
// github.copilot.chat.otel.* settings) and emits them as AEP events through
// the shim emitter.
//
// It is shaped like the OpenTelemetry Collector's receiver/otlpreceiver:
// config.go holds the settings, otlphttp.go the OTLP/HTTP handlers (/v1/logs
// with protobuf or JSON bodies, gzip or not; /v1/traces and /v1/metrics
// accepted and counted but ignored; /healthz), encoder.go the hand-written
// response bodies, grpc.go the OTLP/gRPC services, records.go the decoding
// of pdata into the tables' records, wire.go the fast path that reads an
// OTLP/HTTP protobuf body straight into the same records (anything it does
// not cover goes through pdata), and receiver.go what both transports
// share: each resource's LogRecords are decoded straight into
// mapping.OTelRecord values (no JSON on the way) and handed over as moments
// (Facts.Kind record, Facts.Record the decoded record), the table picked
// per resource by the registry's Detect rules, deduplicated against
// exporter retries and emitted as one batch.
//
// Adding an OTLP vendor touches its table file in mapping/ (Transport
// TransportOTLP, its Detect rule, its profile) and one line in
// mapping.Vendors(); the receiver, `--vendor` and the map verb find it
// there. Decode is the transport's JSON form for `aep-hook map` and the
// pins: an OTLP/JSON export request, or one flattened record.
//
// OTLP/gRPC is built only with the "grpc" build tag (make build-grpc): the
// gRPC stack (pulled in by pdata's plogotlp) initialises in every process of
// the one binary, hooks included, and costs each start about 1.5-2 ms. The
// default build decodes OTLP/HTTP with the fast path, plog's
// ProtoUnmarshaler and JSONUnmarshaler alone.
//
// Ordering: records of one request are emitted in request order; records of
// one session from concurrent requests keep one (epoch, seq) sequence
// because every emission runs under the shim store's per-session lock.
package otlp
