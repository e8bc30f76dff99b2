package deliver

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/aep-hook/aep-hook/redact"
)

// otlpReceiver is a real OTLP/HTTP logs receiver on loopback: it decodes
// each request as an ExportLogsServiceRequest and keeps the records.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	recs  []map[string]any
	bad   []string
	fault func(n int, w http.ResponseWriter) bool
	n     int
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	o := &otlpReceiver{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.n++
		n, fault := o.n, o.fault
		o.mu.Unlock()
		if r.URL.Path != "/v1/logs" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
			o.mu.Lock()
			o.bad = append(o.bad, fmt.Sprintf("%s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
			o.mu.Unlock()
			w.WriteHeader(http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if fault != nil && fault(n, w) {
			return
		}
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		recs := pinShape(req.Logs())
		o.mu.Lock()
		o.recs = append(o.recs, recs...)
		o.mu.Unlock()
		resp, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// pinShape renders records in the shape of otlp-expected.json.
func pinShape(ld plog.Logs) []map[string]any {
	var out []map[string]any
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				m := map[string]any{
					"time_unix_nano":  uint64(lr.Timestamp()),
					"event_name":      lr.EventName(),
					"severity_text":   lr.SeverityText(),
					"severity_number": int(lr.SeverityNumber()),
					"resource":        rl.Resource().Attributes().AsRaw(),
					"attributes":      lr.Attributes().AsRaw(),
				}
				if tid := lr.TraceID(); !tid.IsEmpty() {
					sid := lr.SpanID()
					m["trace_id"] = hex.EncodeToString(tid[:])
					m["span_id"] = hex.EncodeToString(sid[:])
					m["flags"] = int(lr.Flags())
				}
				if lr.Body().Type() != 0 {
					m["body"] = lr.Body().AsRaw()
				}
				out = append(out, m)
			}
		}
	}
	return out
}

// canon re-encodes v as canonical JSON (sorted keys, numbers verbatim).
func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// pinsDir finds the OTLP pins: AEP_OTLP_PINS, else ../shared beside the
// module root.
func pinsDir(t *testing.T) string {
	if d := os.Getenv("AEP_OTLP_PINS"); d != "" {
		return d
	}
	d := filepath.Join("..", "..", "..", "shared", "aep-spec", "conformance", "fixtures", "otlp")
	if _, err := os.Stat(filepath.Join(d, "otlp-expected.json")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("OTLP pins not found at %s (set AEP_OTLP_PINS)", d)
		}
		t.Skipf("OTLP pins not found at %s (set AEP_OTLP_PINS)", d)
	}
	return d
}

var sevByNumber = map[float64]string{5: "debug", 9: "", 10: "notice", 13: "warning", 17: "error", 21: "critical"}

// eventFromPin rebuilds the AEP event a pin projects (the inverse of
// AEP-0005 §3.2), so the pins test the exporter without the golden corpus.
// For a pin without body whose capture is above metadata, data is
// invented: the exporter must drop it.
func eventFromPin(t *testing.T, pin map[string]any) []byte {
	attrs := pin["attributes"].(map[string]any)
	ev := map[string]any{"aep": "0.1"}
	for k, attr := range map[string]string{"id": "aep.event_id", "source": "aep.source", "agent": "aep.agent_id",
		"session": "aep.session_id", "run": "aep.run_id", "step": "aep.step", "seq": "aep.sequence",
		"epoch": "aep.epoch", "cause": "aep.causation_id", "subject": "aep.subject", "capture": "aep.capture"} {
		if v, ok := attrs[attr]; ok {
			ev[k] = v
		}
	}
	ev["type"] = strings.TrimPrefix(pin["event_name"].(string), EventNamePrefix)
	ns, _ := pin["time_unix_nano"].(json.Number).Int64()
	ev["time"] = time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z")
	sn, _ := pin["severity_number"].(json.Number).Float64()
	if s := sevByNumber[sn]; s != "" {
		ev["severity"] = s
	}
	if tid, ok := pin["trace_id"].(string); ok {
		fl, _ := pin["flags"].(json.Number).Int64()
		ev["traceparent"] = fmt.Sprintf("00-%s-%s-%02x", tid, pin["span_id"], fl)
	}
	data := map[string]any{}
	if b, ok := pin["body"].(map[string]any); ok {
		for k, v := range b {
			data[k] = v
		}
	} else if ev["capture"] != "metadata" {
		data["error"] = map[string]any{"message": "secret content above the ceiling"}
		data["gen_ai.usage.input_tokens"] = 5
	}
	for k, v := range attrs {
		if strings.HasPrefix(k, "gen_ai.") {
			data[k] = v
		}
	}
	if len(data) > 0 {
		ev["data"] = data
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// envelopeOf is a record without its body, its capture claim and its
// hoisted gen_ai.* attributes: what a down-leveled export keeps of the
// envelope whatever its data.
func envelopeOf(r map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range r {
		if k != "body" {
			out[k] = v
		}
	}
	attrs := map[string]any{}
	for k, v := range r["attributes"].(map[string]any) {
		if k != "aep.capture" && !strings.HasPrefix(k, "gen_ai.") {
			attrs[k] = v
		}
	}
	out["attributes"] = attrs
	return out
}

// TestOTLPPins exports each pinned event through the real OTLP/HTTP path
// and compares the received record with its pin exactly.
func TestOTLPPins(t *testing.T) {
	dir := pinsDir(t)
	raw, err := os.ReadFile(filepath.Join(dir, "otlp-expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var pins map[string]map[string]any
	if err := dec.Decode(&pins); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(pins))
	for k := range pins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rcv := newOTLPReceiver(t)
	d, _ := ParseDestination("otlp+" + rcv.srv.URL)
	snd := NewSender(d, "", rcv.srv.Client())
	for _, k := range keys {
		t.Run(k, func(t *testing.T) {
			rcv.mu.Lock()
			rcv.recs = nil
			rcv.mu.Unlock()
			if err := snd.Send(context.Background(), [][]byte{eventFromPin(t, pins[k])}); err != nil {
				t.Fatal(err)
			}
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			if len(rcv.recs) != 1 {
				t.Fatalf("received %d records", len(rcv.recs))
			}
			got, want := rcv.recs[0], pins[k]
			if attrs := want["attributes"].(map[string]any); attrs["aep.capture"] != "metadata" && want["body"] == nil {
				// The pin exports an event above max_capture as its
				// envelope, still claiming its own level; AEP-0005 §3.3
				// down-levels it (AEP-0001 §8.2) and the record claims
				// what it really carries. The envelope must match, the
				// invented content must not leave.
				if strings.Contains(canon(t, got), "secret content") {
					t.Errorf("pin %s: content above the ceiling exported: %s", k, canon(t, got))
				}
				if c := got["attributes"].(map[string]any)["aep.capture"]; c != "metadata" {
					t.Errorf("pin %s: aep.capture %v, want metadata (the level down-leveled to)", k, c)
				}
				got, want = envelopeOf(got), envelopeOf(want)
			}
			if got, want := canon(t, got), canon(t, want); got != want {
				t.Errorf("record differs from pin %s\n got: %s\nwant: %s", k, got, want)
			}
		})
	}
	t.Logf("OTLP pins: %d/%d", len(keys), len(keys))
}

// TestOTLPSeverityAndCapture covers the whole §3.4 table and max_capture:
// an event above it is down-leveled before export (AEP-0005 §3.3), keeping
// its structural members and claiming the level it really has.
func TestOTLPSeverityAndCapture(t *testing.T) {
	line := func(sev, capture string) []byte {
		return []byte(`{"aep":"0.1","id":"X","type":"x.t","time":"2026-07-03T10:00:00.000Z","source":"aep://h/agent/a","agent":"a","severity":"` + sev + `","capture":"` + capture + `","data":{"k":"v","prose":"free text with spaces","gen_ai.request.model":"m"}}` + "\n")
	}
	tests := []struct {
		sev, capture string
		max          redact.Level
		text         string
		num          int
		body         bool
		prose        bool   // the free text survives
		claim        string // aep.capture exported
	}{
		{"debug", "metadata", redact.Metadata, "DEBUG", 5, true, true, "metadata"},
		{"info", "metadata", redact.Metadata, "INFO", 9, true, true, "metadata"},
		{"notice", "metadata", redact.Metadata, "INFO2", 10, true, true, "metadata"},
		{"warning", "metadata", redact.Metadata, "WARN", 13, true, true, "metadata"},
		// x.t has no capture annotations: down-leveled, it loses its
		// data wholesale (AEP-0001 §8.2), and says it is metadata.
		{"error", "redacted", redact.Metadata, "ERROR", 17, false, false, "metadata"},
		{"critical", "redacted", redact.Redacted, "FATAL", 21, true, true, "redacted"},
		{"info", "full", redact.Redacted, "INFO", 9, false, false, "metadata"},
		{"info", "none", redact.Full, "INFO", 9, false, false, "none"},
	}
	for _, tt := range tests {
		ld, _, err := Logs([][]byte{line(tt.sev, tt.capture)}, tt.max)
		if err != nil {
			t.Fatal(err)
		}
		r := pinShape(ld)[0]
		body, hasBody := r["body"].(map[string]any)
		_, prose := body["prose"]
		attrs := r["attributes"].(map[string]any)
		_, hoisted := attrs["gen_ai.request.model"]
		if r["severity_text"] != tt.text || r["severity_number"] != tt.num || hasBody != tt.body || hoisted != tt.body ||
			prose != tt.prose || attrs["aep.capture"] != tt.claim {
			t.Errorf("%s/%s at %v: %v", tt.sev, tt.capture, tt.max, r)
		}
	}
	if _, i, err := Logs([][]byte{[]byte("{}\n"), []byte("nope\n")}, redact.Metadata); err == nil || i != 0 {
		t.Errorf("bad line: index %d err %v", i, err)
	}
}

// TestOTLPAttention: an attention request at its default redacted capture
// exports, at the default metadata max_capture, its kind, its options and
// the synthesized metadata prompt, claiming metadata; the prompt text the
// human would read does not leave.
func TestOTLPAttention(t *testing.T) {
	line := []byte(`{"aep":"0.1","id":"A","type":"attention.requested","time":"2026-07-03T10:00:00.000Z","source":"aep://h/agent/codex/session/s","agent":"codex","session":"s","subject":"Bash","capture":"redacted",` +
		`"data":{"kind":"permission","prompt":"Permission requested: Bash — rm -rf /srv/data","options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}],"respond_via":["control"]}}` + "\n")
	ld, _, err := Logs([][]byte{line}, redact.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	r := pinShape(ld)[0]
	body, _ := r["body"].(map[string]any)
	if r["attributes"].(map[string]any)["aep.capture"] != "metadata" || body["kind"] != "permission" ||
		body["options"] == nil || body["prompt"] == nil || strings.Contains(fmt.Sprint(body), "rm -rf") {
		t.Errorf("attention.requested exported as %v", r)
	}
}

// TestOTLPShip: ShipAll through the OTLP path, with a 503 then success and
// a 413 split, delivers every record once at least, in order.
func TestOTLPShip(t *testing.T) {
	rcv := newOTLPReceiver(t)
	rcv.fault = func(n int, w http.ResponseWriter) bool {
		switch n {
		case 1:
			w.WriteHeader(503)
			return true
		case 2:
			w.WriteHeader(413)
			return true
		}
		return false
	}
	d, _ := ParseDestination("otlp+" + rcv.srv.URL)
	s := newShipper(t, d)
	ids := writeLog(t, s.LogRoot, "codex", "o1", 0, 30, nil)
	if err := s.ShipAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.bad) > 0 {
		t.Errorf("bad requests: %v", rcv.bad)
	}
	var evs []got
	for _, r := range rcv.recs {
		a := r["attributes"].(map[string]any)
		evs = append(evs, got{ID: a["aep.event_id"].(string), Session: a["aep.session_id"].(string), Seq: a["aep.sequence"].(int64)})
	}
	wantDelivered(t, evs, ids)
}
