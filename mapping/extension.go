package mapping

import (
	"strings"

	"github.com/aep-hook/aep-hook/redact"
)

// This file holds the x.* vendor-extension helpers every table shares: the
// mechanical fallback for a moment with no core mapping, the dotted variant
// of vendors whose moment names split into type segments, and extension
// events with declared field levels (an undeclared field of an x.* payload
// counts as full and is dropped at the default ceiling).

// fallback is the vendor's mechanical extension event for a moment with no
// core mapping: x.{vendor}.session.{snake_case(hook)} with an empty payload
// (nothing of an unknown payload is known to be metadata-safe).
func fallback(vendor, hook string) Draft {
	return Draft{Type: Fallback(vendor, "session", hook), Data: map[string]any{}}
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

// extField names one top-level field an x.* event carries and its level.
type extField struct {
	name  string
	level redact.Level
}

// extensionEvent is the mechanical x.{agent}.session.{snake} event of a
// documented hook without a core mapping, carrying the named payload fields
// with their declared levels (metadata for structural tokens, redacted for
// paths and labels).
func extensionEvent(agent, hook string, raw []byte, fields ...extField) Draft {
	d := Draft{Type: Fallback(agent, "session", hook), Data: map[string]any{}}
	for _, f := range fields {
		v := Value(raw, f.name)
		if v == nil {
			continue
		}
		d.Data[f.name] = v
		if d.Levels == nil {
			d.Levels = map[string]redact.Level{}
		}
		d.Levels[f.name] = f.level
	}
	return d
}
