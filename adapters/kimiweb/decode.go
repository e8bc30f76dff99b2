package kimiweb

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
)

// Decode turns one session event frame of the kimi web stream ({type, seq,
// session_id, timestamp, epoch, payload, volatile?}), as the server sent
// it, into its moment: Raw is the frame, Facts.Name its type, Session its
// session_id (else the payload's sessionId), ID its seq as written.
func Decode(frame []byte) ([]mapping.Moment, error) {
	if !gjson.ValidBytes(frame) {
		return nil, fmt.Errorf("kimi-web: frame is not JSON")
	}
	f := gjson.ParseBytes(frame)
	if !f.IsObject() {
		return nil, fmt.Errorf("kimi-web: frame is not a JSON object")
	}
	typ := f.Get("type")
	if typ.Type != gjson.String || typ.Str == "" {
		return nil, fmt.Errorf("kimi-web: frame has no type")
	}
	return []mapping.Moment{{Raw: frame, Facts: frameFacts(f, typ.Str)}}, nil
}

// frameFacts are the facts of a session event frame f of type typ.
func frameFacts(f gjson.Result, typ string) mapping.Facts {
	fs := mapping.Facts{Kind: mapping.KindEvent, Name: typ, Session: mapping.StrOf(f.Get("session_id"))}
	if fs.Session == "" {
		fs.Session = mapping.StrOf(f.Get("payload.sessionId"))
	}
	if seq := f.Get("seq"); seq.Type == gjson.Number {
		fs.ID = seq.Raw
	}
	return fs
}
