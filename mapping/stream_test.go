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
