package mapping

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/aep-hook/aep-hook/internal/jsonbound"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// SnakeCase turns a vendor moment name into an AEP type token:
// "SomeFutureHook" → "some_future_hook", "after-tool" → "after_tool".
// Anything outside [a-z0-9_] becomes "_", so the result is always a legal
// type segment (AEP-0001 §6); an empty name gives "unknown".
func SnakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			if i > 0 && b.Len() > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
			fallthrough
		default:
			if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
				b.WriteRune(r)
			} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "unknown"
	}
	return s
}

// Fallback is the mechanical vendor-extension type for a moment with no core
// mapping: x.{vendor}.{category}.{snake_case(name)} (AEP-0001 §6).
func Fallback(vendor, category, name string) string {
	return "x." + vendor + "." + category + "." + SnakeCase(name)
}

// HookField returns the moment's name: m.Hook when the transport gave one,
// else the payload's field (e.g. "hook_event_name").
func HookField(m Moment, field string) string {
	if m.Hook != "" {
		return m.Hook
	}
	return gjson.GetBytes(m.Raw, field).String()
}

// Str returns the string at path in raw, "" when absent or not a string.
func Str(raw []byte, path string) string {
	return StrOf(gjson.GetBytes(raw, path))
}

// StrOf is r's content when r is a JSON string, "" for anything else.
func StrOf(r gjson.Result) string {
	if r.Type != gjson.String {
		return ""
	}
	return r.Str
}

// Value returns the decoded JSON value at path (nil when absent), with
// numbers as json.Number-free float64/int per gjson; use for content fields
// that the gate will digest or drop. A value the hook runner bounded (part
// of it too big or too deep to keep) is nil too: the event keeps its digest
// and drops the content rather than show part of it.
func Value(raw []byte, path string) any {
	r := gjson.GetBytes(raw, path)
	if !r.Exists() || jsonbound.Omits([]byte(r.Raw)) {
		return nil
	}
	return r.Value()
}

// Raw returns the raw JSON at path, nil when absent.
func Raw(raw []byte, path string) []byte {
	r := gjson.GetBytes(raw, path)
	if !r.Exists() {
		return nil
	}
	return []byte(r.Raw)
}

// Data builds a payload from key/value pairs, skipping nil values and empty
// strings, so optional fields are omitted rather than null.
func Data(kv ...any) map[string]any {
	d := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		switch v := kv[i+1].(type) {
		case nil:
			continue
		case string:
			if v == "" {
				continue
			}
		case map[string]any:
			if v == nil {
				continue
			}
		}
		d[k] = kv[i+1]
	}
	return d
}

// ToolRef is the AEP tool_ref object (AEP-0002 §5.2); an empty callID is
// omitted.
func ToolRef(name, callID string) map[string]any {
	return Data("name", name, "call_id", callID)
}

// extInt returns the JSON number at path as an int64 when it is integral
// (so it encodes as the vendor spelled it), as a float64 otherwise, and nil
// when the path is absent or not a number.
func extInt(raw []byte, path string) any {
	r := gjson.GetBytes(raw, path)
	if r.Type != gjson.Number {
		return nil
	}
	if i, err := strconv.ParseInt(r.Raw, 10, 64); err == nil {
		return i
	}
	return r.Float()
}

// extBool returns the JSON boolean at path, nil when absent or not a boolean.
func extBool(raw []byte, path string) any {
	r := gjson.GetBytes(raw, path)
	if r.Type != gjson.True && r.Type != gjson.False {
		return nil
	}
	return r.Bool()
}

// extStep returns the envelope step a counter at path names: a JSON number
// or a non-empty string, spelled as a plain string; "" when absent.
func extStep(raw []byte, path string) string {
	r := gjson.GetBytes(raw, path)
	switch r.Type {
	case gjson.Number:
		if _, err := strconv.ParseInt(r.Raw, 10, 64); err == nil {
			return r.Raw
		}
		return strconv.FormatFloat(r.Float(), 'f', -1, 64)
	case gjson.String:
		return r.Str
	}
	return ""
}

// DigestMissing stands, in a draft's data, for the digest of a value that
// is there but could not be digested: the hook bounded its payload and gave
// the digest up at its deadline, or the payload was cut short. The emitter
// drops the field and names it in the event's digests_missing, so the event
// says its digest is missing rather than that there was nothing to digest.
const DigestMissing = "\x00digest missing"

// extDigest returns the AEP-0003 §9.3 digest of the JSON at path, "" when
// the path is absent or null (nothing to digest), DigestMissing when the
// value is there but its digest is not known.
func extDigest(raw []byte, path string) string {
	r := gjson.GetBytes(raw, path)
	if !r.Exists() || r.Type == gjson.Null {
		return ""
	}
	if d := redact.DigestJSON([]byte(r.Raw)); d != "" {
		return d
	}
	return DigestMissing
}

// contentText is the text of a message content: a string as it is, a list
// of parts their "text" parts joined with newlines, "" otherwise.
func contentText(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	var parts []string
	for _, p := range r.Array() {
		if p.Get("type").String() == "text" {
			parts = append(parts, p.Get("text").String())
		}
	}
	return strings.Join(parts, "\n")
}

// textDigest is the AEP-0003 §9.3 digest of the text of the message
// content at path (contentText, digested as a JSON string), "" when the
// path is absent or null.
func textDigest(raw []byte, path string) string {
	r := gjson.GetBytes(raw, path)
	if !r.Exists() || r.Type == gjson.Null {
		return ""
	}
	if r.Type != gjson.String && jsonbound.Omits([]byte(r.Raw)) {
		return DigestMissing // the text of parts left out is not there to join
	}
	return redact.Digest(contentText(r))
}
