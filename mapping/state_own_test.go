package mapping

import (
	"testing"

	"github.com/aep-hook/aep-hook/redact"
)

// TestOwnKeysPassTheTokenRules: the keys read through getOwn are the ones
// Get would look up, so skipping the check on them changes nothing.
func TestOwnKeysPassTheTokenRules(t *testing.T) {
	for _, k := range []string{otelThread, otelStarted, otelHeld, otelCompleted, stateAEPSession} {
		if redact.Name(k) != k {
			t.Errorf("key %q becomes %q under the token rules", k, redact.Name(k))
		}
	}
}
