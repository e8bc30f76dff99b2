package pi

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// Decode turns one forwarder line, {"session": {"id": ...}, "event": {"type":
// ..., ...}}, into its moment: Raw is the event, Facts.Name its type and
// Facts.Session the pi session id. The session's file and cwd, when a line
// carries them (the pins' form), are not facts the table reads.
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) {
		return nil, fmt.Errorf("pi: line is not JSON")
	}
	ev := gjson.GetBytes(line, "event")
	if !ev.IsObject() {
		return nil, fmt.Errorf("pi: line has no event object")
	}
	typ := ev.Get("type")
	if typ.Type != gjson.String || typ.Str == "" {
		return nil, fmt.Errorf("pi: event has no type")
	}
	sess := gjson.GetBytes(line, "session.id")
	m := mapping.Moment{Raw: []byte(ev.Raw), Facts: mapping.Facts{Kind: mapping.KindEvent, Name: typ.Str}}
	if sess.Type == gjson.String {
		m.Facts.Session = sess.Str
	}
	return []mapping.Moment{m}, nil
}
