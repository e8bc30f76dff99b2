package shim

import "github.com/aep-hook/aep-hook/redact"

// Version is the AEP envelope version this binary emits.
const Version = "0.1"

// Event is one AEP envelope (AEP-0001 §5). Fields are declared in the spec's
// attribute order so the JSON encoding follows it; absent optionals are
// omitted, never null. Tenant is the one extension attribute this binary
// writes (AEP-0001 §5.4), after the core attributes.
type Event struct {
	AEP         string         `json:"aep"`
	ID          string         `json:"id"`
	Type        string         `json:"type"`
	Subject     string         `json:"subject,omitempty"`
	Time        string         `json:"time"`
	Source      string         `json:"source"`
	Agent       string         `json:"agent"`
	Session     string         `json:"session,omitempty"`
	Run         string         `json:"run,omitempty"`
	Step        string         `json:"step,omitempty"`
	Seq         *int64         `json:"seq,omitempty"`
	Epoch       *int64         `json:"epoch,omitempty"`
	Cause       string         `json:"cause,omitempty"`
	Traceparent string         `json:"traceparent,omitempty"`
	Severity    string         `json:"severity,omitempty"`
	Capture     string         `json:"capture,omitempty"`
	Tenant      string         `json:"tenant,omitempty"`
	Data        map[string]any `json:"data,omitzero"`

	// fields, when Data is nil, is the gated payload as a list sorted by
	// key (a Draft.Fields payload), encoded as Data would be. Only events
	// that are encoded and let go (a counting batch) carry it: every event
	// handed to a caller has its payload in Data.
	fields []redact.Field
}

// MarshalLine encodes e as one compact JSON line with its trailing newline:
// the bytes encoding/json gives for e, with HTML characters not escaped.
func (e *Event) MarshalLine() ([]byte, error) {
	return appendEvent(make([]byte, 0, 512), e)
}

// AgentScoped reports whether events of type typ describe the emitter itself
// and so carry no session, run, step or seq (AEP-0001 §5.2).
func AgentScoped(typ string) bool {
	return len(typ) > 6 && typ[:6] == "agent."
}
