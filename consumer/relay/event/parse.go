package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/shim"
)

// Invalid is an admission refusal: the rule the event breaks and how.
// Detail names attributes, never their content.
type Invalid struct {
	Rule   string // e.g. "AEP-0001 §5.2"
	Detail string
}

func (e *Invalid) Error() string { return e.Detail + " [" + e.Rule + "]" }

func bad(rule, format string, a ...any) *Invalid {
	return &Invalid{Rule: rule, Detail: fmt.Sprintf(format, a...)}
}

// core is every core attribute name (AEP-0001 §5.1).
var core = map[string]bool{"aep": true, "id": true, "type": true, "subject": true, "time": true,
	"source": true, "agent": true, "session": true, "run": true, "step": true, "seq": true,
	"epoch": true, "cause": true, "traceparent": true, "severity": true, "capture": true, "data": true}

var severities = map[string]bool{"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true}

var captures = map[string]bool{"none": true, "metadata": true, "redacted": true, "full": true}

// Parse admits one event: the envelope rules of AEP-0001 (§5 shape, §5.1
// attribute types, §5.2 scope, §5.4 extensions, §6 type names, §8 enums)
// and AEP-0004 §2.2 for commands. It checks what routing relies on and no
// more: payload schemas and stream order are the emitter's and the
// validator's business, and a type of no registered name is carried
// (consumers tolerate unknown types, AEP-0001 §6). raw is one JSON object;
// surrounding blanks are trimmed, and an object spread over several lines
// is compacted onto one. The returned event keeps raw (or its compacted
// copy); the caller must not modify it afterwards.
func Parse(raw []byte) (*Event, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !gjson.ValidBytes(raw) {
		return nil, bad("AEP-0001 §5", "not a JSON object: an event is one JSON object")
	}
	if !utf8.Valid(raw) {
		return nil, bad("AEP-0001 §5", "not UTF-8: an event is a UTF-8 JSON object")
	}
	if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, bad("AEP-0001 §5", "not a JSON object: an event is one JSON object")
		}
		raw = b.Bytes()
	}
	e := &Event{Raw: raw}
	var (
		err                error
		seen               = make(map[string]bool, 20)
		hasSeq, hasSession bool
		hasAEP             bool
		aep, when          string
	)
	// The attributes are read from raw without a copy: the strings Parse
	// keeps (ids, names) are views of raw where they hold no escapes, so
	// an event costs its bytes once. raw is never written after this.
	gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw))).ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if seen[name] {
			err = bad("AEP-0001 §5", "attribute %s appears twice", printable(name))
			return false
		}
		seen[name] = true
		if v.Type == gjson.Null {
			err = bad("AEP-0001 §5.1", "%s is null: absent optional attributes are omitted, never null", printable(name))
			return false
		}
		switch name {
		case "aep", "id", "type", "subject", "time", "source", "agent", "session", "run", "step", "cause", "traceparent", "severity", "capture":
			if v.Type != gjson.String || v.Str == "" {
				err = bad("AEP-0001 §5.1", "%s must be a non-empty string", name)
				return false
			}
			switch name {
			case "aep":
				hasAEP, aep = true, v.Str
			case "id":
				e.ID = v.Str
			case "type":
				e.Type = v.Str
			case "subject":
				e.Subject = v.Str
			case "time":
				when = v.Str
			case "source":
				e.Source = v.Str
			case "agent":
				e.Agent = v.Str
			case "session":
				e.Session, hasSession = v.Str, true
			case "run":
				e.Run = v.Str
			case "step":
				e.Step = v.Str
			case "cause":
				e.Cause = v.Str
			case "traceparent":
				if !traceparent(v.Str) {
					err = bad("AEP-0001 §5.1", "traceparent is not a W3C Trace Context value")
				}
			case "severity":
				e.Severity = v.Str
				if !severities[v.Str] {
					err = bad("AEP-0001 §8.1", "severity is not one of debug, info, notice, warning, error, critical")
				}
			case "capture":
				e.Capture = v.Str
				if !captures[v.Str] {
					err = bad("AEP-0001 §8.2", "capture is not one of none, metadata, redacted, full")
				}
			}
		case "seq", "epoch":
			n, ok := nonNegInt(v)
			if !ok {
				err = bad("AEP-0001 §5.1", "%s must be an integer >= 0", name)
				return false
			}
			if name == "seq" {
				e.Pos.Seq, hasSeq = n, true
			} else {
				e.Pos.Epoch, e.HasEpoch = n, true
			}
		case "data":
			if !v.IsObject() {
				err = bad("AEP-0001 §5.1", "data must be an object")
			}
		default:
			if !extName(name) {
				err = bad("AEP-0001 §5.4", "attribute %s is neither a core attribute nor a legal extension name ([a-z0-9]{1,20})", printable(name))
				return false
			}
			var val any
			switch v.Type {
			case gjson.String:
				val = v.Str
			case gjson.True, gjson.False:
				val = v.Bool()
			case gjson.Number:
				if _, ok := integer(v.Raw); !ok {
					err = bad("AEP-0001 §5.4", "extension attribute %s must be a string, an integer or a boolean", name)
					return false
				}
				val = json.Number(v.Raw)
			default:
				err = bad("AEP-0001 §5.4", "extension attribute %s must be a string, an integer or a boolean", name)
				return false
			}
			if name == "tenant" {
				s, ok := val.(string)
				if !ok {
					err = bad("AEP-0001 §5.4", "tenant must be a string")
					return false
				}
				if terr := shim.ValidTenant(s); terr != nil {
					err = bad("AEP-0001 §5.4", "tenant: %v", terr)
					return false
				}
				e.Tenant = s
			}
			e.Ext = append(e.Ext, Ext{Name: name, Value: val})
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	for _, k := range [...]string{"aep", "id", "type", "time", "source", "agent"} {
		if !seen[k] {
			return nil, bad("AEP-0001 §5.1", "missing required attribute %s", k)
		}
	}
	if hasAEP && aep != Version {
		return nil, bad("AEP-0003 §3.1", "aep is not %q, the version this relay speaks", Version)
	}
	if !typeName(e.Type) {
		return nil, bad("AEP-0001 §6", "type must be lowercase {category}.{rest} tokens of [a-z0-9_], or x.{vendor}.{category}.{rest}")
	}
	if t, terr := time.Parse(time.RFC3339Nano, when); terr != nil || t.IsZero() {
		return nil, bad("AEP-0001 §5.1", "time is not an RFC 3339 timestamp with a timezone")
	}
	if u, uerr := url.Parse(e.Source); uerr != nil || u.Scheme == "" {
		return nil, bad("AEP-0001 §5.1", "source is not a URI")
	}
	switch cat := category(e.Type); {
	case cat == "agent":
		for _, k := range [...]string{"session", "run", "step", "seq"} {
			if seen[k] {
				return nil, bad("AEP-0001 §5.2", "agent-scoped events omit session, run, step and seq; this one carries %s", k)
			}
		}
	case IsCommand(e.Type):
		if !hasSession || hasSeq {
			return nil, bad("AEP-0004 §2.2", "a command carries the target session and omits seq")
		}
	case e.Type == "attention.routed":
		if !hasSession || hasSeq {
			return nil, bad("AEP-0002 §7.3", "attention.routed carries session and omits seq (a foreign emitter)")
		}
	case cat == "x":
		if hasSeq && !hasSession {
			return nil, bad("AEP-0001 §5.2", "an event with a seq carries its session")
		}
	default:
		if !hasSession || !hasSeq {
			return nil, bad("AEP-0001 §5.2", "session-scoped events carry session and seq")
		}
	}
	e.Sequenced = hasSession && hasSeq
	return e, nil
}

// nonNegInt reads a JSON integer >= 0 written as plain digits.
func nonNegInt(v gjson.Result) (int64, bool) {
	if v.Type != gjson.Number {
		return 0, false
	}
	n, ok := integer(v.Raw)
	return n, ok && n >= 0
}

// integer parses a JSON number that is an integer in plain form (-?digits).
func integer(s string) (int64, bool) {
	if s == "" || s == "-" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c == '-' && i == 0) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func extName(k string) bool {
	if len(k) == 0 || len(k) > 20 || core[k] {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// typeName checks {category}.{rest} ([a-z0-9_] tokens, at least two) and
// x.{vendor}.{category}.{rest} (the vendor token may hold '-').
func typeName(t string) bool {
	tokens := 0
	start := 0
	vendor := len(t) > 2 && t[:2] == "x."
	for i := 0; i <= len(t); i++ {
		if i < len(t) && t[i] != '.' {
			c := t[i]
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' && vendor && tokens == 1
			if !ok {
				return false
			}
			continue
		}
		if i == start {
			return false // an empty token
		}
		tokens++
		start = i + 1
	}
	if vendor {
		return tokens >= 4
	}
	return tokens >= 2
}

// traceparent checks the W3C shape: 2-32-16-2 lowercase hex fields.
func traceparent(s string) bool {
	if len(s) != 55 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 2 || i == 35 || i == 52 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// printable keeps an attribute name short and free of control bytes for a
// refusal message.
func printable(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
