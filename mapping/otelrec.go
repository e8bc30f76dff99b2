package mapping

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/redact"
)

// This file holds what the OTLP-channel tables (codexotel.go,
// vscodeotel.go) share: the decoded record the OTLP receiver hands them
// (OTelRecord, in Facts.Record), and the one mapping routine both vendor
// profiles run. Turning pdata or OTLP/JSON into records is the receiver's
// job (adapters/otlp); nothing here decodes.

// OTelRecord is one OTLP LogRecord flattened with its resource and scope:
// the Facts.Record of TransportOTLP moments. Attribute values keep their
// OTLP types as Go values (string, int64, float64, bool, []any,
// map[string]any; bytes as base64 strings). The JSON form (the pins'
// "input", the map verb's flattened records) is the struct's encoding.
// Resource may be shared by every record of one resource: tables read it,
// never write it.
//
// The attributes are in Attributes or, as the receiver decodes them, in
// Flat: a record read off the wire hands its attributes over as they came
// instead of building a map the tables would only read a few keys of and
// copy the rest from. Tables read them through Attr and the unexported
// view, which see either form.
type OTelRecord struct {
	Resource   map[string]any `json:"resource"`
	Scope      map[string]any `json:"scope,omitempty"`
	Attributes map[string]any `json:"attributes"`
	// Flat, when not nil, holds the attributes instead of Attributes
	// (then nil): one entry per key, in the order they were decoded.
	Flat           []Attr `json:"-"`
	Body           any    `json:"body,omitempty"`
	EventName      string `json:"event_name,omitempty"`
	SeverityText   string `json:"severity_text,omitempty"`
	SeverityNumber int32  `json:"severity_number,omitempty"`
	Time           uint64 `json:"time_unix_nano,omitempty"`
	ObservedTime   uint64 `json:"observed_time_unix_nano,omitempty"`
	TraceID        string `json:"trace_id,omitempty"`
	SpanID         string `json:"span_id,omitempty"`
}

// Attr is one attribute of a record, as OTelRecord.Flat holds them.
type Attr struct {
	Key   string
	Value any
}

// Attr returns the attribute key, nil when the record has none.
func (r *OTelRecord) Attr(key string) any {
	v, _ := r.attrs().get(key)
	return v
}

// AttrMap returns the attributes as a map: Attributes, or a new map of
// Flat's entries.
func (r *OTelRecord) AttrMap() map[string]any {
	if r.Flat == nil {
		return r.Attributes
	}
	m := make(map[string]any, len(r.Flat))
	for _, a := range r.Flat {
		m[a.Key] = a.Value
	}
	return m
}

// MarshalJSON encodes the record in its JSON form, the attributes under
// "attributes" whichever form holds them.
func (r OTelRecord) MarshalJSON() ([]byte, error) {
	type plain OTelRecord // the same fields, without this method
	p := plain(r)
	if p.Flat != nil {
		p.Attributes, p.Flat = r.AttrMap(), nil
	}
	return json.Marshal(p)
}

// attrView reads a record's attributes, whichever form holds them.
type attrView struct {
	flat []Attr
	m    map[string]any
}

func (r *OTelRecord) attrs() attrView { return attrView{r.Flat, r.Attributes} }

// get returns the attribute key and whether the record has it.
func (a attrView) get(key string) (any, bool) {
	if a.flat == nil {
		v, ok := a.m[key]
		return v, ok
	}
	for i := range a.flat {
		if a.flat[i].Key == key {
			return a.flat[i].Value, true
		}
	}
	return nil, false
}

// val is the attribute key, nil when absent.
func (a attrView) val(key string) any {
	v, _ := a.get(key)
	return v
}

// str is the string attribute key, "" when absent or not a string.
func (a attrView) str(key string) string {
	s, _ := a.val(key).(string)
	return s
}

// has reports whether the record has the attribute key.
func (a attrView) has(key string) bool {
	_, ok := a.get(key)
	return ok
}

// len is the number of attributes.
func (a attrView) len() int {
	if a.flat == nil {
		return len(a.m)
	}
	return len(a.flat)
}

// each calls fn with every attribute, in no particular order.
func (a attrView) each(fn func(k string, v any)) {
	if a.flat == nil {
		for k, v := range a.m {
			fn(k, v)
		}
		return
	}
	for i := range a.flat {
		fn(a.flat[i].Key, a.flat[i].Value)
	}
}

// ErrOTelRecord is wrapped by every error of the OTLP-channel tables and of
// the decoders that build their records: the moment is not a record they
// can read. Retrying the same input cannot succeed, so a receiver rejects
// such a record rather than asking for a retry.
var ErrOTelRecord = errors.New("unreadable OTel record")

// otelRecord returns the moment's decoded record.
func otelRecord(m Moment) (*OTelRecord, error) {
	r, ok := m.Facts.Record.(*OTelRecord)
	if !ok || r == nil {
		return nil, fmt.Errorf("%w: the moment carries no decoded record (Facts.Record)", ErrOTelRecord)
	}
	return r, nil
}

// name is the record's event name: the event.name attribute (the vendors'
// convention) or the LogRecord's own event_name field.
func (r *OTelRecord) name() string {
	if s := r.attrs().str("event.name"); s != "" {
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
	// It never declares "body" (a record's body is full).
	levels map[string]redact.Level
	// hostLevels is levels with host.name redacted (withHost).
	hostOnce   sync.Once
	hostLevels map[string]redact.Level
	// types are the companion types by suffix (typeName), built once.
	typesOnce sync.Once
	types     map[string]string
	// idLens has bit n set when an identity attribute's name is n bytes
	// long (63 standing for any longer): most attributes are told from
	// identity by their length alone, without a lookup (isIdentity).
	idOnce sync.Once
	idLens uint64
	// attrs is identity and levels in one table (attrFate), built once:
	// an attribute's fate in a companion takes one lookup, not two.
	attrsOnce sync.Once
	attrs     map[string]attrFate
	// primary returns the core drafts of a record in primary mode; handled
	// false keeps the companion draft (the record stays vendor-namespaced).
	primary func(r *OTelRecord, name string) (drafts []Draft, handled bool)
}

// mapRecord is the Map both OTLP-channel tables run. Every event it drafts
// happened when the record says (recordTime), not when the sidecar got it.
func (p *otelProfile) mapRecord(m Moment) ([]Draft, error) {
	r, err := otelRecord(m)
	if err != nil {
		return nil, err
	}
	ds := p.draftRecord(m, r)
	if at := r.recordTime(); !at.IsZero() {
		for i := range ds {
			ds[i].Time = at
		}
	}
	return ds, nil
}

func (p *otelProfile) draftRecord(m Moment, r *OTelRecord) []Draft {
	name := r.name()
	suffix, known := p.known[name]
	if !known {
		return []Draft{p.unknown(r, name)}
	}
	if m.Mode == Primary && p.primary != nil {
		if ds, handled := p.primary(r, name); handled {
			return ds
		}
	}
	return m.Arena.one(p.companion(r, suffix, m.Arena))
}

// recordTime is when the record's moment happened: the LogRecord's
// timestamp, else its event.timestamp attribute (RFC 3339, Codex's), else
// the time the exporter observed it; zero when the record states none.
func (r *OTelRecord) recordTime() time.Time {
	if r.Time > 0 && r.Time <= math.MaxInt64 {
		return time.Unix(0, int64(r.Time))
	}
	if s := r.attrs().str("event.timestamp"); s != "" {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	if r.ObservedTime > 0 && r.ObservedTime <= math.MaxInt64 {
		return time.Unix(0, int64(r.ObservedTime))
	}
	return time.Time{}
}

// companion is the channel-visible x.{agent}.otel.* draft of a known record:
// every non-identity attribute, gated by its declared level. Its payload
// is a list (Draft.Fields): the attributes come as one, and the emitter
// gates and encodes them from it without a map per record.
// Its fields are cut from the arena a, or allocated when a is nil.
func (p *otelProfile) companion(r *OTelRecord, suffix string, a *Arena) Draft {
	at := r.attrs()
	// The declared levels of every key the payload can hold: an attribute's
	// own, the resource's host.name at redacted, the body at full
	// (undeclared).
	levels := p.levels
	host := r.Resource["host.name"]
	if isNonEmptyString(host) {
		levels = p.withHost()
	} else {
		host = nil
	}
	if at.flat != nil {
		return Draft{Type: p.typeName(suffix), Fields: p.listFields(a.fieldRoom(len(at.flat)+2), at.flat, host, r.Body, a), Levels: levels}
	}
	fs := a.fieldRoom(len(at.m) + 2)
	for k, v := range at.m {
		if v == nil || p.isIdentity(k) {
			continue
		}
		if s, ok := v.(string); ok && s == vendorRedactedMarker {
			continue // the vendor did not export this content
		}
		fs = append(fs, redact.Field{Key: k, Value: v, Level: levelOf(levels, k)})
	}
	if host != nil && !hasField(fs, "host.name") {
		fs = append(fs, redact.Field{Key: "host.name", Value: host, Level: levelOf(levels, "host.name")})
	}
	if r.Body != nil && !hasField(fs, "body") {
		fs = append(fs, redact.Field{Key: "body", Value: r.Body, Level: levelOf(levels, "body")})
	}
	return Draft{Type: p.typeName(suffix), Fields: fs, Levels: levels}
}

// listFields is companion's payload for a record's attributes as decoded
// (flat), the resource's host name and the body (nil when absent), in the
// attributes' order: the encoder sorts what the gate keeps. The levels are
// the profile's, host.name's redacted when the resource names the host
// (withHost). The fields are appended to fs; a (nil: none) remembers the
// keys' fates for the batch.
func (p *otelProfile) listFields(fs []redact.Field, flat []Attr, host, body any, a *Arena) []redact.Field {
	named := host != nil
	for i := range flat {
		k, v := flat[i].Key, flat[i].Value
		fate := a.fate(p, k)
		if v == nil || fate.identity() {
			continue
		}
		if s, ok := v.(string); ok && s == vendorRedactedMarker {
			continue // the vendor did not export this content
		}
		switch k {
		case "host.name":
			host = nil // the attribute's own, not the resource's
		case "body":
			body = nil
		}
		l := fate.level()
		if named && k == "host.name" {
			l = redact.Redacted
		}
		fs = append(fs, redact.Field{Key: k, Value: v, Level: l})
	}
	if host != nil {
		fs = append(fs, redact.Field{Key: "host.name", Value: host, Level: redact.Redacted})
	}
	if body != nil {
		fs = append(fs, redact.Field{Key: "body", Value: body, Level: p.attrFate("body").level()})
	}
	return fs
}

// attrFate is what a profile declares of one attribute: whether it is
// identity, and its level (Full when undeclared).
type attrFate uint8

const (
	fateIdentity attrFate = 1 << 7
	fateDeclared attrFate = 1 << 6
	fateLevel    attrFate = fateDeclared - 1
)

func (f attrFate) identity() bool { return f&fateIdentity != 0 }

func (f attrFate) level() redact.Level {
	if f&fateDeclared == 0 {
		return redact.Full
	}
	return redact.Level(f & fateLevel)
}

// attrFate returns what the profile declares of attribute k.
func (p *otelProfile) attrFate(k string) attrFate {
	p.attrsOnce.Do(func() {
		p.attrs = make(map[string]attrFate, len(p.identity)+len(p.levels))
		for k, l := range p.levels {
			p.attrs[k] = fateDeclared | attrFate(l)&fateLevel
		}
		for k, id := range p.identity {
			if id {
				p.attrs[k] |= fateIdentity
			}
		}
	})
	return p.attrs[k]
}

// levelOf is the level levels declares for key, Full when it declares none
// (an undeclared field of an x.* payload counts as full).
func levelOf(levels map[string]redact.Level, key string) redact.Level {
	if l, ok := levels[key]; ok {
		return l
	}
	return redact.Full
}

// hasField reports whether fs holds key.
func hasField(fs []redact.Field, key string) bool {
	for i := range fs {
		if fs[i].Key == key {
			return true
		}
	}
	return false
}

// setField sets key to v at level l in fs, replacing an entry of that key
// as a map assignment would.
func setField(fs []redact.Field, key string, v any, l redact.Level) []redact.Field {
	for i := range fs {
		if fs[i].Key == key {
			fs[i] = redact.Field{Key: key, Value: v, Level: l}
			return fs
		}
	}
	return append(fs, redact.Field{Key: key, Value: v, Level: l})
}

// isIdentity reports whether the attribute k is envelope identity (the
// profile's identity set).
func (p *otelProfile) isIdentity(k string) bool {
	p.idOnce.Do(func() {
		for id := range p.identity {
			p.idLens |= 1 << min(len(id), 63)
		}
	})
	if p.idLens&(1<<min(len(k), 63)) == 0 {
		return false
	}
	return p.identity[k]
}

// isNonEmptyString reports whether v is a string other than "".
func isNonEmptyString(v any) bool {
	s, _ := v.(string)
	return s != ""
}

// typeName is the type of a known record's companion event, prefix and
// suffix joined once per profile rather than once per record.
func (p *otelProfile) typeName(suffix string) string {
	p.typesOnce.Do(func() {
		p.types = make(map[string]string, len(p.known))
		for _, sfx := range p.known {
			p.types[sfx] = p.prefix + sfx
		}
	})
	if t, ok := p.types[suffix]; ok {
		return t
	}
	return p.prefix + suffix
}

// withHost is the profile's levels with host.name at redacted: the levels
// of a record whose resource names its host. It is built once and shared,
// read-only, by every draft.
func (p *otelProfile) withHost() map[string]redact.Level {
	p.hostOnce.Do(func() {
		p.hostLevels = make(map[string]redact.Level, len(p.levels)+1)
		for k, l := range p.levels {
			p.hostLevels[k] = l
		}
		p.hostLevels["host.name"] = redact.Redacted
	})
	return p.hostLevels
}

// unknown is the pinned rule for foreign or future records: the event name
// at metadata, every other non-identity attribute at full, never guessed at.
func (p *otelProfile) unknown(r *OTelRecord, name string) Draft {
	data := map[string]any{}
	r.attrs().each(func(k string, v any) {
		if p.identity[k] || v == nil {
			return
		}
		data[k] = v
	})
	if name != "" {
		data["event.name"] = name
	}
	return Draft{Type: p.prefix + "unknown", Data: data, Levels: map[string]redact.Level{"event.name": redact.Metadata}}
}

// otelToolRef is the tool_ref of a record from its name and call-id
// attributes.
func otelToolRef(r *OTelRecord, nameKey, callKey string) map[string]any {
	a := r.attrs()
	return ToolRef(a.str(nameKey), a.str(callKey))
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
func otelFailed(a attrView, successKey, errorKey string) bool {
	if ok, valid := attrBool(a.val(successKey)); valid {
		return !ok
	}
	return a.has(errorKey)
}

// otelIdentify is the Identify of the OTLP-channel tables: the event name,
// and the session from the string attribute key in the first section
// (attributes or resource), else in the second.
func otelIdentify(m Moment, key string, resourceFirst bool) (hook, session string) {
	r, err := otelRecord(m)
	if err != nil {
		return "", ""
	}
	// The second section is read only when the first has no session: for
	// a Codex record, no lookup in the resource's map.
	var s string
	if resourceFirst {
		if s = attrStr(r.Resource, key); s == "" {
			s = r.attrs().str(key)
		}
	} else if s = r.attrs().str(key); s == "" {
		s = attrStr(r.Resource, key)
	}
	return r.name(), s
}
