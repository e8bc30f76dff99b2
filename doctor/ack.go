package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A failure counts as a problem for a day after it was recorded, unless it
// was acknowledged: `aep-hook doctor --ack` records the time up to which
// the failures are known and dealt with, and doctor counts only those
// recorded after it (it still shows them all).

// AckPath is where the acknowledgement is kept, in the home.
func AckPath(home string) string { return filepath.Join(home, "internal", "doctor-ack") }

// Ack records that the failures up to t are dealt with.
func Ack(home string, t time.Time) error {
	p := AckPath(home)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("acknowledge: %w", err)
	}
	if err := os.WriteFile(p, []byte(t.UTC().Format(time.RFC3339Nano)+"\n"), 0o600); err != nil {
		return fmt.Errorf("acknowledge: %w", err)
	}
	return nil
}

// Acked returns the time failures were last acknowledged up to (zero when
// never).
func Acked(home string) time.Time {
	b, err := os.ReadFile(AckPath(home))
	if err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}
	}
	return t
}
