package mapping

import (
	"strconv"
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/tidwall/gjson"
)

// This file holds the small readers the Cline, Hermes and Antigravity tables
// share: exact integers, booleans and envelope steps from vendor JSON, the
// dotted vendor fallback type, and digests of content at a path.

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

// extDigest returns the AEP-0003 §9.3 digest of the JSON at path, "" when
// the path is absent or null (nothing to digest).
func extDigest(raw []byte, path string) string {
	r := gjson.GetBytes(raw, path)
	if !r.Exists() || r.Type == gjson.Null {
		return ""
	}
	return redact.DigestJSON([]byte(r.Raw))
}

// extValue is [Value] that also treats JSON null as absent.
func extValue(raw []byte, path string) any {
	r := gjson.GetBytes(raw, path)
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	return r.Value()
}

// extDottedType is the fallback type of vendors whose snake_case moment
// names split into type segments: "some_future_hook" becomes
// x.{vendor}.some.future.hook. A one-word name gets the "hook" category so
// the type keeps the two segments the envelope schema requires after the
// vendor token.
func extDottedType(vendor, name string) string {
	var segs []string
	for _, s := range strings.Split(SnakeCase(name), "_") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) < 2 {
		segs = append([]string{"hook"}, segs...)
	}
	return "x." + vendor + "." + strings.Join(segs, ".")
}

// extLevels declares every named field of a payload at one capture level.
func extLevels(l redact.Level, fields ...string) map[string]redact.Level {
	m := make(map[string]redact.Level, len(fields))
	for _, f := range fields {
		m[f] = l
	}
	return m
}
