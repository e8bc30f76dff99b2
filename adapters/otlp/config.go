package otlp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/mapping"
)

// Defaults for a Config's zero fields. The listen addresses are not the
// OTLP defaults (4318, 4317): those belong to an OpenTelemetry Collector,
// which may run on the same machine (and receive what aep-hook ships).
const (
	DefaultListen          = "127.0.0.1:14318"
	DefaultGRPCListen      = "127.0.0.1:14317"
	DefaultMaxRequestBytes = 4 << 20
	DefaultMaxConcurrent   = 32
	DefaultDedupeWindow    = 1 << 16
	DefaultShutdownTimeout = 10 * time.Second
	DefaultMaxSessions     = 64
	DefaultBodyTimeout     = 10 * time.Second
)

// VendorAuto is Config.Vendor's default: the table is chosen per resource
// by the registry's Detect rules. Any other value is the AEP agent of one
// OTLP table (VendorNames).
const VendorAuto = "auto"

// Config is the receiver's settings.
type Config struct {
	// Listen is the OTLP/HTTP address; "" disables HTTP.
	Listen string
	// GRPC is the OTLP/gRPC address; "" disables gRPC. Only the grpc-tagged
	// build serves it.
	GRPC string
	// Vendor is the profile: auto (per resource) or the agent of one OTLP
	// table (codex, vscode; see VendorNames).
	Vendor string
	// Mode is the channel posture: companion (default) or primary.
	Mode mapping.Mode
	// MaxRequestBytes bounds a request body after decompression.
	MaxRequestBytes int64
	// MaxConcurrent bounds requests decoded and emitted at once; others get
	// 503 (HTTP) or Unavailable (gRPC), both retryable for OTLP exporters.
	// An HTTP request takes its slot only once its body is in, so uploads
	// in progress (however slow) never hold one.
	MaxConcurrent int
	// MaxBuffered bounds the request body bytes held at once while they
	// arrive, across all requests; a body that would pass it gets 503.
	// Zero means 8×MaxRequestBytes.
	MaxBuffered int64
	// BodyTimeout bounds the reading of one request body: an upload slower
	// than that is cut (503, for the exporter to retry), freeing what it
	// held.
	BodyTimeout time.Duration
	// MaxSessions bounds the sessions one request may write to; records of
	// further sessions are refused (counted as rejected), so one request
	// cannot create thousands of session logs.
	MaxSessions int
	// DedupeWindow is how many recent record identities are remembered to
	// drop exporter retries.
	DedupeWindow int
	// ShutdownTimeout bounds the graceful drain of in-flight requests.
	ShutdownTimeout time.Duration
	// Guard, when set, stands in front of both transports: OTLP/HTTP
	// requests pass its Host, Origin and token checks, OTLP/gRPC calls
	// its token check (the "authorization" metadata; browsers cannot
	// speak gRPC, so Host and Origin do not apply).
	Guard *guard.Guard
}

// withDefaults returns c with zero fields defaulted, or an error for a bad
// vendor or mode.
func (c Config) withDefaults() (Config, error) {
	if c.Vendor == "" {
		c.Vendor = VendorAuto
	}
	if names := VendorNames(); !slices.Contains(names, c.Vendor) {
		return c, fmt.Errorf("otlp: vendor %q: want %s", c.Vendor, strings.Join(names, ", "))
	}
	switch c.Mode {
	case "":
		c.Mode = mapping.Companion
	case mapping.Companion, mapping.Primary:
	default:
		return c, fmt.Errorf("otlp: mode %q: want companion or primary", c.Mode)
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.DedupeWindow <= 0 {
		c.DedupeWindow = DefaultDedupeWindow
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.MaxBuffered <= 0 {
		c.MaxBuffered = 8 * c.MaxRequestBytes
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	return c, nil
}
