package mapping

import (
	"strings"

	"github.com/aep-hook/aep-hook/redact"
)

// This file holds what the stream tables share (the ACP and AG-UI tees,
// the bridges and plugin forwarders): the vendor-plane type built from a
// wire name's segments, the declared levels of a token-delta payload, and
// the identity a transport resolved.

// debug is the severity of the tee tables' vendor-plane events (machinery,
// intermediate updates, opted-in deltas).
const debug = "debug"

// vendorEventType joins the non-empty segments into x.{vendor}.{segs...};
// a single segment gains the mechanical ".event" leaf, because the envelope's
// extension pattern needs two segments after the vendor token. No segment
// at all gives x.{vendor}.unknown.event.
func vendorEventType(vendor string, segs ...string) string {
	var keep []string
	for _, s := range segs {
		if s = strings.Trim(s, "_"); s != "" {
			keep = append(keep, s)
		}
	}
	switch len(keep) {
	case 0:
		keep = []string{"unknown", "event"}
	case 1:
		keep = append(keep, "event")
	}
	return "x." + vendor + "." + strings.Join(keep, ".")
}

// wireSegments splits a wire name ("fs/read_text_file",
// "current_mode_update") into lower-case type segments at every '/', '_'
// and case change, each one a legal type token.
func wireSegments(name string) []string {
	var out []string
	for _, part := range strings.Split(name, "/") {
		if part == "" {
			continue
		}
		for _, s := range strings.Split(SnakeCase(part), "_") {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// deltaLevels declares a token-delta payload's text. Deltas ride only
// behind the explicit --deltas opt-in, which is the operator's consent to
// the text; at the default posture they are never emitted at all.
func deltaLevels(l redact.Level) map[string]redact.Level {
	return map[string]redact.Level{"delta": l}
}

// identifyFacts is the Identify of stream tables whose transport resolves
// both: the moment's name is its wire name (Facts.Name), its session the
// one the transport resolved (Facts.Session), the unknown lane when none.
func identifyFacts(m Moment) (string, string) {
	s := m.Facts.Session
	if s == "" {
		s = UnknownSession
	}
	return m.Facts.Name, s
}
