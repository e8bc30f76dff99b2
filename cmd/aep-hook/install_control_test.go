package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/installer"
)

// TestInstallControl drives install --control through the command line:
// the held registrations carry the posture, a second run changes nothing,
// doctor shows it per agent (a listener standing in for the relay makes it
// reachable, the user's token file present), install without --control
// goes back to observe-only, uninstall takes everything.
func TestInstallControl(t *testing.T) {
	home, relay, ln := controlHome(t)
	out := do(t, 0, "install", "--binary", bin, "--control", "--relay", relay, "--gate-tools", "Shell", "kimi-code", "codex", "gemini-cli")
	for _, want := range []string{
		"note: Kimi Code CLI: the held hooks (PreToolUse) wait up to 55s for an answer over " + relay + " (its hook timeout set to 60 s)",
		"note: Codex: the held hooks (PermissionRequest) wait up to 55s",
		"note: Gemini CLI has no moment the control loop can hold: its hooks stay observe-only.",
		"The relay token is not written into the settings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	kimi := filepath.Join(home, ".kimi-code", "config.toml")
	b, _ := os.ReadFile(kimi)
	if want := `{event = "PreToolUse", command = "AEP_CONTROL=1 AEP_RELAY=` + relay + ` AEP_CONTROL_TOOLS=Shell ` + bin + ` kimi-code", timeout = 60}`; !strings.Contains(string(b), want) {
		t.Fatalf("%s lacks %s:\n%s", kimi, want, b)
	}
	if strings.Contains(string(b), "local-token") {
		t.Fatal("the token reached the vendor's settings")
	}
	if out := do(t, 0, "install", "--binary", bin, "--control", "--relay", relay, "--gate-tools", "Shell", "kimi-code", "codex"); !strings.Contains(out, "already registered, nothing changed: kimi-code, codex") {
		t.Fatalf("second install:\n%s", out)
	}
	out = do(t, 1, "doctor") // codex and gemini are untrusted here
	for _, want := range []string{
		"    control: on for PreToolUse (gate: Shell), relay " + relay + "\n      relay: reachable (" + ln.Addr().String() + " accepts connections)\n      token: present (" + filepath.Join(home, ".aep", "token") + ")\n      budget 55s within hook timeout 60 s (registered)\n",
		"    control: on for PermissionRequest, relay " + relay + "\n",
		"      budget 55s within the vendor's default hook timeout (not known here)\n",
		"    control: none (its table holds no moment: observe-only)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	ln.Close()
	if out = do(t, 1, "doctor", "--no-probe"); !strings.Contains(out, "      relay: not checked (--no-probe)\n") {
		t.Errorf("doctor --no-probe:\n%s", out)
	}
	do(t, 0, "install", "--binary", bin, "kimi-code", "codex")
	out = do(t, 1, "doctor", "--no-probe")
	for _, want := range []string{
		"    control: off (observe-only; aep-hook install --control kimi-code holds PreToolUse as an opt-in gate (--gate-tools))\n",
		"    control: off (observe-only; aep-hook install --control codex holds PermissionRequest)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor after a plain install lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(kimi); !strings.Contains(string(b), `{event = "PreToolUse", command = "`+bin+` kimi-code", timeout = 30}`) {
		t.Errorf("plain install left:\n%s", b)
	}
	do(t, 0, "uninstall", "kimi-code", "codex", "gemini-cli")
	if _, err := os.Stat(kimi); err == nil {
		t.Error("uninstall left the Kimi config")
	}
}

// TestInstallControlErrors: settings the hooks would refuse are refused at
// install.
func TestInstallControlErrors(t *testing.T) {
	doctorHome(t)
	for _, args := range [][]string{
		{"install", "codex", "--control", "--relay", "http://127.0.0.1:8787/socket"},
		{"install", "codex", "--gate-tools", "Shell"},
		{"install", "codex", "--control", "--budget", "11m"},
	} {
		do(t, 2, args...)
	}
}

// TestControlCommandRuns runs a held registration's command line as the
// vendors do, through sh -c, with no relay listening: the settings reach
// the hook (it tries the relay, finds none), it replies neutrally at once
// and records the request as answered in the agent's own dialog.
func TestControlCommandRuns(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	home, tmp := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	a, _ := installer.Lookup("codex")
	e := installer.Env{Home: home, Dir: home, Binary: bin, Control: &installer.Control{Relay: "ws://" + addr + "/socket"}}
	var command string
	for _, r := range installer.ExportRegs(a, e) {
		if r.Event == "PermissionRequest" {
			command = r.Command
		}
	}
	if !strings.HasPrefix(command, "AEP_CONTROL=1 ") {
		t.Fatalf("registered command %q", command)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sh, "-c", command)
	cmd.Env = hookEnv(filepath.Join(home, ".aep"), tmp)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t","tool_name":"Bash","tool_input":{"command":"touch x"},"tool_use_id":"c1"}`)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v", err)
	}
	if stdout.String() != "" {
		t.Errorf("stdout %q, want the neutral reply", stdout.String())
	}
	logs, _ := filepath.Glob(filepath.Join(home, ".aep", "logs", "codex", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	var found bool
	for _, ev := range readLog(t, logs[0]) {
		if ev["type"] == "attention.requested" {
			found = true
			d, _ := ev["data"].(map[string]any)
			if via, _ := d["respond_via"].([]any); len(via) != 1 || via[0] != "oob" {
				t.Errorf("respond_via %v with no relay", d["respond_via"])
			}
		}
	}
	if !found {
		t.Error("no attention.requested recorded")
	}
}

// controlHome is a doctor home with the user's relay token file and a
// listener standing in for the relay (reachable until the test ends); it
// returns the home, the relay's address and the listener (closed at the
// test's end, or sooner by the test to take the relay away).
func controlHome(t *testing.T) (home, relay string, ln net.Listener) {
	t.Helper()
	home = doctorHome(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.MkdirAll(filepath.Join(home, ".aep"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".aep", "token"), []byte("local-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, "ws://" + ln.Addr().String() + "/socket", ln
}
