package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/shim"
)

// TestDoctorNothingWired: a machine with nothing wired is not healthy:
// doctor says so first, with the command that wires what it finds, and
// exits 1.
func TestDoctorNothingWired(t *testing.T) {
	home := doctorHome(t)
	t.Setenv("PATH", t.TempDir())
	got := do(t, 1, "doctor", "--no-probe")
	want := "aep-hook doctor: 1 problem found\n  PROBLEM agents: none is wired and nothing is recorded: aep-hook records nothing; fix: install an agent, then aep-hook install --all (or wire one anyway: aep-hook install claude-code)\n"
	if !strings.HasPrefix(got, want) || strings.Contains(got, "healthy") {
		t.Fatalf("doctor:\n%s", got)
	}
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	got = do(t, 1, "doctor", "--no-probe")
	if !strings.Contains(got, "  PROBLEM agents: none is wired and nothing is recorded: aep-hook records nothing; fix: aep-hook install --all (it finds codex)\n") ||
		!strings.Contains(got, "agents: 0 wired, 1 installed but not wired, 11 not installed") {
		t.Fatalf("doctor:\n%s", got)
	}
	// A tee's record (no registration) is something recording.
	os.MkdirAll(filepath.Join(os.Getenv("AEP_HOME"), "logs", "acp"), 0o700)
	os.WriteFile(filepath.Join(os.Getenv("AEP_HOME"), "logs", "acp", "s.jsonl"), nil, 0o600)
	got = do(t, 0, "doctor", "--no-probe")
	if !strings.Contains(got, "note: no agent is wired by install; the logs hold the record of acp") {
		t.Fatalf("doctor with a tee's log:\n%s", got)
	}
}

// TestDoctorAgentCannotStart: an agent whose CLI fails to start (a Node
// CLI on a Node too old) is a problem, with the step that shows why; one
// that starts says its version.
func TestDoctorAgentCannotStart(t *testing.T) {
	doctorHome(t)
	path := t.TempDir()
	t.Setenv("PATH", path+string(os.PathListSeparator)+"/usr/bin:/bin")
	os.WriteFile(filepath.Join(path, "kimi"), []byte("#!/bin/sh\necho 'kimi needs Node.js >= 22.19; this is v20.20.2' >&2\nexit 1\n"), 0o755)
	os.WriteFile(filepath.Join(path, "qwen"), []byte("#!/bin/sh\necho 0.24.4\n"), 0o755)
	do(t, 0, "install", "kimi-code", "qwen-code", "--binary", bin)
	got := do(t, 1, "doctor")
	kimi := filepath.Join(path, "kimi")
	for _, want := range []string{
		"aep-hook doctor: 1 problem found\n",
		"  PROBLEM kimi-code: " + kimi + " does not start on this machine (exit status 1: kimi needs Node.js >= 22.19; this is v20.20.2), so its hooks never run; fix: run " + kimi + " --version to see why",
		"kimi-code    installed (" + kimi + ")",
		"starts: " + filepath.Join(path, "qwen") + " --version says 0.24.4",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if got := do(t, 0, "doctor", "--no-probe"); strings.Contains(got, "does not start") {
		t.Errorf("--no-probe ran the agent:\n%s", got)
	}
}

// TestDoctorGeminiTrust: a user registration runs in every folder Gemini
// trusts, so doctor judges the trusted folders, not the one it runs in;
// with none trusted the advice is to trust projects, never the home.
func TestDoctorGeminiTrust(t *testing.T) {
	home := doctorHome(t, "gemini-cli")
	t.Chdir(home)
	got := do(t, 1, "doctor", "--no-probe")
	if !strings.Contains(got, "PROBLEM gemini-cli: not trusted: ") || !strings.Contains(got, "no folder is trusted in "+filepath.Join(home, ".gemini", "trustedFolders.json")+": Gemini CLI runs the hooks in none") ||
		!strings.Contains(got, "trust projects, not your whole home") || strings.Contains(got, "run gemini in "+home) {
		t.Fatalf("no trusted folder:\n%s", got)
	}
	proj := filepath.Join(home, "src", "app")
	os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(`{"`+proj+`":"TRUST_FOLDER"}`), 0o644)
	got = do(t, 0, "doctor", "--no-probe")
	if !strings.Contains(got, "trusted: the hooks run in the 1 trusted folder(s) of "+filepath.Join(home, ".gemini", "trustedFolders.json")+" ("+proj+"); not in "+home+", which Gemini will ask to trust") {
		t.Fatalf("one trusted project, doctor run from the home:\n%s", got)
	}
}

// TestDoctorAck: failures count as a problem until acknowledged; one
// recorded after the acknowledgement counts again.
func TestDoctorAck(t *testing.T) {
	doctorHome(t, "claude-code")
	el := shim.NewErrorLog(os.Getenv("AEP_HOME"))
	el.Record(shim.Failure{Adapter: "codex", Stage: "write", Error: "disk full"})
	do(t, 1, "doctor", "--no-probe")
	got := do(t, 0, "doctor", "--no-probe", "--ack")
	if !strings.HasPrefix(got, "acknowledged the failures recorded so far") || !strings.Contains(got, "codex [write] disk full") ||
		!strings.Contains(got, "acknowledged up to ") {
		t.Fatalf("doctor --ack:\n%s", got)
	}
	do(t, 0, "doctor", "--no-probe")
	el.Record(shim.Failure{Adapter: "codex", Stage: "write", Error: "disk full again"})
	if got := do(t, 1, "doctor", "--no-probe"); !strings.Contains(got, "PROBLEM failures: 1 in the last 24 hours, the newest: codex write: disk full again") {
		t.Fatalf("a failure after the acknowledgement:\n%s", got)
	}
}

// TestDoctorFormerDestination: a destination shipped to before but no
// longer in AEP_OUT is one line, not judged as behind; ship --forget drops
// it.
func TestDoctorFormerDestination(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	defer srv.Close()
	doctorHome(t, "claude-code")
	home := os.Getenv("AEP_HOME")
	if _, code := hookInProcess(t, map[string]string{"AEP_HOME": home}, codexTool("s1", 0), "codex"); code != 0 {
		t.Fatal("hook")
	}
	do(t, 0, "ship", "--out", srv.URL)
	if _, code := hookInProcess(t, map[string]string{"AEP_HOME": home}, codexTool("s1", 1), "codex"); code != 0 {
		t.Fatal("hook")
	}
	got := do(t, 0, "doctor", "--no-probe")
	if !strings.Contains(got, "delivery:  local log only (no AEP_OUT)\nformer destination "+srv.URL+" (not in AEP_OUT; not judged): behind by 1 event (") ||
		!strings.Contains(got, "aep-hook ship --forget "+srv.URL+" drops it") {
		t.Fatalf("doctor:\n%s", got)
	}
	if got := do(t, 2, "ship", "--forget", srv.URL, "--out", srv.URL); !strings.Contains(got, "is configured now") {
		t.Fatalf("forgetting a configured destination:\n%s", got)
	}
	do(t, 0, "ship", "--forget", srv.URL)
	if got := do(t, 0, "doctor", "--no-probe"); strings.Contains(got, "former destination") {
		t.Fatalf("after --forget:\n%s", got)
	}
	do(t, 1, "ship", "--forget", srv.URL)
}
