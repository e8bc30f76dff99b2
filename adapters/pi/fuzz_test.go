package pi_test

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/adapters/pi"
	"github.com/aep-hook/aep-hook/harness/streamfuzz"
)

// FuzzDecode feeds arbitrary forwarder lines to Decode and what decodes to
// the pi table: nothing panics, every event is valid JSON with a legal type,
// and a decoded moment names its event's type.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"session":{"id":"s1"},"event":{"type":"agent_start"}}` + "\n" +
		`{"session":{"id":"s1"},"event":{"type":"tool_execution_end","toolCallId":"c","toolName":"bash","isError":true,"result":{"content":[{"type":"text","text":"x"}]}}}` + "\n" +
		`{"session":{"id":"s1"},"event":{"type":"agent_end","messages":[{"role":"assistant","stopReason":"aborted"}]}}`))
	f.Add([]byte(`{"session":{"id":5},"event":{"type":"turn_start","turnIndex":1e400}}`))
	f.Add([]byte(`{"event":{"type":"message_end","message":{"role":"assistant","content":"x","usage":{"input":-1}}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, l := range bytes.Split(in, []byte("\n")) {
			ms, err := pi.Decode(l)
			if err == nil && (len(ms) != 1 || ms[0].Facts.Name == "") {
				t.Fatalf("decoded %q to %d moments without a name", l, len(ms))
			}
		}
		streamfuzz.Check(t, "pi", in)
	})
}
