package relay

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

// render is ev as delivered under a capture ceiling: the ingested bytes at
// full, else the event down-leveled through redact.Downlevel (AEP-0003
// §6.4, AEP-0001 §8.2). Only capture and data can change there, so the
// other attributes keep their bytes and their order; when down-leveling
// changes nothing the ingested bytes go out. An event that cannot be
// down-leveled goes out as its envelope only (capture none), never as it
// came: a hop that cannot classify content degrades it.
func render(ev *event.Event, ceiling redact.Level) []byte {
	if ceiling >= redact.Full {
		return ev.Raw
	}
	return ev.View(int(ceiling), func() []byte { return downlevel(ev, ceiling) })
}

func downlevel(ev *event.Event, ceiling redact.Level) []byte {
	dec := json.NewDecoder(bytes.NewReader(ev.Raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return envelopeOnly(ev)
	}
	out, err := redact.Downlevel(m, ceiling)
	if err != nil {
		return envelopeOnly(ev)
	}
	if out["capture"] == m["capture"] && reflect.DeepEqual(out["data"], m["data"]) {
		return ev.Raw
	}
	return rewrite(ev.Raw, out)
}

// envelopeOnly is ev without data at capture none.
func envelopeOnly(ev *event.Event) []byte {
	return rewrite(ev.Raw, map[string]any{"capture": redact.None.String()})
}

// rewrite copies raw's members in order, taking capture and data from
// out (data dropped when out has none), and adds capture before data when
// raw had none.
func rewrite(raw []byte, out map[string]any) []byte {
	b := make([]byte, 0, len(raw))
	b = append(b, '{')
	first := true
	member := func(k string, v []byte) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(append(append(b, k...), ':'), v...)
	}
	wroteCapture := false
	writeCapture := func() {
		if c, ok := out["capture"]; ok && !wroteCapture {
			member(`"capture"`, encode(c))
			wroteCapture = true
		}
	}
	gjson.ParseBytes(raw).ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "capture":
			writeCapture()
		case "data":
			writeCapture()
			if d, ok := out["data"]; ok {
				member(`"data"`, encode(d))
			}
		default:
			member(k.Raw, []byte(v.Raw))
		}
		return true
	})
	writeCapture()
	return append(b, '}')
}

// encode is v's JSON without HTML escaping.
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}
