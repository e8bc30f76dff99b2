package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/shim"
)

// doctorHome is a temporary HOME with the given agents' folders, wired to
// the test-built binary.
func doctorHome(t *testing.T, agents ...string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AEP_HOME", filepath.Join(home, ".aep"))
	t.Setenv("AEP_OUT", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("PI_CODING_AGENT_DIR", "")
	for _, a := range agents {
		do(t, 0, "install", a, "--binary", bin)
	}
	return home
}

// do runs the CLI in-process and checks the exit status.
func do(t *testing.T, want int, args ...string) string {
	t.Helper()
	var out, errb strings.Builder
	code := run(append([]string{"aep-hook"}, args...), Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, os.Getenv)
	if code != want {
		t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
	}
	return out.String() + errb.String()
}

func TestDoctorHealthy(t *testing.T) {
	home := doctorHome(t, "claude-code", "kimi-code", "hermes", "cline", "pi", "opencode", "kilo")
	t.Setenv("HERMES_ACCEPT_HOOKS", "1")
	out := do(t, 0, "doctor")
	for _, want := range []string{
		"aep-hook doctor: no problems found\n",
		"claude-code  installed (its folder " + filepath.Join(home, ".claude") + "; claude not on PATH)", "user: 28/28 events registered",
		"probe: the registered command recorded a synthetic SessionStart (1 event: session.started)",
		"kimi-code    installed", "probe: the registered command recorded a synthetic on_session_start (",
		"probe: the registered command recorded a synthetic TaskStart (1 event: run.started)",
		"probe: the command the plugin starts recorded a synthetic bus event (1 event: session.started)",
		"opencode     installed (its folder " + filepath.Join(home, ".config", "opencode") + "; opencode not on PATH)\n    user: 1/1 events registered in " + filepath.Join(home, ".config", "opencode", "plugin"),
		"agents: 7 wired, 0 installed but not wired, 5 not installed",
		"\nhealthy: 7 agents wired and recording.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(os.Getenv("AEP_HOME"), "logs", "*", "*")); len(logs) != 0 {
		t.Errorf("the probe wrote into the real home: %v", logs)
	}
}

// TestDoctorPluginGone: a plugin agent whose file was removed is present
// and unwired, as after uninstall, and doctor names the install step.
func TestDoctorPluginGone(t *testing.T) {
	home := doctorHome(t, "opencode")
	os.Remove(filepath.Join(home, ".config", "opencode", "plugin", "aep-hook.js"))
	// The plugin file is the one registration: without it the agent
	// is present and unwired, as after uninstall.
	got := do(t, 1, "doctor", "--no-probe")
	if !strings.Contains(got, "opencode     installed (its folder "+filepath.Join(home, ".config", "opencode")+"; opencode not on PATH); not wired (aep-hook install opencode)") {
		t.Fatalf("doctor:\n%s", got)
	}
}

func TestDoctorBroken(t *testing.T) {
	t.Run("unregistered event", func(t *testing.T) {
		home := doctorHome(t, "claude-code")
		p := filepath.Join(home, ".claude", "settings.json")
		b, _ := os.ReadFile(p)
		a, _ := installer.Lookup("claude-code")
		a.Hooks = a.Hooks[1:] // everything but SessionStart
		a.Format = installer.JSONHooks{Shape: installer.Grouped}
		out, err := a.Format.Uninstall(b, installer.Owns("claude-code"))
		if err != nil {
			t.Fatal(err)
		}
		out, err = a.Format.Install(out, a.Regs(installer.Quote(bin)), installer.Owns("claude-code"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p, out, 0o644)
		got := do(t, 1, "doctor", "--no-probe")
		if !strings.Contains(got, "  PROBLEM claude-code: missing events: SessionStart; fix: aep-hook install claude-code --scope user\n") ||
			!strings.Contains(got, "    PROBLEM missing events: SessionStart\n") {
			t.Fatalf("doctor:\n%s", got)
		}
	})
	t.Run("unwritable home", func(t *testing.T) {
		home := doctorHome(t)
		file := filepath.Join(home, "not-a-folder")
		os.WriteFile(file, nil, 0o644)
		t.Setenv("AEP_HOME", filepath.Join(file, "aep"))
		got := do(t, 1, "doctor")
		if !strings.Contains(got, "PROBLEM the home cannot be written") || !strings.Contains(got, "set AEP_HOME to a folder you own") {
			t.Fatalf("doctor:\n%s", got)
		}
	})
	t.Run("untrusted codex", func(t *testing.T) {
		home := doctorHome(t, "codex")
		got := do(t, 1, "doctor")
		if !strings.Contains(got, "PROBLEM codex: not trusted: 14 of 14 hooks have no trust recorded") || !strings.Contains(got, "type /hooks") {
			t.Fatalf("doctor:\n%s", got)
		}
		// The probe runs the command, not Codex: it must not read as if
		// Codex ran the hook.
		if !strings.Contains(got, "probe: the registered command recorded a synthetic SessionStart (1 event: session.started); but Codex itself skips the hooks until they are trusted") {
			t.Fatalf("the probe should still record, and say Codex will not:\n%s", got)
		}
		// Trust recorded for every position (as Codex's /hooks writes it).
		hooks := filepath.Join(home, ".codex", "hooks.json")
		var b strings.Builder
		a, _ := installer.Lookup("codex")
		st := installer.Inspect(a, installer.Env{Home: home, Dir: home, Getenv: os.Getenv}, installer.User)
		for _, f := range st.Found {
			fmt.Fprintf(&b, "[hooks.state.%q]\ntrusted_hash = \"sha256:00\"\n", hooks+":"+f.Key)
		}
		os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(b.String()), 0o644)
		got = do(t, 0, "doctor")
		if !strings.Contains(got, "trusted: trust recorded for all 14 hooks") || strings.Contains(got, "skips the hooks") {
			t.Fatalf("doctor:\n%s", got)
		}
	})
	t.Run("binary gone", func(t *testing.T) {
		doctorHome(t)
		do(t, 0, "install", "claude-code", "--binary", "/nonexistent/aep-hook")
		// With or without the probe: one problem, one line, naming the
		// binary and the command that registers this one.
		for _, args := range [][]string{{"doctor"}, {"doctor", "--no-probe"}} {
			got := do(t, 1, args...)
			want := "  PROBLEM claude-code: 28 events registered with /nonexistent/aep-hook, which does not exist (moved or deleted): those hooks fail; fix: aep-hook install claude-code --scope user (registers this binary, "
			if !strings.Contains(got, want) || !strings.Contains(got, "aep-hook doctor: 1 problem found\n") || strings.Count(got, "/nonexistent/aep-hook") != 2 {
				t.Fatalf("%v:\n%s", args, got)
			}
		}
	})
	t.Run("probe fails", func(t *testing.T) {
		home := doctorHome(t)
		broken := filepath.Join(home, "bin", "aep-hook")
		os.MkdirAll(filepath.Dir(broken), 0o755)
		os.WriteFile(broken, []byte("#!/bin/sh\necho 'aep-hook: boom' >&2\nexit 3\n"), 0o755)
		do(t, 0, "install", "claude-code", "--binary", broken)
		got := do(t, 1, "doctor")
		want := "  PROBLEM claude-code: the probe records nothing: the hook command failed: exit status 3: aep-hook: boom (ran: " + broken + " claude-code); fix: see why by running it by hand: printf '%s\\n' '{\"hook_event_name\":\"SessionStart\",\"session_id\":\"aep-doctor-by-hand\",\"source\":\"startup\"}' | AEP_HOME=\"$(mktemp -d)\" " + broken + " claude-code\n"
		if !strings.Contains(got, want) {
			t.Fatalf("doctor:\n%s", got)
		}
	})
	t.Run("fallback failures", func(t *testing.T) {
		home := doctorHome(t)
		t.Setenv("TMPDIR", t.TempDir())
		mine := shim.NewErrorLog(os.Getenv("AEP_HOME"))
		mine.Path = filepath.Join(home, "unwritable", "\x00") // force the fallback
		mine.Record(shim.Failure{Adapter: "codex", Stage: "write", Error: "mine"})
		other := shim.NewErrorLog(filepath.Join(home, "other-home"))
		other.Path = mine.Path
		other.Record(shim.Failure{Adapter: "codex", Stage: "write", Error: "theirs"})
		got := do(t, 1, "doctor", "--no-probe")
		if !strings.Contains(got, "the $TMPDIR fallback") || !strings.Contains(got, "[write] mine") ||
			strings.Contains(got, "theirs") || !strings.Contains(got, "also holds 1 failure(s) of other homes") {
			t.Fatalf("doctor:\n%s", got)
		}
	})
}

// TestDoctorAgentsOwnRecord: turns an adapter closed for an agent
// (interrupted) and runs that never ended are the agents' doing: doctor
// shows them in their own section and stays healthy; a real failure beside
// them is still a problem, counted once.
func TestDoctorAgentsOwnRecord(t *testing.T) {
	doctorHome(t, "claude-code")
	el := shim.NewErrorLog(os.Getenv("AEP_HOME"))
	el.Record(shim.Failure{Adapter: "acp", Hook: "session/prompt", Stage: "interrupted",
		Error: "a prompt turn was still open when the tee ended (agent_exited); the tee closed its run"})
	prompt := `{"hook_event_name":"UserPromptSubmit","session_id":"s-open","prompt_id":"p1","prompt":"hi","cwd":"/tmp"}`
	var out strings.Builder
	if code := run([]string{"aep-hook", "claude-code"}, Streams{In: strings.NewReader(prompt), Out: &out, Err: &out}, os.Getenv); code != 0 {
		t.Fatalf("hook exit %d: %s", code, out.String())
	}
	got := do(t, 0, "doctor", "--no-probe")
	for _, want := range []string{
		"failures:  none recorded for this home",
		"the agents' own record",
		"interrupted: 1 turn(s) the agent left open, closed by aep-hook; the last 1:",
		"acp session/prompt [interrupted] a prompt turn was still open",
		"open:      1 run(s) never ended",
		"claude-code/s-open run",
		"healthy: 1 agent wired (not probed: --no-probe).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "PROBLEM") {
		t.Errorf("an agent's own record counted as a problem:\n%s", got)
	}
	el.Record(shim.Failure{Adapter: "codex", Stage: "write", Error: "disk full"})
	got = do(t, 1, "doctor", "--no-probe")
	for _, want := range []string{"failures:  1 recorded in", "codex [write] disk full",
		"  PROBLEM failures: 1 in the last 24 hours, the newest: codex write: disk full; fix: read them under failures below; once dealt with, aep-hook doctor --ack stops counting them\n",
		"1 problem found: fix them", "interrupted: 1 turn(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
