package hookmode

import (
	"slices"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// TestHookVendors holds the hook path's own vendor list to the registry:
// every table whose transport is the hook, under its name, and nothing
// else. A hook vendor added to mapping.Vendors belongs in hookVendors too.
func TestHookVendors(t *testing.T) {
	for _, v := range mapping.Vendors() {
		got, ok := HookVendor([]string{v.Name})
		if want := v.Transport == mapping.TransportHook; ok != want {
			t.Errorf("HookVendor(%q) ok = %v, want %v (transport %q): keep hookVendors in step with mapping.Vendors", v.Name, ok, want, v.Transport)
			continue
		}
		if ok && (got.Name != v.Name || got.Transport != v.Transport) {
			t.Errorf("HookVendor(%q) = table %q (transport %q), want %q (transport %q)", v.Name, got.Name, got.Transport, v.Name, v.Transport)
		}
	}
	for _, args := range [][]string{nil, {""}, {"claude"}, {"Claude-Code"}, {"acp"}, {"version"}} {
		if _, ok := HookVendor(args); ok {
			t.Errorf("HookVendor(%q) ok, want no vendor", args)
		}
	}
	seen := map[string]bool{}
	for _, h := range hookVendors {
		if seen[h.name] {
			t.Errorf("hookVendors lists %q twice", h.name)
		}
		seen[h.name] = true
	}
}

// TestAdapterNames holds the adapter names a link's name is checked
// against to the registry's.
func TestAdapterNames(t *testing.T) {
	if got, want := adapterNames[:], mapping.Names(); !slices.Equal(got, want) {
		t.Errorf("adapterNames = %q, want mapping.Names() %q: keep them in step", got, want)
	}
	for _, c := range []struct{ arg0, want string }{
		{"/usr/local/bin/aep-acp", "acp"},
		{`C:\bin\aep-claude-code.exe`, ""}, // a Windows path is not split on Linux
		{"aep-claude-code.exe", "claude-code"},
		{"aep-hook", ""},
		{"aep-nosuch", ""},
		{"acp", ""},
	} {
		if got := AdapterFromArgv0(c.arg0); got != c.want {
			t.Errorf("AdapterFromArgv0(%q) = %q, want %q", c.arg0, got, c.want)
		}
	}
}
