package openclaw

import (
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, line string
		want       mapping.Facts
		err        bool
	}{
		{"agent frame", `{"type":"event","event":"agent","payload":{"runId":"r","sessionKey":"agent:main:main","stream":"lifecycle"},"seq":12}`,
			mapping.Facts{Kind: mapping.KindEvent, Name: "agent", ID: "12", Session: "agent:main:main", Run: "r"}, false},
		{"gateway frame", `{"type":"event","event":"health","payload":{"ok":true}}`,
			mapping.Facts{Kind: mapping.KindEvent, Name: "health"}, false},
		{"a response is no event", `{"type":"res","id":"1","ok":true}`, mapping.Facts{}, true},
		{"not an object", `"x"`, mapping.Facts{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Decode([]byte(tt.line))
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error %v", err, tt.err)
			}
			if !tt.err && ms[0].Facts != tt.want {
				t.Errorf("facts %+v, want %+v", ms[0].Facts, tt.want)
			}
		})
	}
}

// TestConnectParams: the bridge asks for read access only, as a backend
// client, with the token as its auth.
func TestConnectParams(t *testing.T) {
	p := (&Bridge{Token: "tok"}).ConnectParams()
	if s, _ := p["scopes"].([]string); len(s) != 1 || s[0] != "operator.read" {
		t.Errorf("scopes %v, want only operator.read", p["scopes"])
	}
	if p["role"] != "operator" || p["minProtocol"] != ProtocolVersion {
		t.Errorf("params %v", p)
	}
	if a, _ := p["auth"].(map[string]any); a["token"] != "tok" {
		t.Errorf("auth %v", p["auth"])
	}
}
