package opencode

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// The plugin forwarder's wire form (one JSON object per line, the pins'
// moment form) and the hook each kind stands for.
var pluginHooks = map[string]string{
	"bus":            "event",
	"tool.before":    "tool.execute.before",
	"tool.after":     "tool.execute.after",
	"permission.ask": "permission.ask",
}

// Decode turns one JSON line into its moment, with the facts the live
// adapter would give it. It accepts every form the bus arrives in:
//
//   - the plugin forwarder's lines (the pins' moment form):
//     {"kind":"bus","event":{...}}, {"kind":"tool.before"|"tool.after",
//     "input":{...},"output":{...}}, {"kind":"permission.ask",
//     "permission":{...}};
//   - one /event data line, {"id":"evt_...","type":...,"properties":{...}};
//   - one /global/event data line, {"directory":...,"payload":{...}};
//   - a catch-up record or end, {"kind":"record","name":R,"session":S,
//     "record":{...}} and {"kind":"end","session":S,"reason":...,
//     "run":U?} (U: every turn begun before user message U was over).
func Decode(line []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(line) || !gjson.ParseBytes(line).IsObject() {
		return nil, fmt.Errorf("opencode: moment is not a JSON object")
	}
	kind := gjson.GetBytes(line, "kind")
	if kind.Type == gjson.String {
		switch k := kind.Str; k {
		case "bus":
			ev := gjson.GetBytes(line, "event")
			if !ev.IsObject() {
				return nil, fmt.Errorf("opencode: bus moment without an event object")
			}
			m := eventMoment([]byte(ev.Raw), "")
			m.Facts.Method = "event"
			return []mapping.Moment{m}, nil
		case "tool.before", "tool.after":
			return []mapping.Moment{{Raw: line, Facts: mapping.Facts{Kind: mapping.KindEvent, Method: pluginHooks[k]}}}, nil
		case "permission.ask":
			perm := gjson.GetBytes(line, "permission")
			if !perm.IsObject() {
				return nil, fmt.Errorf("opencode: permission.ask moment without a permission object")
			}
			return []mapping.Moment{{Raw: []byte(perm.Raw), Facts: mapping.Facts{Kind: mapping.KindEvent, Method: "permission.ask"}}}, nil
		case "record":
			rec := gjson.GetBytes(line, "record")
			if !rec.IsObject() {
				return nil, fmt.Errorf("opencode: record moment without a record object")
			}
			return []mapping.Moment{recordMoment(gjson.GetBytes(line, "name").String(), gjson.GetBytes(line, "session").String(), []byte(rec.Raw))}, nil
		case "end":
			m := endMoment(gjson.GetBytes(line, "session").String(), gjson.GetBytes(line, "reason").String())
			m.Facts.Run = gjson.GetBytes(line, "run").String()
			return []mapping.Moment{m}, nil
		}
		return nil, fmt.Errorf("opencode: unknown moment kind %q", kind.Str)
	}
	if p := gjson.GetBytes(line, "payload"); p.IsObject() {
		return []mapping.Moment{eventMoment([]byte(p.Raw), gjson.GetBytes(line, "directory").String())}, nil
	}
	return []mapping.Moment{eventMoment(line, "")}, nil
}

// eventMoment is one bus event as the stream delivered it.
func eventMoment(ev []byte, directory string) mapping.Moment {
	return mapping.Moment{Raw: ev, Facts: mapping.Facts{
		Kind:   mapping.KindEvent,
		Name:   gjson.GetBytes(ev, "type").String(),
		ID:     gjson.GetBytes(ev, "id").String(),
		Thread: directory,
	}}
}

// recordMoment is one object fetched over REST while catching up.
func recordMoment(name, session string, obj []byte) mapping.Moment {
	return mapping.Moment{Raw: obj, Facts: mapping.Facts{Kind: mapping.KindRecord, Name: name, Session: session}}
}

// endMoment says a catch-up found session idle with its turn unreported.
func endMoment(session, reason string) mapping.Moment {
	return mapping.Moment{Facts: mapping.Facts{Kind: mapping.KindEnd, Session: session, Reason: reason}}
}
