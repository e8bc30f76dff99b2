package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func newV(t *testing.T) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// specRoot is the aep-spec folder above AEP_SCHEMA_DIR.
func specRoot(t *testing.T) string {
	return filepath.Dir(schemaDir(t))
}

// goldenEvents gathers the complete events the spec text shows: every JSON
// code block of spec/*.md that is an envelope (has "aep"), and the golden
// events behind the OTLP projection pins (AEP-0005 §3), rebuilt from their
// pinned aep.* attributes and body.
func goldenEvents(t *testing.T) map[string][]byte {
	root := specRoot(t)
	out := map[string][]byte{}
	mds, _ := filepath.Glob(filepath.Join(root, "spec", "*.md"))
	block := regexp.MustCompile("(?s)```json\n(.*?)```")
	for _, md := range mds {
		b, _ := os.ReadFile(md)
		for i, m := range block.FindAllSubmatch(b, -1) {
			var ev map[string]any
			if json.Unmarshal(m[1], &ev) == nil && ev["aep"] == "0.1" {
				line, _ := json.Marshal(ev)
				out[filepath.Base(md)+"#"+string(rune('0'+i))] = line
			}
		}
	}
	var pins map[string]struct {
		EventName  string         `json:"event_name"`
		TimeNano   int64          `json:"time_unix_nano"`
		Severity   string         `json:"severity_text"`
		Attributes map[string]any `json:"attributes"`
		Body       map[string]any `json:"body"`
		TraceID    string         `json:"trace_id"`
		SpanID     string         `json:"span_id"`
	}
	b, err := os.ReadFile(filepath.Join(root, "conformance", "fixtures", "otlp", "otlp-expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pins); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"aep.agent_id": "agent", "aep.event_id": "id", "aep.capture": "capture",
		"aep.source": "source", "aep.session_id": "session", "aep.run_id": "run", "aep.step": "step",
		"aep.sequence": "seq", "aep.epoch": "epoch", "aep.causation_id": "cause", "aep.subject": "subject"}
	for k, p := range pins {
		if len(p.Body) == 0 && p.Attributes["aep.capture"] != "metadata" && p.Attributes["aep.capture"] != nil {
			continue // exported above max_capture: the pin withholds data, so the event cannot be rebuilt
		}
		ev := map[string]any{"aep": "0.1", "type": strings.TrimPrefix(p.EventName, "dev.aep."),
			"time": "2026-07-03T10:15:04.221Z"}
		data := map[string]any{}
		for a, v := range p.Attributes {
			if n, ok := names[a]; ok {
				ev[n] = v
			} else {
				data[a] = v
			}
		}
		for a, v := range p.Body {
			data[a] = v
		}
		if len(data) > 0 {
			ev["data"] = data
		}
		if p.TraceID != "" {
			ev["traceparent"] = "00-" + p.TraceID + "-" + p.SpanID + "-01"
		}
		line, _ := json.Marshal(ev)
		out["otlp-expected.json#"+k] = line
	}
	if len(out) < 4 {
		t.Fatalf("only %d golden events found", len(out))
	}
	return out
}

// TestGoldenEventsValidate: every complete event the spec shows passes
// (references left unresolved in a lone example are warnings, not
// violations).
func TestGoldenEventsValidate(t *testing.T) {
	for name, line := range goldenEvents(t) {
		v := newV(t)
		v.Line(name, 1, line)
		if v.Violations() != 0 {
			t.Errorf("%s: %v\n%s", name, v.Problems(), line)
		}
	}
}

const okEvent = `{"aep":"0.1","id":"01A","type":"tool.requested","subject":"Bash","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/claude-code/session/s1","agent":"claude-code","session":"s1","run":"r1","seq":1,"epoch":0,"capture":"metadata","data":{"tool":{"name":"Bash","call_id":"c1"},"args_digest":"1df8bccaec747dc615b50678f35bf5b5"}}`

// with returns okEvent changed by edit (a JSON merge: null deletes).
func with(t *testing.T, edit string) string {
	t.Helper()
	var ev, e map[string]any
	json.Unmarshal([]byte(okEvent), &ev)
	if err := json.Unmarshal([]byte(edit), &e); err != nil {
		t.Fatal(err)
	}
	for k, v := range e {
		if v == nil {
			delete(ev, k)
		} else {
			ev[k] = v
		}
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// TestMalformedEnvelopes: each broken event is rejected with a message
// naming the rule.
func TestMalformedEnvelopes(t *testing.T) {
	cases := []struct {
		name, line, rule, msg string
	}{
		{"not json", `{"aep":`, "AEP-0001 §5", "not a JSON object"},
		{"array", `[1]`, "AEP-0001 §5", "not a JSON object"},
		{"missing id", with(t, `{"id":null}`), "AEP-0001 §5.1", "missing required attribute id"},
		{"wrong version", with(t, `{"aep":"0.2"}`), "AEP-0001 §11", "aep is 0.2"},
		{"null optional", strings.Replace(okEvent, `"subject":"Bash"`, `"subject":null`, 1), "AEP-0001 §5.1", "subject is null"},
		{"empty agent", with(t, `{"agent":""}`), "AEP-0001 §5.1", "agent must not be empty"},
		{"time without zone", with(t, `{"time":"2026-07-03T10:15:04"}`), "AEP-0001 §5.1", "not an RFC 3339 timestamp"},
		{"source not a uri", with(t, `{"source":"just words"}`), "AEP-0001 §5.1", "is not a URI"},
		{"negative seq", with(t, `{"seq":-1}`), "AEP-0001 §5.1", "seq must be an integer >= 0"},
		{"fraction epoch", with(t, `{"epoch":1.5}`), "AEP-0001 §5.1", "epoch must be an integer >= 0"},
		{"bad severity", with(t, `{"severity":"fatal"}`), "AEP-0001 §8.1", `severity "fatal"`},
		{"bad capture", with(t, `{"capture":"secret"}`), "AEP-0001 §8.2", `capture "secret"`},
		{"bad traceparent", with(t, `{"traceparent":"00-xyz"}`), "AEP-0001 §5.1", "W3C Trace Context"},
		{"data not object", with(t, `{"data":[1]}`), "AEP-0001 §5.1", "data must be an object"},
		{"bad extension name", with(t, `{"Vendor_X":"a"}`), "AEP-0001 §5.4", "legal extension name"},
		{"object extension", with(t, `{"acme":{"a":1}}`), "AEP-0001 §5.4", "string, integer or boolean"},
		{"unregistered category", with(t, `{"type":"widget.spun"}`), "AEP-0002 §3", "not a registered category"},
		{"unregistered core type", with(t, `{"type":"tool.exploded"}`), "AEP-0001 §10", "not a registered core type"},
		{"bad vendor type", with(t, `{"type":"x.acme"}`), "AEP-0001 §6", "x.{vendor}.{category}.{rest}"},
		{"uppercase type", with(t, `{"type":"Tool.Requested"}`), "AEP-0001 §6", "lowercase"},
		{"session event without seq", with(t, `{"seq":null}`), "AEP-0001 §5.2", "must carry seq"},
		{"session event without session", with(t, `{"session":null}`), "AEP-0001 §5.2", "must carry session"},
		{"agent event with session", with(t, `{"type":"agent.heartbeat","data":{}}`), "AEP-0001 §5.2", "must not carry session"},
		{"foreign event with seq", with(t, `{"type":"attention.routed","subject":"01Z","data":{}}`), "AEP-0001 §5.2", "must omit seq"},
		{"missing required payload", with(t, `{"data":{"args_digest":"x"}}`), "AEP-0002 §5", "data.tool is required"},
		{"wrong payload type", with(t, `{"data":{"tool":{"name":7}}}`), "AEP-0002 §5", "data.tool.name must be string"},
		{"enum", with(t, `{"type":"run.cancelled","data":{"by":"cat"}}`), "AEP-0002 §5", `data.by is "cat"`},
		{"minimum", with(t, `{"type":"run.finished","data":{"duration_ms":-5}}`), "AEP-0002 §5", "below the minimum"},
		{"full above metadata", with(t, `{"data":{"tool":{"name":"Bash"},"args":{"command":"ls"}}}`), "AEP-0001 §8.2(a)", "data.args is full-level content in an event whose capture is metadata"},
		{"redacted above metadata", with(t, `{"type":"run.started","data":{"prompt":"hi"}}`), "AEP-0001 §8.2(a)", "data.prompt is redacted-level"},
		{"default capture is metadata", with(t, `{"capture":null,"type":"run.started","data":{"prompt":"hi"}}`), "AEP-0001 §8.2(a)", "capture is metadata"},
		{"none carries no data", with(t, `{"capture":"none"}`), "AEP-0001 §8.2", "capture none is the envelope only"},
		{"form select needs choices", with(t, `{"type":"attention.requested","data":{"kind":"form","prompt":"1","fields":[{"id":"a","type":"select","label":"1"}]}}`), "AEP-0002 §5.2", "choices is required when type is \"select\""},
		{"nested capture", with(t, `{"type":"attention.requested","data":{"kind":"permission","prompt":"p","context":{"x":1}}}`), "AEP-0001 §8.2(a)", "data.context is full-level"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newV(t)
			v.Line("f.jsonl", 7, []byte(tc.line))
			for _, p := range v.Problems() {
				if !p.Warning && p.Rule == tc.rule && strings.Contains(p.Message, tc.msg) {
					if !strings.HasPrefix(p.String(), "f.jsonl:7: violation: ") {
						t.Errorf("message does not name the line: %s", p)
					}
					return
				}
			}
			t.Errorf("want %s %q, got %v", tc.rule, tc.msg, v.Problems())
		})
	}
	v := newV(t)
	v.Line("f.jsonl", 1, []byte(okEvent))
	if len(v.Problems()) != 0 {
		t.Fatalf("the good event: %v", v.Problems())
	}
	v = newV(t)
	v.Line("f.jsonl", 1, []byte(with(t, `{"capture":"full","data":{"tool":{"name":"Bash"},"args":{"command":"ls"},"x_vendor_note":"ok"}}`)))
	if len(v.Problems()) != 0 {
		t.Fatalf("full capture with content and an unannotated member: %v", v.Problems())
	}
}

// TestStreamRules: order, references and terminals across lines.
func TestStreamRules(t *testing.T) {
	ev := func(id, typ string, seq int, extra string) string {
		base := `{"aep":"0.1","id":"` + id + `","type":"` + typ + `","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","run":"r1","seq":` + string(rune('0'+seq))
		if extra != "" {
			base += "," + extra
		}
		return base + "}"
	}
	runStart := ev("e1", "run.started", 1, "")
	ask := ev("e2", "attention.requested", 2, `"data":{"kind":"permission","prompt":"p"}`)
	cases := []struct {
		name     string
		lines    []string
		complete bool
		rule     string
		msg      string
	}{
		{"seq regression", []string{ev("e1", "run.started", 2, ""), ev("e2", "run.finished", 1, "")}, false, "AEP-0001 §7", "never regress"},
		{"position taken", []string{runStart, ev("e9", "run.finished", 1, "")}, false, "AEP-0001 §7", "two events claim one position"},
		{"epoch reused", []string{ev("e1", "run.started", 5, `"epoch":2`), ev("e2", "run.finished", 6, `"epoch":1`)}, false, "AEP-0001 §7", "never regress"},
		{"two terminals", []string{runStart, ev("e2", "run.finished", 2, ""), ev("e3", "run.cancelled", 3, "")}, false, "AEP-0002 §2 (5)", "one terminal per run"},
		{"two session ends", []string{ev("e1", "session.ended", 1, ""), ev("e2", "session.ended", 2, "")}, false, "AEP-0002 §2 (5)", "one session.ended"},
		{"attention two terminals", []string{ask, ev("e3", "attention.resolved", 3, `"subject":"e2","data":{"resolution":"answered"}`), ev("e4", "attention.timeout", 4, `"subject":"e2"`)}, false, "AEP-0002 §7", "already reached its terminal"},
		{"attention without subject", []string{ask, ev("e3", "attention.answered", 3, `"data":{"answer":{"option":"allow"}}`)}, false, "AEP-0002 §7.1", "must set subject"},
		{"subject names a run", []string{runStart, ev("e3", "attention.resolved", 3, `"subject":"e1","data":{"resolution":"auto"}`)}, false, "AEP-0002 §7.1", "is a run.started, not an attention.requested"},
		{"ended with pending attention", []string{ask, ev("e3", "session.ended", 3, "")}, false, "AEP-0002 §7.2", "still pending: e2"},
		{"unknown cause (complete)", []string{ev("e1", "run.finished", 1, `"cause":"zz"`)}, true, "AEP-0001 §5.1", "cause zz names no earlier event"},
		{"id reused by another type", []string{runStart, ev("e1", "run.finished", 2, "")}, false, "AEP-0001 §7", "already used by a run.started"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newV(t)
			v.Complete = tc.complete
			for i, l := range tc.lines {
				v.Line("s.jsonl", i+1, []byte(l))
			}
			for _, p := range v.Problems() {
				if !p.Warning && p.Rule == tc.rule && strings.Contains(p.Message, tc.msg) {
					return
				}
			}
			t.Errorf("want %s %q, got %v", tc.rule, tc.msg, v.Problems())
		})
	}
	// A redelivered line (same id, same position) is not a violation, and an
	// unresolved cause in a partial log is only a warning.
	v := newV(t)
	v.Line("s.jsonl", 1, []byte(runStart))
	v.Line("s.jsonl", 2, []byte(runStart))
	v.Line("s.jsonl", 3, []byte(ev("e2", "run.finished", 2, `"cause":"elsewhere"`)))
	if v.Violations() != 0 || len(v.Problems()) != 1 || !v.Problems()[0].Warning {
		t.Fatalf("redelivery / partial log: %v", v.Problems())
	}
}
