package openhands

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// Decode turns one JSON line into its moment. The line is an event as the
// agent server sends it on the events socket ({kind, id, timestamp,
// source, ...}: its transport dump), or, to name the conversation the
// socket would have scoped it to, {"conversation_id": ID, "event": EVENT}.
// Raw is the event, Facts.Name its kind, ID its id, Session the
// conversation.
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) {
		return nil, fmt.Errorf("openhands: line is not JSON")
	}
	ev := gjson.ParseBytes(line)
	conv := ""
	if w := ev.Get("event"); w.IsObject() && !ev.Get("kind").Exists() {
		conv = mapping.StrOf(ev.Get("conversation_id"))
		ev = w
	}
	if !ev.IsObject() {
		return nil, fmt.Errorf("openhands: event is not a JSON object")
	}
	return []mapping.Moment{{Raw: []byte(ev.Raw), Facts: eventFacts(ev, conv)}}, nil
}

// eventFacts are the facts of event ev on the socket of conversation conv.
func eventFacts(ev gjson.Result, conv string) mapping.Facts {
	return mapping.Facts{Kind: mapping.KindEvent, Name: mapping.StrOf(ev.Get("kind")), ID: mapping.StrOf(ev.Get("id")), Session: conv}
}
