package pi

import "github.com/aep-hook/aep-hook/mapping"

// Held is the pi table as a one-shot held run reads it (`aep-hook forward
// pi --hold`): the hook runner hands the table the whole stdin, one
// forwarder line carrying the tool_call the extension holds, so each of
// Identify, Map and Hold decodes the line first and gives the pi table
// the event moment the forwarder would. A line that does not decode is
// identified to no session and maps to nothing (the call proceeds).
func Held(v mapping.Vendor) mapping.Vendor {
	h := v
	h.Identify = func(m mapping.Moment) (string, string) {
		d, ok := decodeHeld(m)
		if !ok {
			return "", mapping.UnknownSession
		}
		return v.Identify(d)
	}
	h.Map = func(m mapping.Moment, st *mapping.State) ([]mapping.Draft, error) {
		d, ok := decodeHeld(m)
		if !ok {
			return nil, nil
		}
		return v.Map(d, st)
	}
	h.Hold = func(m mapping.Moment, g mapping.Gate) *mapping.Hold {
		d, ok := decodeHeld(m)
		if !ok || v.Hold == nil {
			return nil
		}
		return v.Hold(d, g)
	}
	return h
}

// decodeHeld is the event moment of a held run's line, keeping what the
// runner set on the line's moment (its nonce, whether the loop holds it).
func decodeHeld(m mapping.Moment) (mapping.Moment, bool) {
	ms, err := Decode(m.Raw)
	if err != nil || len(ms) != 1 {
		return mapping.Moment{}, false
	}
	d := ms[0]
	d.Hook, d.Nonce, d.Mode, d.Deltas, d.Control = d.Facts.Name, m.Nonce, m.Mode, m.Deltas, m.Control
	return d, true
}
