package relay

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// frame is one connection-scoped WebSocket message (AEP-0003 §2): its
// type (no dot) and its members, read lazily.
type frame struct {
	Type    string
	members map[string]json.RawMessage
}

// errNotObject is a text frame that is not a JSON object.
type frameError struct{ detail string }

func (e *frameError) Error() string { return e.detail }

// parseText classifies a text frame: an Event (its type holds a dot),
// admitted by event.Parse, or a frame. A frame without a string type is
// refused.
func parseText(b []byte) (*frame, *event.Event, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || !gjson.ValidBytes(b) {
		return nil, nil, &frameError{"a text frame is one JSON object"}
	}
	t := gjson.GetBytes(b, "type")
	if t.Type != gjson.String {
		return nil, nil, &frameError{"a frame's type is a string"}
	}
	if strings.Contains(t.Str, ".") {
		ev, err := event.Parse(b)
		return nil, ev, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, &frameError{"a text frame is one JSON object"}
	}
	return &frame{Type: t.Str, members: m}, nil, nil
}

// str is member k as a string: ok when present and a JSON string.
func (f *frame) str(k string) (string, bool) {
	raw, ok := f.members[k]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func (f *frame) raw(k string) (json.RawMessage, bool) {
	raw, ok := f.members[k]
	return raw, ok
}

// hello is the parsed hello frame (AEP-0003 §4); unknown members and
// capability keys are ignored.
type hello struct {
	versions []string
	role     string
	agent    string
	instance string
	control  json.RawMessage
	emits    json.RawMessage
	accepts  []string
}

func parseHello(f *frame) (hello, string) {
	var h hello
	if raw, ok := f.raw("versions"); ok {
		json.Unmarshal(raw, &h.versions)
	}
	h.role, _ = f.str("role")
	if h.role == "" {
		h.role = "consumer"
	}
	switch h.role {
	case "emitter", "consumer", "both":
	default:
		return h, "role is emitter, consumer or both"
	}
	if raw, ok := f.raw("identity"); ok {
		var id struct {
			Agent    any `json:"agent"`
			Instance any `json:"instance"`
		}
		if json.Unmarshal(raw, &id) == nil {
			h.agent, _ = id.Agent.(string)
			h.instance, _ = id.Instance.(string)
		}
	}
	if h.role != "consumer" && h.agent == "" {
		return h, "identity.agent is required of an emitter (AEP-0003 §4 rule 3)"
	}
	if raw, ok := f.raw("capabilities"); ok {
		var caps map[string]json.RawMessage
		if json.Unmarshal(raw, &caps) == nil {
			if c, ok := caps["control"]; ok && gjson.ParseBytes(c).IsObject() {
				h.control = compactRaw(c)
				var ctl struct {
					Accepts []any `json:"accepts"`
				}
				json.Unmarshal(c, &ctl)
				for _, a := range ctl.Accepts {
					if s, ok := a.(string); ok {
						h.accepts = append(h.accepts, s)
					}
				}
			}
			if e, ok := caps["emits"]; ok && gjson.ParseBytes(e).IsArray() {
				h.emits = compactRaw(e)
			}
		}
	}
	return h, ""
}

func compactRaw(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return nil
	}
	return buf.Bytes()
}

// subscribeRequest reads a subscribe frame (AEP-0003 §6.5).
func subscribeRequest(f *frame, maxFrom int) (request, *subError) {
	var req request
	id, ok := f.str("id")
	if !ok || id == "" {
		return req, &subError{codeInvalidFilter, "subscribe needs a string id"}
	}
	req.id = id
	if raw, ok := f.raw("filter"); ok {
		if !gjson.ParseBytes(raw).IsObject() {
			return req, &subError{codeInvalidFilter, "filter is an attr-match object"}
		}
		req.filter = raw
	}
	if raw, ok := f.raw("from"); ok {
		list, all, err := parseFrom(raw, maxFrom)
		if err != nil {
			return req, err
		}
		req.from, req.all = list, all
	}
	if raw, ok := f.raw("capture"); ok {
		var c string
		if json.Unmarshal(raw, &c) != nil || c == "" {
			return req, &subError{codeInvalidFilter, "capture is one of none, metadata, redacted, full"}
		}
		req.capture = c
	}
	return req, nil
}

// frameJSON encodes a frame the relay sends.
func frameJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// errorFrame is {"type":"error", ...}: id echoes a request's, cause a
// command's or an event's.
func errorFrame(id, cause, code, detail string) []byte {
	return frameJSON(struct {
		Type   string `json:"type"`
		ID     string `json:"id,omitempty"`
		Cause  string `json:"cause,omitempty"`
		Code   string `json:"code"`
		Detail string `json:"detail,omitempty"`
	}{"error", id, cause, code, detail})
}
