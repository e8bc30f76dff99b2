package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
		{"wrong version", with(t, `{"aep":"0.2"}`), "AEP-0001 §5.1 #1", "aep is 0.2"},
		{"null optional", strings.Replace(okEvent, `"subject":"Bash"`, `"subject":null`, 1), "AEP-0001 §5.1", "subject is null"},
		{"empty agent", with(t, `{"agent":""}`), "AEP-0001 §5.1 #7", "agent must not be empty"},
		{"time without zone", with(t, `{"time":"2026-07-03T10:15:04"}`), "AEP-0001 §5.1 #5", "not an RFC 3339 timestamp"},
		{"source not a uri", with(t, `{"source":"just words"}`), "AEP-0001 §5.1 #6", "is not a URI"},
		{"negative seq", with(t, `{"seq":-1}`), "AEP-0001 §5.1 #11", "seq must be an integer >= 0"},
		{"fraction epoch", with(t, `{"epoch":1.5}`), "AEP-0001 §5.1 #12", "epoch must be an integer >= 0"},
		{"bad severity", with(t, `{"severity":"fatal"}`), "AEP-0001 §8.1", `severity "fatal"`},
		{"bad capture", with(t, `{"capture":"secret"}`), "AEP-0001 §8.2", `capture "secret"`},
		{"bad traceparent", with(t, `{"traceparent":"00-xyz"}`), "AEP-0001 §5.1 #14", "W3C Trace Context"},
		{"data not object", with(t, `{"data":[1]}`), "AEP-0001 §5.1 #17", "data must be an object"},
		{"bad extension name", with(t, `{"Vendor_X":"a"}`), "AEP-0001 §5.4", "legal extension name"},
		{"object extension", with(t, `{"acme":{"a":1}}`), "AEP-0001 §5.4", "string, integer or boolean"},
		{"unregistered category", with(t, `{"type":"widget.spun"}`), "AEP-0002 §3", "not a registered category"},
		{"unregistered core type", with(t, `{"type":"tool.exploded"}`), "AEP-0001 §10", "not a registered core type"},
		{"bad vendor type", with(t, `{"type":"x.acme"}`), "AEP-0001 §6", "x.{vendor}.{category}.{rest}"},
		{"uppercase type", with(t, `{"type":"Tool.Requested"}`), "AEP-0001 §6", "lowercase"},
		{"session event without seq", with(t, `{"seq":null}`), "AEP-0001 §5.2", "must carry seq"},
		{"session event without session", with(t, `{"session":null}`), "AEP-0001 §5.2", "must carry session"},
		{"agent event with session", with(t, `{"type":"agent.heartbeat","data":{}}`), "AEP-0001 §5.2", "must not carry session"},
		{"foreign event with seq", with(t, `{"type":"attention.routed","subject":"01Z","data":{}}`), "AEP-0002 §7.3", "must omit seq"},
		{"missing required payload", with(t, `{"data":{"args_digest":"x"}}`), "AEP-0002 §5.3", "data.tool is required"},
		{"wrong payload type", with(t, `{"data":{"tool":{"name":7}}}`), "AEP-0002 §5.3", "data.tool.name must be string"},
		{"enum", with(t, `{"type":"run.cancelled","data":{"by":"cat"}}`), "AEP-0002 §5.3", `data.by is "cat"`},
		{"minimum", with(t, `{"type":"run.finished","data":{"duration_ms":-5}}`), "AEP-0002 §5.3", "below the minimum"},
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
		{"seq regression", []string{ev("e1", "run.started", 2, ""), ev("e2", "run.finished", 1, "")}, false, "AEP-0001 §7.2", "never regress"},
		{"position taken", []string{runStart, ev("e9", "run.finished", 1, "")}, false, "AEP-0001 §7.2", "two events claim one position"},
		{"epoch reused", []string{ev("e1", "run.started", 5, `"epoch":2`), ev("e2", "run.finished", 6, `"epoch":1`)}, false, "AEP-0001 §7.2", "never regress"},
		{"two terminals", []string{runStart, ev("e2", "run.finished", 2, ""), ev("e3", "run.cancelled", 3, "")}, false, "AEP-0002 §2 convention 5", "one terminal per run"},
		{"two session ends", []string{ev("e1", "session.ended", 1, ""), ev("e2", "session.ended", 2, "")}, false, "AEP-0002 §2 convention 5", "one session.ended"},
		{"attention two terminals", []string{ask, ev("e3", "attention.resolved", 3, `"subject":"e2","data":{"resolution":"answered"}`), ev("e4", "attention.timeout", 4, `"subject":"e2"`)}, false, "AEP-0002 §7.2", "already reached its terminal"},
		{"attention without subject", []string{ask, ev("e3", "attention.answered", 3, `"data":{"answer":{"option":"allow"}}`)}, false, "AEP-0002 §7.1", "must set subject"},
		{"subject names a run", []string{runStart, ev("e3", "attention.resolved", 3, `"subject":"e1","data":{"resolution":"auto"}`)}, false, "AEP-0002 §7.1", "is a run.started, not an attention.requested"},
		{"ended with pending attention", []string{ask, ev("e3", "session.ended", 3, "")}, false, "AEP-0002 §7.2", "still pending: e2"},
		{"unknown cause (complete)", []string{ev("e1", "run.finished", 1, `"cause":"zz"`)}, true, "AEP-0001 §5.1 #13", "cause zz names no earlier event"},
		{"id reused by another type", []string{runStart, ev("e1", "run.finished", 2, "")}, false, "AEP-0001 §5.1 #2", "id e1 of aep://h/agent/a/session/s was already used by a different event (s.jsonl:1)"},
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

// TestSpecRules: the stream rules of AEP-0001 §5.1 #2 (an id names one
// event per emitter), AEP-0004 §3 (one ack decision per command) and
// AEP-0006 (form answers against their fields), each reported with the
// rule's section and what it says; the lawful neighbours of each pass.
func TestSpecRules(t *testing.T) {
	const src = `"source":"aep://h/agent/t/session/s","agent":"t","session":"s"`
	ev := func(id, typ string, seq int, extra string) string {
		l := `{"aep":"0.1","id":"` + id + `","type":"` + typ + `","time":"2026-07-03T10:00:00Z",` + src + `,"seq":` + strconv.Itoa(seq)
		if extra != "" {
			l += "," + extra
		}
		return l + "}"
	}
	cmd := `{"aep":"0.1","id":"CMD","type":"control.pause","time":"2026-07-03T10:00:00Z","source":"aep://h/agent/mc","agent":"mc","session":"s"}`
	form := ev("F", "attention.requested", 1, `"capture":"redacted","data":{"kind":"form","prompt":"Pick","fields":[`+
		`{"id":"db","type":"select","label":"Database","choices":[{"id":"pg","label":"PostgreSQL"},{"id":"sq","label":"SQLite"}]},`+
		`{"id":"tags","type":"select","multi":true,"label":"Tags","choices":[{"id":"a","label":"A"}]},`+
		`{"id":"why","type":"select","other":true,"label":"Why","choices":[{"id":"1","label":"One"}]},`+
		`{"id":"name","type":"string","label":"Name"},{"id":"n","type":"number","label":"N"}]}`)
	answer := func(capture, values string) string {
		return ev("A", "attention.answered", 2, `"subject":"F","cause":"F","capture":"`+capture+`","data":{"answer":{"values":`+values+`},"via":"control"}`)
	}
	cases := []struct {
		name  string
		lines []string
		rule  string // "" when the stream is lawful
		msg   string
	}{
		{"id reused with other content", []string{ev("E1", "run.started", 0, `"run":"r1","data":{"trigger":"user"}`),
			ev("E1", "run.started", 1, `"run":"r2","data":{"trigger":"agent"}`)},
			"AEP-0001 §5.1 #2", "id E1 of aep://h/agent/t/session/s was already used by a different event (s.jsonl:1)"},
		{"id redelivered unchanged", []string{ev("E1", "run.started", 0, `"run":"r1"`), ev("E1", "run.started", 0, `"run":"r1"`)}, "", ""},
		{"the same id from two emitters", []string{ev("E1", "run.started", 0, `"run":"r1"`),
			strings.Replace(ev("E1", "run.started", 0, `"run":"r1"`), "agent/t/", "agent/u/", 1)}, "", ""},
		{"second ack", []string{cmd, ev("K1", "control.accepted", 0, `"cause":"CMD"`), ev("K2", "control.accepted", 1, `"cause":"CMD"`)},
			"AEP-0004 §3", "command CMD was already acknowledged (K1): a second ack event, not a redelivery of the first"},
		{"conflicting acks", []string{cmd, ev("K1", "control.accepted", 0, `"cause":"CMD"`), ev("K2", "control.rejected", 1, `"cause":"CMD","data":{"reason":"invalid"}`)},
			"AEP-0004 §3", "command CMD was already acknowledged accepted (K1): a conflicting second decision"},
		{"ack redelivered", []string{cmd, ev("K1", "control.accepted", 0, `"cause":"CMD"`), ev("K1", "control.accepted", 0, `"cause":"CMD"`)}, "", ""},
		{"ack without cause", []string{ev("K1", "control.accepted", 0, "")}, "AEP-0004 §3", "control.accepted must set cause"},
		{"select answered with free text", []string{form, answer("redacted", `{"db":"MariaDB"}`)},
			"AEP-0002 §5.3", `data.answer.values.db is "MariaDB", not one of the field's choice ids, and the field does not allow other`},
		{"multi-select with an unknown id", []string{form, answer("metadata", `{"tags":["a","zz"]}`)},
			"AEP-0002 §5.3", `data.answer.values.tags is "zz", not one of the field's choice ids`},
		{"multi-select not an array", []string{form, answer("metadata", `{"tags":"a"}`)},
			"AEP-0002 §5.3", "answers a multi-select field with string"},
		{"unknown field", []string{form, answer("metadata", `{"nope":1}`)}, "AEP-0002 §5.3", "data.answer.values.nope names no field of the form F"},
		{"number field given text", []string{form, answer("redacted", `{"n":"five"}`)}, "AEP-0002 §5.3", "answers a number field with string"},
		{"string value at metadata", []string{form, answer("metadata", `{"name":"billing-api"}`)},
			"AEP-0002 §5.3", "data.answer.values.name is free text in an event whose capture is metadata"},
		{"other text at metadata", []string{form, answer("metadata", `{"why":"my own words"}`)},
			"AEP-0002 §5.3", "data.answer.values.why is free text in an event whose capture is metadata"},
		{"a lawful answer", []string{form, answer("redacted", `{"db":"pg","tags":["a"],"why":"my own words","name":"x","n":3}`)}, "", ""},
		{"structural values at metadata", []string{form, answer("metadata", `{"db":"sq","tags":[],"why":"1","n":3}`)}, "", ""},
		{"a command answering a form", []string{form, `{"aep":"0.1","id":"R","type":"control.attention.respond","subject":"F","time":"2026-07-03T10:00:01Z","source":"aep://h/agent/mc","agent":"mc","session":"s","capture":"redacted","data":{"answer":{"values":{"db":"MariaDB"}}}}`},
			"AEP-0002 §5.3", `data.answer.values.db is "MariaDB"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newV(t)
			for i, l := range tc.lines {
				v.Line("s.jsonl", i+1, []byte(l))
			}
			if tc.rule == "" {
				if v.Violations() != 0 {
					t.Fatalf("a lawful stream: %v", v.Problems())
				}
				return
			}
			for _, p := range v.Problems() {
				if !p.Warning && p.Rule == tc.rule && strings.Contains(p.Message, tc.msg) {
					if p.Says == "" || !strings.Contains(p.String(), "["+p.Rule+": "+p.Says+"]") {
						t.Errorf("the message does not say the rule: %s", p)
					}
					return
				}
			}
			t.Errorf("want %s %q, got %v", tc.rule, tc.msg, v.Problems())
		})
	}
}

// TestFinishOpenRuns: a complete input's runs that never closed are
// warned about at the end (zero terminals is legal, so never a
// violation); a partial input's are not.
func TestFinishOpenRuns(t *testing.T) {
	lines := []string{
		`{"aep":"0.1","id":"1","type":"run.started","time":"2026-07-03T10:00:00Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","run":"r1","seq":0}`,
		`{"aep":"0.1","id":"2","type":"run.started","time":"2026-07-03T10:00:01Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","run":"r2","seq":1,"cause":"1"}`,
		`{"aep":"0.1","id":"3","type":"run.finished","time":"2026-07-03T10:00:02Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","run":"r2","seq":2,"cause":"2"}`,
	}
	for _, complete := range []bool{true, false} {
		v := newV(t)
		v.Complete = complete
		for i, l := range lines {
			v.Line("s.jsonl", i+1, []byte(l))
		}
		v.Finish()
		v.Finish()
		var got []string
		for _, p := range v.Problems() {
			got = append(got, p.String())
		}
		want := []string(nil)
		if complete {
			want = []string{"s.jsonl:1: warning: run r1 of session s never closed: no run.finished, run.failed or run.cancelled " +
				"[AEP-0002 §2 convention 1: a started run ends with run.finished, run.failed or run.cancelled (zero terminals is legal)]"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("complete=%v:\n got %q\nwant %q", complete, got, want)
		}
		if v.Violations() != 0 {
			t.Errorf("an open run is a violation: %v", got)
		}
	}
}

// TestEveryRuleSays: every rule validate reports names its section and
// says what it requires.
func TestEveryRuleSays(t *testing.T) {
	all := []rule{rEvent, rJSONL, rNull, rRequired, rExtName, rExtValue, rSeverity, rCaptureSet, rCaptureNone,
		rCaptureField, rTypeName, rCategory, rCoreType, rAgentScope, rSessionScope, rCommand, rRouted, rFieldSpec,
		rIDUnique, rPosition, rRegress, rCause, rSubject, rAttnEnd, rPendingEnd, rRunEnd, rRunNamed, rSessionEnd,
		rOpenRun, rAck, rAckCause, rValues, rValuesCapture}
	for _, r := range attrRules {
		all = append(all, r)
	}
	cite := regexp.MustCompile(`^AEP-000\d §\d+(\.\d+)*(\(a\)| #\d+| convention \d+)?$`)
	for _, r := range all {
		if !cite.MatchString(r.cite) || len(r.says) < 10 {
			t.Errorf("rule %+v: want a section and what it says", r)
		}
	}
}
