package pi_test

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/adapters/pi"
	"github.com/aep-hook/aep-hook/harness/streamfuzz"
	"github.com/aep-hook/aep-hook/mapping"
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

// FuzzHeld feeds arbitrary stdin to the held run's table (`aep-hook
// forward pi --hold`): nothing panics, a line that does not decode is
// identified to no session, held only as a tool_call the gate lists, and
// mapped (held live or not) to drafts of AEP event types only.
func FuzzHeld(f *testing.F) {
	f.Add([]byte(`{"session":{"id":"s1"},"event":{"type":"tool_call","toolCallId":"c","toolName":"bash","input":{"command":"rm -f x"}}}`))
	f.Add([]byte(`{"session":{"id":"s1"},"event":{"type":"tool_call","toolCallId":"","toolName":"bash","input":"x"}}`))
	f.Add([]byte(`{"session":{"id":"s1"},"event":{"type":"tool_call","toolName":["bash"],"input":{}}}`))
	f.Add([]byte(`{"event":{"type":"tool_execution_end","toolCallId":"c","isError":true}}`))
	f.Add([]byte(`not json`))
	v, ok := mapping.Lookup("pi")
	if !ok {
		f.Fatal("no pi table")
	}
	h := pi.Held(v)
	f.Fuzz(func(t *testing.T, in []byte) {
		m := mapping.Moment{Raw: in, Nonce: "n1"}
		name, session := h.Identify(m)
		if _, err := pi.Decode(in); err != nil && session != mapping.UnknownSession {
			t.Fatalf("an undecodable line identified to %q", session)
		}
		held := h.Hold(m, mapping.Gate{Tools: []string{"*"}})
		if held != nil && name != "tool_call" {
			t.Fatalf("held a %q", name)
		}
		for _, live := range []bool{false, held != nil} {
			m.Control = live
			ds, _ := h.Map(m, &mapping.State{})
			for _, d := range ds {
				if d.Type == "" {
					t.Fatalf("a draft without a type from %q", in)
				}
			}
			if held != nil {
				if _, err := held.Reply(mapping.Answer{Option: "deny", Text: string(in)}); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
