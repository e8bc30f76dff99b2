package otlp

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/mapping"
)

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

func recordOf(t *testing.T, m mapping.Moment) *mapping.OTelRecord {
	t.Helper()
	r, ok := m.Facts.Record.(*mapping.OTelRecord)
	if !ok || m.Facts.Kind != mapping.KindRecord {
		t.Fatalf("moment facts %+v carry no record", m.Facts)
	}
	return r
}

func TestDecodeExportRequest(t *testing.T) {
	ms, err := Decode([]byte(exportJSON))
	if err != nil || len(ms) != 3 {
		t.Fatalf("got %d moments, %v; want 3", len(ms), err)
	}
	r0, r1, r2 := recordOf(t, ms[0]), recordOf(t, ms[1]), recordOf(t, ms[2])
	if r2.Resource["session.id"] != "vsc_1" || r2.EventName != "copilot_chat.tool.call" || r2.Attr("duration_ms") != int64(63) {
		t.Errorf("record 3 = %+v", r2)
	}
	if r1.Time != 1752200000000000001 || r0.Scope["name"] != "codex_otel" {
		t.Errorf("times or scope lost: %+v / %+v", r0, r1)
	}
	if &r0.Resource == nil || r0.Resource["host.name"] != r1.Resource["host.name"] {
		t.Errorf("resource not shared by its records")
	}
}

func TestDecodeFlattened(t *testing.T) {
	ms, err := Decode([]byte(`{"resource":{"k":1},"attributes":{"big":1152921504606846976,"f":1.5},"event_name":"x"}`))
	if err != nil || len(ms) != 1 {
		t.Fatalf("got %d moments, %v", len(ms), err)
	}
	r := recordOf(t, ms[0])
	if r.Attributes["big"] != int64(1<<60) || r.Attributes["f"] != 1.5 || r.Resource["k"] != int64(1) || r.EventName != "x" {
		t.Errorf("record %+v", r)
	}
	for _, in := range []string{`{"resourceLogs":7}`, `not json`, `[1,2]`, `{"attributes":`} {
		if _, err := Decode([]byte(in)); !errors.Is(err, mapping.ErrOTelRecord) {
			t.Errorf("Decode(%s) err = %v, want ErrOTelRecord", in, err)
		}
	}
}

// TestRecordFromPdata checks the decoding of every AnyValue kind: the
// record's JSON form is the one the pins' flattened records use.
func TestRecordFromPdata(t *testing.T) {
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
	a.PutEmpty("n")
	lr.Body().SetStr("hello")
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	_, recs := flattenResource(rl, &keyer{})
	if len(recs) != 1 || recs[0].err != nil {
		t.Fatalf("records %+v", recs)
	}
	b, err := json.Marshal(recs[0].rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resource":{"service.name":"codex-app-server"},"attributes":{"b":false,"d":1.5,"i":1152921504606846976,"l":["e"],"m":{"k":2},"n":null,"s":"x","y":"AAE="},"body":"hello","severity_text":"WARN","severity_number":13}`
	if string(b) != want {
		t.Errorf("decoded\n got %s\nwant %s", b, want)
	}
	// NaN has no JSON: the record is refused, its neighbours are not.
	a.PutDouble("d", math.NaN())
	sl.LogRecords().AppendEmpty().Attributes().PutStr("ok", "1")
	_, recs = flattenResource(rl, &keyer{})
	if len(recs) != 2 || !errors.Is(recs[0].err, mapping.ErrOTelRecord) || recs[1].err != nil {
		t.Errorf("NaN record: %+v", recs)
	}
}

// TestRecordKeys: the same record under the same resource and scope keys
// alike (an exporter retry); any difference keys apart.
func TestRecordKeys(t *testing.T) {
	build := func(res, event string, ts int64, nested ...string) plog.ResourceLogs {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", res)
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Attributes().PutStr("event.name", event)
		lr.SetTimestamp(1)
		lr.Attributes().PutInt("n", ts)
		m := lr.Attributes().PutEmptyMap("m")
		for _, s := range nested {
			m.PutStr(s, s)
		}
		return rl
	}
	k := &keyer{}
	key := func(rl plog.ResourceLogs) recordKey {
		_, recs := flattenResource(rl, k)
		return recs[0].key
	}
	base := key(build("codex", "a", 1, "x", "y"))
	if key(build("codex", "a", 1, "x", "y")) != base || key(build("codex", "a", 1, "y", "x")) != base {
		t.Error("a retry keys apart")
	}
	for _, rl := range []plog.ResourceLogs{build("codeX", "a", 1, "x", "y"), build("codex", "b", 1, "x", "y"),
		build("codex", "a", 2, "x", "y"), build("codex", "a", 1, "x"), build("codex", "a", 1, "x", "z")} {
		if key(rl) == base {
			t.Error("a different record keys alike")
		}
	}
}

// TestDigestResumes: a key resumed from the prefix's digest state is the
// SHA-256 of the whole encoding, whatever the prefix's length.
func TestDigestResumes(t *testing.T) {
	b := make([]byte, 400)
	for i := range b {
		b[i] = byte(i * 7)
	}
	k := &keyer{}
	for _, n := range []int{0, 1, 63, 64, 65, 127, 128, 200, 400} {
		k.setPrefix(b[:n])
		for _, m := range []int{n, n + 1, n + 55, n + 56, n + 64, len(b)} {
			if m > len(b) {
				continue
			}
			want := sha256.Sum256(b[:m])
			if got := k.digest(b[:m]); got != recordKey(want[:16]) {
				t.Errorf("prefix %d, length %d: %x, want %x", n, m, got, want[:16])
			}
		}
	}
}
