package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallPiControl: install --control writes pi's gate posture into
// the extension itself (pi gives an extension no environment of its own),
// never the token; a second run changes nothing; doctor reads the posture
// back and probes through the extension's command; install without
// --control leaves the extension observe-only again.
func TestInstallPiControl(t *testing.T) {
	home, relay, ln := controlHome(t)
	out := do(t, 0, "install", "--binary", bin, "--control", "--relay", relay, "--gate-tools", "bash,write", "--budget", "30s", "pi")
	for _, want := range []string{
		"pi: the held hooks (aep-hook.js) wait up to 30s for an answer over " + relay,
		"pi's gate holds bash, write; pi has no approval of its own, so an allow runs the call.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	ext := filepath.Join(home, ".pi", "agent", "extensions", "aep-hook.js")
	b, _ := os.ReadFile(ext)
	if want := `const POSTURE = {"AEP_CONTROL":"1","AEP_CONTROL_BUDGET":"30s","AEP_CONTROL_TOOLS":"bash,write","AEP_RELAY":"` + relay + `"};`; !strings.Contains(string(b), want) {
		t.Fatalf("%s lacks %s", ext, want)
	}
	if strings.Contains(string(b), "local-token") {
		t.Fatal("the token reached the extension")
	}
	if out := do(t, 0, "install", "--binary", bin, "--control", "--relay", relay, "--gate-tools", "bash,write", "--budget", "30s", "pi"); !strings.Contains(out, "already registered, nothing changed: pi") {
		t.Fatalf("second install:\n%s", out)
	}
	out = do(t, 0, "doctor")
	for _, want := range []string{
		"probe: the command the plugin starts recorded a synthetic bus event (1 event: session.started)",
		"    control: on for aep-hook.js (gate: bash, write), relay " + relay + "\n      relay: reachable (" + ln.Addr().String() + " accepts connections)\n      token: present (" + filepath.Join(home, ".aep", "token") + ")\n      budget 30s within",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	do(t, 0, "install", "--binary", bin, "pi")
	if b, _ := os.ReadFile(ext); !strings.Contains(string(b), "const POSTURE = {};") {
		t.Error("a plain install kept the posture")
	}
	if out := do(t, 0, "doctor", "--no-probe"); !strings.Contains(out, "    control: off (observe-only; aep-hook install --control pi holds aep-hook.js as an opt-in gate (--gate-tools))\n") {
		t.Errorf("doctor after a plain install:\n%s", out)
	}
}
