package realagents

import (
	"github.com/aep-hook/aep-hook/harness/realagents/drift"
	"github.com/tidwall/gjson"
)

// Surface is what the fixtures show of their agent's payloads, for the
// drift report: every firing's moment and fields, every stream line's (its
// "type" or JSON-RPC "method" names the moment), and the tools offered
// where the recordings kept them.
func Surface(fxs []Fixture) *drift.Surface {
	s := drift.New()
	known := true
	for _, fx := range fxs {
		for _, f := range fx.Firings {
			s.Moment(f.Hook(), f.Input)
		}
		for _, l := range fx.Stream {
			if len(l.Data) > 0 {
				s.Moment(streamMoment(l.Data), l.Data)
			}
		}
		if fx.Tools == nil {
			known = false
		}
		s.Tool(fx.Tools...)
	}
	if !known {
		s.Tools = nil
	}
	return s
}

// streamMoment names a stream line's moment: its "type", else its
// JSON-RPC "method", else "(other)".
func streamMoment(data []byte) string {
	for _, k := range []string{"type", "method", "payload.type"} {
		if v := gjson.GetBytes(data, k).String(); v != "" {
			return v
		}
	}
	return "(other)"
}
