package deliver

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/redact"
)

// defaultMaxCapture is the OTLP exporter's max_capture (AEP-0005 §3.3).
const defaultMaxCapture = redact.Metadata

// EventNamePrefix prefixes an AEP type to form the LogRecord event_name
// (AEP-0005 §3.2), the same identity the CloudEvents bridge uses.
const EventNamePrefix = "dev.aep."

// ScopeName is the instrumentation scope of exported records.
const ScopeName = "github.com/aep-hook/aep-hook"

// OTLPClient exports log lines as OTLP LogRecords over OTLP/HTTP protobuf
// (POST {base}/v1/logs, application/x-protobuf).
type OTLPClient struct {
	Endpoint   string // {base}/v1/logs
	Token      string // bearer token; "" sends none
	Client     *http.Client
	MaxCapture redact.Level // events above it export without data
}

// Send implements Sender. A line that is not an AEP event is reported as a
// Reject at its index without anything being sent.
func (o *OTLPClient) Send(ctx context.Context, lines [][]byte) error {
	if len(lines) == 0 {
		return nil
	}
	ld, bad, err := Logs(lines, o.MaxCapture)
	if err != nil {
		return &SendError{Class: Reject, Index: bad, Detail: err.Error()}
	}
	var m plog.ProtoMarshaler
	body, err := m.MarshalLogs(ld)
	if err != nil {
		return &SendError{Class: Fatal, Err: fmt.Errorf("encode OTLP: %w", err)}
	}
	hdr := map[string]string{"Content-Type": "application/x-protobuf"}
	return post(ctx, o.Client, o.Endpoint, o.Token, hdr, body, func(status int, rb []byte) *SendError {
		if status == http.StatusBadRequest {
			// OTLP names no record; bisection finds it.
			return &SendError{Class: Reject, Index: -1, Detail: strings.TrimSpace(string(rb))}
		}
		if se := commonClass(status, o.Endpoint); se != nil {
			return se
		}
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: unexpected status %d", o.Endpoint, status)}
	})
}

// wireEvent is the envelope as read back from the log.
type wireEvent struct {
	AEP         string         `json:"aep"`
	ID          string         `json:"id"`
	Type        string         `json:"type"`
	Subject     *string        `json:"subject"`
	Time        string         `json:"time"`
	Source      string         `json:"source"`
	Agent       string         `json:"agent"`
	Session     *string        `json:"session"`
	Run         *string        `json:"run"`
	Step        *string        `json:"step"`
	Seq         *int64         `json:"seq"`
	Epoch       *int64         `json:"epoch"`
	Cause       *string        `json:"cause"`
	Traceparent string         `json:"traceparent"`
	Severity    string         `json:"severity"`
	Capture     string         `json:"capture"`
	Data        map[string]any `json:"data"`
}

// Logs projects AEP event lines onto OTLP logs per AEP-0005 §3: one
// ResourceLogs per agent (service.name), records in line order. On a line
// that is not an AEP event it returns that line's index and an error.
func Logs(lines [][]byte, maxCapture redact.Level) (plog.Logs, int, error) {
	ld := plog.NewLogs()
	byAgent := map[string]plog.LogRecordSlice{}
	for i, line := range lines {
		ev, err := decodeEvent(line)
		if err == nil {
			ev, err = downlevelAbove(line, ev, maxCapture)
		}
		if err != nil {
			return plog.Logs{}, i, err
		}
		recs, ok := byAgent[ev.Agent]
		if !ok {
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", ev.Agent)
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(ScopeName)
			recs = sl.LogRecords()
			byAgent[ev.Agent] = recs
		}
		if err := project(ev, recs.AppendEmpty(), maxCapture); err != nil {
			return plog.Logs{}, i, err
		}
	}
	return ld, -1, nil
}

// downlevelAbove down-levels an event above maxCapture before export
// (AEP-0005 §3.3, AEP-0001 §8.2): what the schema marks structural survives
// (an attention request's kind, its options, the synthesized metadata
// prompt), and the record claims the level it really has.
func downlevelAbove(line []byte, ev *wireEvent, maxCapture redact.Level) (*wireEvent, error) {
	level, err := redact.ParseLevel(firstOr(ev.Capture, "metadata"))
	if err != nil || level <= maxCapture {
		return ev, nil
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not an AEP event: %w", err)
	}
	down, err := redact.Downlevel(m, maxCapture)
	if err != nil {
		return nil, fmt.Errorf("not an AEP event: %w", err)
	}
	b, err := json.Marshal(down)
	if err != nil {
		return nil, fmt.Errorf("down-level: %w", err)
	}
	return decodeEvent(b)
}

// firstOr is s, or def when s is empty.
func firstOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func decodeEvent(line []byte) (*wireEvent, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var ev wireEvent
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("not an AEP event: %w", err)
	}
	if ev.ID == "" || ev.Type == "" || ev.Time == "" || ev.Agent == "" || ev.Source == "" {
		return nil, fmt.Errorf("not an AEP event: id, type, time, source or agent missing")
	}
	return &ev, nil
}

// severities is the AEP-0005 §3.4 table.
var severities = map[string]struct {
	text string
	num  plog.SeverityNumber
}{
	"debug":    {"DEBUG", plog.SeverityNumberDebug},
	"info":     {"INFO", plog.SeverityNumberInfo},
	"notice":   {"INFO2", plog.SeverityNumberInfo2},
	"warning":  {"WARN", plog.SeverityNumberWarn},
	"error":    {"ERROR", plog.SeverityNumberError},
	"critical": {"FATAL", plog.SeverityNumberFatal},
}

// project fills lr from ev (AEP-0005 §3.2).
func project(ev *wireEvent, lr plog.LogRecord, maxCapture redact.Level) error {
	t, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		return fmt.Errorf("event time is not RFC 3339")
	}
	lr.SetTimestamp(pcommon.NewTimestampFromTime(t))
	lr.SetEventName(EventNamePrefix + ev.Type)
	sev, ok := severities[ev.Severity]
	if !ok {
		sev = severities["info"]
	}
	lr.SetSeverityText(sev.text)
	lr.SetSeverityNumber(sev.num)
	if tid, sid, flags, ok := parseTraceparent(ev.Traceparent); ok {
		lr.SetTraceID(tid)
		lr.SetSpanID(sid)
		lr.SetFlags(plog.LogRecordFlags(flags))
	}
	a := lr.Attributes()
	a.PutStr("aep.agent_id", ev.Agent)
	a.PutStr("aep.event_id", ev.ID)
	capture := ev.Capture
	if capture == "" {
		capture = "metadata"
	}
	a.PutStr("aep.capture", capture)
	a.PutStr("aep.source", ev.Source)
	putStr(a, "aep.session_id", ev.Session)
	putStr(a, "aep.run_id", ev.Run)
	putStr(a, "aep.step", ev.Step)
	if ev.Seq != nil {
		a.PutInt("aep.sequence", *ev.Seq)
	}
	if ev.Epoch != nil {
		a.PutInt("aep.epoch", *ev.Epoch)
	}
	putStr(a, "aep.causation_id", ev.Cause)
	putStr(a, "aep.subject", ev.Subject)

	// §3.3: Logs down-leveled an event above max_capture; one that still
	// claims more (an unknown level) or none exports the envelope only.
	level, err := redact.ParseLevel(capture)
	if err != nil || level > maxCapture || level == redact.None {
		return nil
	}
	var body pcommon.Map
	for _, k := range slices.Sorted(maps.Keys(ev.Data)) {
		v := ev.Data[k]
		if strings.HasPrefix(k, "gen_ai.") {
			setValue(a.PutEmpty(k), v)
			continue
		}
		if body == (pcommon.Map{}) {
			body = lr.Body().SetEmptyMap()
		}
		setValue(body.PutEmpty(k), v)
	}
	return nil
}

func putStr(a pcommon.Map, k string, v *string) {
	if v != nil {
		a.PutStr(k, *v)
	}
}

// setValue stores a JSON value (decoded with UseNumber) as an AnyValue:
// integral numbers as ints, others as doubles.
func setValue(dst pcommon.Value, v any) {
	switch x := v.(type) {
	case string:
		dst.SetStr(x)
	case bool:
		dst.SetBool(x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			dst.SetInt(n)
		} else if f, err := x.Float64(); err == nil {
			dst.SetDouble(f)
		} else {
			dst.SetStr(x.String())
		}
	case float64:
		dst.SetDouble(x)
	case map[string]any:
		m := dst.SetEmptyMap()
		m.EnsureCapacity(len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			setValue(m.PutEmpty(k), x[k])
		}
	case []any:
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(x))
		for _, e := range x {
			setValue(s.AppendEmpty(), e)
		}
	case nil:
		// JSON null stays an empty AnyValue.
	}
}

// parseTraceparent parses a W3C traceparent (version 00 layout; later
// versions share the prefix).
func parseTraceparent(tp string) (pcommon.TraceID, pcommon.SpanID, uint8, bool) {
	var tid pcommon.TraceID
	var sid pcommon.SpanID
	parts := strings.Split(tp, "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return tid, sid, 0, false
	}
	if _, err := hex.Decode(tid[:], []byte(parts[1])); err != nil || tid.IsEmpty() {
		return tid, sid, 0, false
	}
	if _, err := hex.Decode(sid[:], []byte(parts[2])); err != nil || sid.IsEmpty() {
		return tid, sid, 0, false
	}
	var fl [1]byte
	if _, err := hex.Decode(fl[:], []byte(parts[3])); err != nil {
		return tid, sid, 0, false
	}
	return tid, sid, fl[0], true
}
