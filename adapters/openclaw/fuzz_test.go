package openclaw

import (
	"bytes"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// FuzzDecode: any frame decodes or fails without panicking, keeps its
// bytes, and the table takes whatever it gives.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"event","event":"agent","payload":{"runId":"r","sessionKey":"s","stream":"lifecycle","data":{"phase":"end","aborted":true}},"seq":1}`,
		`{"type":"event","event":"agent","payload":{"runId":"r","sessionKey":"s","stream":"usage","data":{"outputTokens":5}}}`,
		`{"type":"event","event":"chat","payload":{"state":"final","message":{"content":[{"type":"text","text":"x"}]}}}`,
		`{"type":"event","event":"session.message","payload":{"message":{"role":"user","content":"x"}}}`,
		`{"type":"event","event":"health","payload":{"ok":false}}`,
		`{"event":"agent","payload":[]}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ms, err := Decode(line)
		if err != nil {
			return
		}
		v := mapping.OpenClaw()
		st := &mapping.State{}
		for _, m := range ms {
			if !bytes.Equal(m.Raw, line) {
				t.Fatal("frame rewritten")
			}
			v.Identify(m)
			m.Deltas = true
			v.Map(m, st)
		}
	})
}
