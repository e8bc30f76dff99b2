package mapping_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/adapters"
	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// otelStep is one flattened record and the events it must produce.
type otelStep struct {
	input string
	want  string // a JSON array of pins.Expect
}

// runOtel runs steps against one session of vendor at the given ceiling and
// mode through the real emitter.
func runOtel(t *testing.T, vendor, capture string, mode mapping.Mode, steps ...otelStep) {
	t.Helper()
	p, err := redact.ParsePolicy(capture, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := pins.Case{Vendor: vendor, Name: t.Name(), Policy: p, Mode: mode}
	for i, s := range steps {
		ex, err := pins.ParseExpected(json.RawMessage(s.want))
		if err != nil {
			t.Fatalf("step %d: want: %v", i+1, err)
		}
		c.Steps = append(c.Steps, pins.Step{Input: json.RawMessage(s.input), Expected: ex})
	}
	if diffs := pins.Run(c); len(diffs) > 0 {
		t.Error(strings.Join(diffs, "\n"))
	}
}

// TestOTelMapRejects: a moment without a decoded record (or with another
// transport's) is refused as unreadable, never guessed at.
func TestOTelMapRejects(t *testing.T) {
	for _, v := range []mapping.Vendor{mapping.CodexOtel(), mapping.VSCodeOtel()} {
		for _, m := range []mapping.Moment{
			{Raw: []byte(`{"resource":{},"attributes":{}}`)},
			{Facts: mapping.Facts{Kind: mapping.KindRecord, Record: "not a record"}},
			{Facts: mapping.Facts{Kind: mapping.KindRecord, Record: (*mapping.OTelRecord)(nil)}},
		} {
			if _, err := v.Map(m, &mapping.State{}); !errors.Is(err, mapping.ErrOTelRecord) {
				t.Errorf("%s Map(%+v) err = %v, want ErrOTelRecord", v.Name, m.Facts, err)
			}
			if h, s := v.Identify(m); h != "" || s != "" {
				t.Errorf("%s Identify(%+v) = %q, %q", v.Name, m.Facts, h, s)
			}
		}
	}
}

func TestOTelIdentify(t *testing.T) {
	cases := []struct {
		vendor, in, hook, session string
	}{
		{"codex-otel", `{"resource":{},"attributes":{"event.name":"codex.user_prompt","conversation.id":"c1"}}`, "codex.user_prompt", "c1"},
		{"codex-otel", `{"resource":{"conversation.id":"c2"},"attributes":{},"event_name":"codex.sse_event"}`, "codex.sse_event", "c2"},
		{"vscode-otel", `{"resource":{"session.id":"r1"},"attributes":{"session.id":"a1","event.name":"copilot_chat.agent.turn"}}`, "copilot_chat.agent.turn", "r1"},
		{"vscode-otel", `{"resource":{},"attributes":{"session.id":"a1"}}`, "", "a1"},
		{"vscode-otel", `{"resource":{"session.id":7},"attributes":{"session.id":""}}`, "", ""},
	}
	for _, c := range cases {
		v, _ := mapping.Lookup(c.vendor)
		if h, s := v.Identify(decode(t, v, c.in, false)); h != c.hook || s != c.session {
			t.Errorf("%s Identify(%s) = %q, %q; want %q, %q", c.vendor, c.in, h, s, c.hook, c.session)
		}
	}
}

// FuzzOTelRecords feeds arbitrary lines through the OTLP transport's
// decoder and both tables: no panic, and every error is ErrOTelRecord.
func FuzzOTelRecords(f *testing.F) {
	f.Add([]byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"codex"}}]},"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"codex.tool_result"}}]}]}]}]}`))
	f.Add([]byte(`{"resource":{"session.id":"s"},"attributes":{"event.name":"copilot_chat.tool.call","success":"false","duration_ms":"1e3"}}`))
	f.Add([]byte(`{"resource":{},"attributes":{"event.name":"codex.tool_result","success":7,"duration_ms":[1]}}`))
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"kvlistValue":{"values":[{"key":"k","value":{"bytesValue":"AAE="}}]}}}]}]}]}`))
	f.Add([]byte(`{"resource":null,"attributes":null,"body":1e400}`))
	vs := []mapping.Vendor{mapping.CodexOtel(), mapping.VSCodeOtel()}
	f.Fuzz(func(t *testing.T, in []byte) {
		ms, err := adapters.Decode(mapping.TransportOTLP, in)
		if err != nil && !errors.Is(err, mapping.ErrOTelRecord) {
			t.Fatalf("decode: %v", err)
		}
		for _, m := range ms {
			for _, v := range vs {
				for _, mode := range []mapping.Mode{mapping.Companion, mapping.Primary} {
					m.Mode = mode
					v.Identify(m)
					if _, err := v.Map(m, &mapping.State{}); err != nil {
						t.Fatalf("%s: %v", v.Name, err)
					}
				}
			}
		}
	})
}
