package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aep-hook/aep-hook/installer"
)

// TestControlPosture reads the posture back from registered command lines.
func TestControlPosture(t *testing.T) {
	kimi, _ := installer.Lookup("kimi-code")
	codex, _ := installer.Lookup("codex")
	gemini, _ := installer.Lookup("gemini-cli")
	home := t.TempDir()
	withToken := t.TempDir()
	if err := os.WriteFile(filepath.Join(withToken, "token"), []byte("t0k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	up := func(string) error { return nil }
	down := func(string) error { return errors.New("refused") }
	on := "AEP_CONTROL=1 AEP_RELAY=ws://127.0.0.1:9/socket AEP_CONTROL_TOOLS=Shell /b/aep-hook kimi-code"
	cases := []struct {
		name      string
		a         installer.Agent
		found     []installer.Found
		home      string
		dial      func(string) error
		on        int
		surfaces  string
		reachable bool
		token     bool
		fits      bool
		timeout   string
		err       bool
	}{
		{name: "nothing held", a: gemini, found: []installer.Found{{Event: "BeforeTool", Command: "/b/aep-hook gemini-cli"}}, fits: true},
		{name: "off", a: codex, found: []installer.Found{{Event: "PermissionRequest", Command: "/b/aep-hook codex"}}, fits: true},
		{name: "on, relay up, token", a: kimi, home: withToken, dial: up,
			found: []installer.Found{{Event: "PreToolUse", Command: on, Timeout: 60}},
			on:    1, surfaces: "PreToolUse (gate: Shell)", reachable: true, token: true, fits: true,
			timeout: "budget 55s within hook timeout 60 s (registered)"},
		{name: "on, relay down, no token, timeout too short", a: kimi, home: home, dial: down,
			found: []installer.Found{{Event: "PreToolUse", Command: on, Timeout: 30}},
			on:    1, surfaces: "PreToolUse (gate: Shell)", fits: false,
			timeout: "budget 55s within hook timeout 30 s (registered)"},
		{name: "codex, vendor default unknown", a: codex, home: home,
			found: []installer.Found{{Event: "PermissionRequest", Command: "AEP_CONTROL=1 AEP_CONTROL_BUDGET=20s /b/aep-hook codex"}},
			on:    1, surfaces: "PermissionRequest", fits: true,
			timeout: "budget 20s within the vendor's default hook timeout (not known here)"},
		{name: "refused setting", a: codex, home: home,
			found: []installer.Found{{Event: "PermissionRequest", Command: "AEP_CONTROL=maybe /b/aep-hook codex"}}, fits: true, err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Control(tc.a, tc.found, tc.home, tc.dial)
			if len(p.On) != tc.on || p.Reachable != tc.reachable || p.TokenOK != tc.token || p.Fits() != tc.fits || (p.Err != nil) != tc.err {
				t.Fatalf("posture %+v", p)
			}
			if tc.on == 0 {
				return
			}
			if p.Surfaces() != tc.surfaces || p.TimeoutText() != tc.timeout {
				t.Errorf("surfaces %q, timeout %q", p.Surfaces(), p.TimeoutText())
			}
			if tc.dial == nil && p.Reach != "" {
				t.Errorf("reach %q without a dial", p.Reach)
			}
		})
	}
}
