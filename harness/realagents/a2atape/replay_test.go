package a2atape

import "testing"

// TestReplayTapes replays every recorded A2A session through the real tee
// or follower and holds the record to what really happened: one run per
// task (and per message-only exchange), one terminal each, the answers as
// answers, rejections and failures as failed runs, a cancel as the only
// cancelled run; the tee relays every byte as the server sent it.
func TestReplayTapes(t *testing.T) { (&Recording{}).Harness().Test(t) }
