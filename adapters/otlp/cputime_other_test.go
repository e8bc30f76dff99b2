//go:build !unix

package otlp

import (
	"testing"
	"time"
)

var start = time.Now()

// cpuTime falls back to wall time where getrusage is missing.
func cpuTime(*testing.B) time.Duration { return time.Since(start) }
