package mapping

import "testing"

func TestVendorEventType(t *testing.T) {
	for in, want := range map[string]string{
		"fs/read_text_file": "x.acp.fs.read.text.file", "initialize": "x.acp.initialize.event",
		"": "x.acp.unknown.event", "_meta/Some-Thing": "x.acp.meta.some.thing",
	} {
		if got := vendorEventType("acp", wireSegments(in)...); got != want {
			t.Errorf("%q: %s want %s", in, got, want)
		}
	}
}

// TestOTelProfilesLeaveBodyUndeclared: companion drafts share the
// profile's levels, which is exact only while no profile declares "body"
// (a record's body rides at full).
func TestOTelProfilesLeaveBodyUndeclared(t *testing.T) {
	for _, p := range []*otelProfile{codexOtelProfile(), vscodeOtelProfile()} {
		if _, ok := p.levels["body"]; ok {
			t.Errorf("%s profile declares body", p.prefix)
		}
	}
}
