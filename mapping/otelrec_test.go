package mapping_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/internal/pins"
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

// exportJSON is an OTLP/JSON ExportLogsServiceRequest with a Codex and a
// VS Code resource (three records), as exporters send it.
const exportJSON = `{"resourceLogs":[
 {"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"codex-app-server"}},{"key":"host.name","value":{"stringValue":"dev-host-1"}}]},
  "scopeLogs":[{"scope":{"name":"codex_otel"},"logRecords":[
   {"timeUnixNano":"1752200000000000000","attributes":[{"key":"event.name","value":{"stringValue":"codex.conversation_starts"}},{"key":"conversation.id","value":{"stringValue":"conv_1"}},{"key":"model","value":{"stringValue":"gpt-5.2-codex"}}]},
   {"timeUnixNano":"1752200000000000001","attributes":[{"key":"event.name","value":{"stringValue":"codex.tool_result"}},{"key":"conversation.id","value":{"stringValue":"conv_1"}},{"key":"tool_name","value":{"stringValue":"shell"}},{"key":"success","value":{"stringValue":"true"}},{"key":"duration_ms","value":{"stringValue":"412"}}]}]}]},
 {"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"copilot-chat"}},{"key":"session.id","value":{"stringValue":"vsc_1"}}]},
  "scopeLogs":[{"logRecords":[
   {"eventName":"copilot_chat.tool.call","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"readFile"}},{"key":"duration_ms","value":{"intValue":"63"}},{"key":"success","value":{"boolValue":true}}]}]}]}]}`

func TestSplitOTLPJSON(t *testing.T) {
	recs := mapping.SplitOTLPJSON([]byte(exportJSON))
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3", len(recs))
	}
	var r mapping.OTelRecord
	if err := json.Unmarshal(recs[2], &r); err != nil {
		t.Fatal(err)
	}
	if r.Resource["session.id"] != "vsc_1" || r.EventName != "copilot_chat.tool.call" || r.Attributes["duration_ms"] != float64(63) {
		t.Errorf("record 3 = %s", recs[2])
	}
	if !strings.Contains(string(recs[1]), `"time_unix_nano":1752200000000000001`) || !strings.Contains(string(recs[0]), `"scope":{"name":"codex_otel"}`) {
		t.Errorf("times or scope lost: %s / %s", recs[0], recs[1])
	}
	// A flattened record and an undecodable request pass through as one.
	for _, in := range []string{`{"resource":{},"attributes":{}}`, `{"resourceLogs":7}`, `not json`} {
		if got := mapping.SplitOTLPJSON([]byte(in)); len(got) != 1 || string(got[0]) != in {
			t.Errorf("SplitOTLPJSON(%s) = %q", in, got)
		}
	}
}

func TestOTelSplitThenMap(t *testing.T) {
	// The map verb's path: Split, then each record through its vendor.
	recs := mapping.SplitOTLPJSON([]byte(exportJSON))
	runOtel(t, "codex-otel", "", mapping.Primary,
		otelStep{string(recs[0]), `[{"type":"session.started","data":{"client":{"name":"codex"},"gen_ai.request.model":"gpt-5.2-codex"}}]`},
		otelStep{string(recs[1]), `[{"type":"tool.completed","subject":"shell","data":{"tool":{"name":"shell"},"duration_ms":412}}]`})
	runOtel(t, "vscode-otel", "", mapping.Companion,
		otelStep{string(recs[2]), `[{"type":"x.vscode.otel.tool.call","data":{"gen_ai.tool.name":"readFile","duration_ms":63,"success":true}}]`})
}

func TestOTelMapRejects(t *testing.T) {
	for _, v := range []mapping.Vendor{mapping.CodexOtel(), mapping.VSCodeOtel()} {
		for _, in := range []string{exportJSON, `[1,2]`, `{"attributes":`} {
			_, err := v.Map(mapping.Moment{Raw: []byte(in)}, &mapping.State{})
			if !errors.Is(err, mapping.ErrOTelRecord) {
				t.Errorf("%s Map(%.20s) err = %v, want ErrOTelRecord", v.Name, in, err)
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
		{"vscode-otel", `garbage`, "", ""},
	}
	for _, c := range cases {
		v, _ := mapping.Lookup(c.vendor)
		if h, s := v.Identify(mapping.Moment{Raw: []byte(c.in)}); h != c.hook || s != c.session {
			t.Errorf("%s Identify(%s) = %q, %q; want %q, %q", c.vendor, c.in, h, s, c.hook, c.session)
		}
	}
}

// FuzzOTelRecords feeds arbitrary lines through Split and both tables: no
// panic, and every error is ErrOTelRecord.
func FuzzOTelRecords(f *testing.F) {
	f.Add([]byte(exportJSON))
	f.Add([]byte(`{"resource":{"session.id":"s"},"attributes":{"event.name":"copilot_chat.tool.call","success":"false","duration_ms":"1e3"}}`))
	f.Add([]byte(`{"resource":{},"attributes":{"event.name":"codex.tool_result","success":7,"duration_ms":[1]}}`))
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"kvlistValue":{"values":[{"key":"k","value":{"bytesValue":"AAE="}}]}}}]}]}]}`))
	f.Add([]byte(`{"resource":null,"attributes":null,"body":1e400}`))
	vs := []mapping.Vendor{mapping.CodexOtel(), mapping.VSCodeOtel()}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, raw := range mapping.SplitOTLPJSON(in) {
			for _, v := range vs {
				for _, mode := range []mapping.Mode{mapping.Companion, mapping.Primary} {
					v.Identify(mapping.Moment{Raw: raw})
					if _, err := v.Map(mapping.Moment{Raw: raw, Mode: mode}, &mapping.State{}); err != nil && !errors.Is(err, mapping.ErrOTelRecord) {
						t.Fatalf("%s: %v", v.Name, err)
					}
				}
			}
		}
	})
}

// TestOTelRecordFromPdata checks the flattening of every AnyValue kind.
func TestOTelRecordFromPdata(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "codex-app-server")
	sl := rl.ScopeLogs().AppendEmpty()
	lr := sl.LogRecords().AppendEmpty()
	a := lr.Attributes()
	a.PutStr("s", "x")
	a.PutInt("i", 1<<60)
	a.PutDouble("d", 1.5)
	a.PutBool("b", false)
	a.PutEmptySlice("l").AppendEmpty().SetStr("e")
	a.PutEmptyMap("m").PutInt("k", 2)
	a.PutEmptyBytes("y").FromRaw([]byte{0, 1})
	lr.Body().SetStr("hello")
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	got := string(mapping.OTelRecords(ld)[0])
	want := `{"resource":{"service.name":"codex-app-server"},"attributes":{"b":false,"d":1.5,"i":1152921504606846976,"l":["e"],"m":{"k":2},"s":"x","y":"AAE="},"body":"hello","severity_text":"WARN","severity_number":13}`
	if got != want {
		t.Errorf("flattened\n got %s\nwant %s", got, want)
	}
}
