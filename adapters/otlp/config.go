package otlp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
)

// Defaults for a Config's zero fields.
const (
	DefaultListen          = "127.0.0.1:4318"
	DefaultGRPCListen      = "127.0.0.1:4317"
	DefaultMaxRequestBytes = 4 << 20
	DefaultMaxConcurrent   = 32
	DefaultDedupeWindow    = 1 << 16
	DefaultShutdownTimeout = 10 * time.Second
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
	// MaxConcurrent bounds requests handled at once; others get 503 (HTTP)
	// or Unavailable (gRPC), both retryable for OTLP exporters.
	MaxConcurrent int
	// DedupeWindow is how many recent record identities are remembered to
	// drop exporter retries.
	DedupeWindow int
	// ShutdownTimeout bounds the graceful drain of in-flight requests.
	ShutdownTimeout time.Duration
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
	return c, nil
}
