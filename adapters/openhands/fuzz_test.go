package openhands_test

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/adapters/openhands"
	"github.com/aep-hook/aep-hook/harness/streamfuzz"
)

// FuzzDecode feeds arbitrary event lines to Decode and what decodes to the
// openhands table: nothing panics, every event is valid JSON with a legal
// type.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"kind":"ConversationStateUpdateEvent","id":"e1","key":"execution_status","value":"running"}` + "\n" +
		`{"kind":"ActionEvent","id":"e2","tool_name":"t","tool_call_id":"c","action":{},"llm_response_id":"r"}` + "\n" +
		`{"kind":"ConversationStateUpdateEvent","id":"e3","key":"full_state","value":{"execution_status":"waiting_for_confirmation"}}` + "\n" +
		`{"kind":"UserRejectObservation","id":"e4","tool_call_id":"c","rejection_source":"hook"}` + "\n" +
		`{"kind":"ConversationStateUpdateEvent","id":"e5","key":"execution_status","value":"deleting"}`))
	f.Add([]byte(`{"conversation_id":"c1","event":{"kind":"__Weird__Event"}}`))
	f.Add([]byte(`{"kind":5}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, l := range bytes.Split(in, []byte("\n")) {
			openhands.Decode(l)
		}
		streamfuzz.Check(t, "openhands", in)
	})
}
