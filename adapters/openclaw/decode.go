package openclaw

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// frameFacts are an event frame's facts: its event, its seq, the payload's
// sessionKey and runId.
func frameFacts(frame []byte) mapping.Facts {
	r := gjson.GetManyBytes(frame, "event", "seq", "payload.sessionKey", "payload.runId")
	f := mapping.Facts{Kind: mapping.KindEvent, Name: mapping.StrOf(r[0]), Session: mapping.StrOf(r[2]), Run: mapping.StrOf(r[3])}
	if r[1].Type == gjson.Number {
		f.ID = r[1].Raw
	}
	return f
}

// Decode turns one JSON line of `aep-hook map openclaw` input (one event
// frame as the gateway sends it) into its moment.
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) || !gjson.ParseBytes(line).IsObject() {
		return nil, fmt.Errorf("openclaw: line is not a JSON object")
	}
	if t := gjson.GetBytes(line, "type"); t.Exists() && t.String() != "event" {
		return nil, fmt.Errorf("openclaw: frame type %q: want an event frame", t.String())
	}
	return []mapping.Moment{{Raw: line, Facts: frameFacts(line)}}, nil
}
