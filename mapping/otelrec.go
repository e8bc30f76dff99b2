package mapping

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/redact"
)

// This file holds what the OTLP-channel tables (codexotel.go, vscodeotel.go)
// share: the flattened record shape one OTLP LogRecord becomes (the shape the
// pins' "input" uses), its conversion from pdata, the splitting of an
// OTLP/JSON ExportLogsServiceRequest into records, and the one mapping
// routine both vendor profiles run.

// OTelRecord is one OTLP LogRecord flattened with its resource and scope: the
// Moment.Raw of the OTLP-channel tables. Attribute values keep their OTLP
// types (string, int, double, bool, array, map; bytes as base64).
type OTelRecord struct {
	Resource       map[string]any `json:"resource"`
	Scope          map[string]any `json:"scope,omitempty"`
	Attributes     map[string]any `json:"attributes"`
	Body           any            `json:"body,omitempty"`
	EventName      string         `json:"event_name,omitempty"`
	SeverityText   string         `json:"severity_text,omitempty"`
	SeverityNumber int32          `json:"severity_number,omitempty"`
	Time           uint64         `json:"time_unix_nano,omitempty"`
	ObservedTime   uint64         `json:"observed_time_unix_nano,omitempty"`
	TraceID        string         `json:"trace_id,omitempty"`
	SpanID         string         `json:"span_id,omitempty"`
}

// NewOTelRecord flattens lr with the attributes of its resource and scope.
// res is the resource's attributes as a raw map (pcommon.Map.AsRaw), passed
// in so a caller converting many records of one resource builds it once.
func NewOTelRecord(res map[string]any, scope pcommon.InstrumentationScope, lr plog.LogRecord) OTelRecord {
	r := OTelRecord{
		Resource:       res,
		Attributes:     lr.Attributes().AsRaw(),
		EventName:      lr.EventName(),
		SeverityText:   lr.SeverityText(),
		SeverityNumber: int32(lr.SeverityNumber()),
		Time:           uint64(lr.Timestamp()),
		ObservedTime:   uint64(lr.ObservedTimestamp()),
	}
	if r.Resource == nil {
		r.Resource = map[string]any{}
	}
	if n, v := scope.Name(), scope.Version(); n != "" || v != "" {
		r.Scope = Data("name", n, "version", v)
	}
	if lr.Body().Type() != pcommon.ValueTypeEmpty {
		r.Body = lr.Body().AsRaw()
	}
	if id := lr.TraceID(); !id.IsEmpty() {
		r.TraceID = hex.EncodeToString(id[:])
	}
	if id := lr.SpanID(); !id.IsEmpty() {
		r.SpanID = hex.EncodeToString(id[:])
	}
	return r
}

// OTelRecords flattens every LogRecord of ld, in order, into the JSON record
// shape of OTelRecord.
func OTelRecords(ld plog.Logs) [][]byte {
	var out [][]byte
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes().AsRaw()
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			sl := sls.At(j)
			lrs := sl.LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				b, err := json.Marshal(NewOTelRecord(res, sl.Scope(), lrs.At(k)))
				if err != nil {
					continue // unreachable: every AsRaw value encodes
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// SplitOTLPJSON is the Split of the OTLP-channel tables: a line holding an
// OTLP/JSON ExportLogsServiceRequest (a top-level "resourceLogs") becomes one
// flattened record per LogRecord; any other line is taken as one record
// already flattened. A request that does not decode is returned as is, for
// Map to report.
func SplitOTLPJSON(raw []byte) [][]byte {
	if !isExportRequest(raw) {
		return [][]byte{raw}
	}
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	if err != nil {
		return [][]byte{raw}
	}
	return OTelRecords(ld)
}

// isExportRequest reports whether raw is a JSON object with a top-level
// "resourceLogs" (or proto-name "resource_logs") member.
func isExportRequest(raw []byte) bool {
	var probe struct {
		RL  json.RawMessage `json:"resourceLogs"`
		RL2 json.RawMessage `json:"resource_logs"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	return probe.RL != nil || probe.RL2 != nil
}

// ErrOTelRecord is wrapped by every error of the OTLP-channel tables: the
// moment is not a record they can read. Retrying the same input cannot
// succeed, so a receiver rejects such a record rather than asking for a
// retry.
var ErrOTelRecord = errors.New("unreadable OTel record")

// errExportRequest is Map's answer to an unsplit export request.
var errExportRequest = fmt.Errorf("%w: a whole OTLP ExportLogsServiceRequest; split it into records first (Vendor.Split)", ErrOTelRecord)

// otelRec is a parsed OTelRecord with numbers as int64 or float64.
type otelRec struct {
	Resource   map[string]any
	Attributes map[string]any
	Body       any
	EventName  string
}

// parseOTelRecord decodes a flattened record, keeping integers exact.
func parseOTelRecord(raw []byte) (otelRec, error) {
	var r struct {
		Resource   map[string]any `json:"resource"`
		Attributes map[string]any `json:"attributes"`
		Body       any            `json:"body"`
		EventName  string         `json:"event_name"`
		RL         any            `json:"resourceLogs"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return otelRec{}, fmt.Errorf("%w: %w", ErrOTelRecord, err)
	}
	if r.RL != nil {
		return otelRec{}, errExportRequest
	}
	rec := otelRec{EventName: r.EventName, Body: numbers(r.Body)}
	rec.Resource, _ = numbers(r.Resource).(map[string]any)
	rec.Attributes, _ = numbers(r.Attributes).(map[string]any)
	if rec.Resource == nil {
		rec.Resource = map[string]any{}
	}
	if rec.Attributes == nil {
		rec.Attributes = map[string]any{}
	}
	return rec, nil
}

// numbers replaces every json.Number in v by an int64 (integral) or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
		return x
	}
	return v
}

// name is the record's event name: the event.name attribute (the vendors'
// convention) or the LogRecord's own event_name field.
func (r otelRec) name() string {
	if s, ok := r.Attributes["event.name"].(string); ok && s != "" {
		return s
	}
	return r.EventName
}

// attrStr returns a string attribute of m, "" when absent or not a string.
func attrStr(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// attrBool reads a boolean attribute that may arrive as a bool or as the
// strings "true"/"false" (Codex stringifies its attributes).
func attrBool(v any) (b, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	}
	return false, false
}

// attrNumber reads a numeric attribute that may arrive as a number or as a
// decimal string ("412"), normalized to int64 when integral; ok is false for
// anything else.
func attrNumber(v any) (any, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
		return x, true
	case string:
		s := strings.TrimSpace(x)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return attrNumber(f)
		}
	}
	return nil, false
}

// vendorRedactedMarker is what a vendor exports in place of content it did
// not export (Codex's prompt without otel.log_user_prompt).
const vendorRedactedMarker = "[REDACTED]"

// otelProfile is one vendor's OTLP-channel table: the seams the design
// record names (identity, the known event set and its namespace, the primary
// core subset) plus the capture levels of the attributes it carries.
type otelProfile struct {
	// prefix is the type namespace, "x.{agent}.otel.".
	prefix string
	// known maps an event name to its type suffix under prefix.
	known map[string]string
	// identity lists attributes that are envelope identity, never data.
	identity map[string]bool
	// levels declares attribute capture levels; undeclared ones are full.
	levels map[string]redact.Level
	// primary returns the core drafts of a record in primary mode; handled
	// false keeps the companion draft (the record stays vendor-namespaced).
	primary func(r otelRec, name string) (drafts []Draft, handled bool)
}

// mapRecord is the Map both OTLP-channel tables run.
func (p *otelProfile) mapRecord(m Moment) ([]Draft, error) {
	r, err := parseOTelRecord(m.Raw)
	if err != nil {
		return nil, err
	}
	name := r.name()
	suffix, known := p.known[name]
	if !known {
		return []Draft{p.unknown(r, name)}, nil
	}
	if m.Mode == Primary && p.primary != nil {
		if ds, handled := p.primary(r, name); handled {
			return ds, nil
		}
	}
	return []Draft{p.companion(r, suffix)}, nil
}

// companion is the channel-visible x.{agent}.otel.* draft of a known record:
// every non-identity attribute, gated by its declared level.
func (p *otelProfile) companion(r otelRec, suffix string) Draft {
	data := make(map[string]any, len(r.Attributes)+2)
	levels := make(map[string]redact.Level, len(r.Attributes)+2)
	for k, v := range r.Attributes {
		if p.identity[k] || v == nil {
			continue
		}
		if s, ok := v.(string); ok && s == vendorRedactedMarker {
			continue // the vendor did not export this content
		}
		data[k] = v
		if l, ok := p.levels[k]; ok {
			levels[k] = l
		}
	}
	if h := attrStr(r.Resource, "host.name"); h != "" {
		if _, dup := data["host.name"]; !dup {
			data["host.name"] = h
		}
		levels["host.name"] = redact.Redacted
	}
	if r.Body != nil {
		if _, dup := data["body"]; !dup {
			data["body"] = r.Body
			levels["body"] = redact.Full
		}
	}
	return Draft{Type: p.prefix + suffix, Data: data, Levels: levels}
}

// unknown is the pinned rule for foreign or future records: the event name
// at metadata, every other non-identity attribute at full, never guessed at.
func (p *otelProfile) unknown(r otelRec, name string) Draft {
	data := map[string]any{}
	for k, v := range r.Attributes {
		if p.identity[k] || v == nil {
			continue
		}
		data[k] = v
	}
	if name != "" {
		data["event.name"] = name
	}
	return Draft{Type: p.prefix + "unknown", Data: data, Levels: map[string]redact.Level{"event.name": redact.Metadata}}
}

// otelToolRef is the tool_ref of a record from its name and call-id
// attributes.
func otelToolRef(r otelRec, nameKey, callKey string) map[string]any {
	return ToolRef(attrStr(r.Attributes, nameKey), attrStr(r.Attributes, callKey))
}

// otelSessionStarted is the primary session.started draft shared by both
// profiles: the client name and the requested model, nothing else.
func otelSessionStarted(client, model string) Draft {
	return Draft{Type: "session.started", Data: Data(
		"client", map[string]any{"name": client},
		"gen_ai.request.model", model,
	)}
}

// otelFailed reads a tool outcome: the success flag when present (bool or
// "true"/"false"), else failed when an error attribute is present.
func otelFailed(a map[string]any, successKey, errorKey string) bool {
	if ok, valid := attrBool(a[successKey]); valid {
		return !ok
	}
	_, hasErr := a[errorKey]
	return hasErr
}

// otelIdentify is the Identify of the OTLP-channel tables, read without a
// full decode: the event name, and the session from key in the first
// section ("attributes" or "resource"), else in the second.
func otelIdentify(raw []byte, first, second, key string) (hook, session string) {
	k := strings.ReplaceAll(key, ".", `\.`)
	res := gjson.GetManyBytes(raw, first+"."+k, second+"."+k, `attributes.event\.name`, "event_name")
	for _, r := range res[:2] {
		if r.Type == gjson.String && r.Str != "" {
			session = r.Str
			break
		}
	}
	hook = res[2].Str
	if res[2].Type != gjson.String || hook == "" {
		hook = res[3].Str
	}
	return hook, session
}
