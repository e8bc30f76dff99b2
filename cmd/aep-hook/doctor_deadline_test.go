package main

import "testing"

// Doctor shows what the hooks make of AEP_HOOK_DEADLINE when they do not
// take it as given.
func TestDoctorShowsDeadlineClamp(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2s", "2s"},
		{"45s", "45s (over the 30s cap: hooks use 30s)"},
		{"soon", "soon (not a positive duration: hooks use the default 750ms)"},
	}
	for _, c := range cases {
		if got := shownSetting("AEP_HOOK_DEADLINE", c.in); got != c.want {
			t.Errorf("shownSetting(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
