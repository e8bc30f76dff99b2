package openclawtape

import "testing"

// TestReplayTapes replays every recorded OpenClaw Gateway session through
// the real bridge and holds the record to what really happened: one run
// per turn with one terminal, an abort as the only cancelled run, one AEP
// session per gateway session.
func TestReplayTapes(t *testing.T) { (&Recording{}).Harness().Test(t) }
