package opencode

import (
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// FuzzDecodeMap feeds arbitrary plugin lines and stream event data through
// Decode and every bus table in both modes: nothing panics, whatever the
// shape.
func FuzzDecodeMap(f *testing.F) {
	for _, s := range []string{
		`{"kind":"bus","event":{"type":"message.part.updated","properties":{"sessionID":"s","part":{"type":"tool","callID":"c","tool":"bash","state":{"status":"error","error":"x"}}}}}`,
		`{"kind":"tool.after","input":{"tool":"bash","sessionID":"s","callID":"c"},"output":{"output":"ok"}}`,
		`{"kind":"permission.ask","permission":{"id":"p","type":"bash","sessionID":"s"}}`,
		`{"payload":{"type":"todo.updated","properties":{"sessionID":"s","todos":[{"content":"a","status":"completed"}]}}}`,
		`{"type":"question.asked","properties":{"id":"q","sessionID":"s","questions":[{"question":"?","header":"h","options":[{"label":"a"}]}]}}`,
		`{"kind":"record","name":"message","session":"s","record":{"id":"msg_1","role":"user"}}`,
		`{"kind":"end","session":"s"}`,
	} {
		f.Add(s)
	}
	tables := []string{"opencode", "opencode-sse", "kilocode", "kilocode-sse"}
	f.Fuzz(func(t *testing.T, line string) {
		ms, err := Decode([]byte(line))
		if err != nil {
			return
		}
		for _, name := range tables {
			v, _ := mapping.Lookup(name)
			for _, mode := range []mapping.Mode{mapping.Primary, mapping.Companion} {
				var st mapping.State
				for _, m := range ms {
					m.Mode, m.Nonce = mode, "n"
					v.Identify(m)
					if _, err := v.Map(m, &st); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					v.Map(m, &st) // the same moment again: idempotent, never a panic
				}
			}
		}
	})
}
