package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/adapters/otlp"
)

// TestOtelPortIsNotTheCollectors: the sidecar's default listen address is
// not OTLP's 4318 (an OpenTelemetry Collector on the same machine keeps
// it); --help and every exporter setting in the README's sidecar section
// name the same port.
func TestOtelPortIsNotTheCollectors(t *testing.T) {
	if strings.HasSuffix(otlp.DefaultListen, ":4318") || strings.HasSuffix(otlp.DefaultGRPCListen, ":4317") {
		t.Fatalf("the sidecar takes the Collector's port: %s %s", otlp.DefaultListen, otlp.DefaultGRPCListen)
	}
	if help := do(t, 0, "otel", "--help"); !strings.Contains(help, `--listen="`+otlp.DefaultListen+`"`) && !strings.Contains(help, "(default: "+otlp.DefaultListen+")") {
		t.Errorf("otel --help does not name %s:\n%s", otlp.DefaultListen, help)
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(b)
	start := strings.Index(sec, "## OTLP sidecar")
	sec = sec[start:]
	sec = sec[:strings.Index(sec[3:], "\n## ")+3]
	for _, m := range regexp.MustCompile(`127\.0\.0\.1:(\d+)`).FindAllStringSubmatch(sec, -1) {
		if m[0] != otlp.DefaultListen && m[0] != otlp.DefaultGRPCListen {
			t.Errorf("the README's sidecar section names %s; the sidecar listens on %s", m[0], otlp.DefaultListen)
		}
	}
}
