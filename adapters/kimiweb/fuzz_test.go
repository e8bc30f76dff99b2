package kimiweb_test

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/adapters/kimiweb"
	"github.com/aep-hook/aep-hook/harness/streamfuzz"
)

// FuzzDecode feeds arbitrary frames to Decode and what decodes to the
// kimi-web table in both modes: nothing panics, every event is valid JSON
// with a legal type, and a decoded frame names its type.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"turn.started","seq":1,"session_id":"s","payload":{"turnId":0,"origin":{"kind":"user"}}}` + "\n" +
		`{"type":"tool.call.started","seq":2,"session_id":"s","payload":{"toolCallId":"c","name":"Bash","args":{}}}` + "\n" +
		`{"type":"event.approval.requested","seq":3,"session_id":"s","payload":{"approval_id":"a","tool_call_id":"c"}}` + "\n" +
		`{"type":"event.approval.resolved","seq":4,"session_id":"s","payload":{"approval_id":"a","decision":"rejected"}}` + "\n" +
		`{"type":"turn.ended","seq":5,"session_id":"s","payload":{"turnId":0,"reason":"failed"}}`))
	f.Add([]byte(`{"type":"assistant.delta","volatile":true,"payload":{"delta":"x"}}`))
	f.Add([]byte(`{"type":"..x..Y","seq":1.5,"session_id":7}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, l := range bytes.Split(in, []byte("\n")) {
			ms, err := kimiweb.Decode(l)
			if err == nil && (len(ms) != 1 || ms[0].Facts.Name == "") {
				t.Fatalf("decoded %q to %d moments without a name", l, len(ms))
			}
		}
		streamfuzz.Check(t, "kimi-web", in)
	})
}
