package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginBinaryFlag: `plugin --binary` names the binary the plugin
// starts, as install's --binary does; --bin, the old name, still works and
// says it is deprecated.
func TestPluginBinaryFlag(t *testing.T) {
	for _, args := range [][]string{{"plugin", "pi", "--binary", "/opt/aep/aep-hook"}, {"plugin", "opencode", "--bin", "/opt/aep/aep-hook"}} {
		got := do(t, 0, args...)
		if !strings.Contains(got, `process.env.AEP_HOOK_BIN || "/opt/aep/aep-hook"`) {
			t.Errorf("%v: the plugin does not start /opt/aep/aep-hook:\n%.400s", args, got)
		}
		if dep := strings.Contains(got, "aep-hook: --bin is deprecated; use --binary"); dep != (args[2] == "--bin") {
			t.Errorf("%v: deprecation notice %v", args, dep)
		}
	}
}

// TestKeepPIIFlag: --keep-pii keeps e-mail addresses; --no-pii, its old
// name, does the same and says it is deprecated; without either they are
// redacted.
func TestKeepPIIFlag(t *testing.T) {
	for _, tc := range []struct {
		flag      string
		kept, dep bool
	}{{"", false, false}, {"--keep-pii", true, false}, {"--no-pii", true, true}} {
		args := []string{"redact"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		r := runHook(t, hookEnv(t.TempDir(), t.TempDir()), []byte("mail ada@example.com\n"), args...)
		if r.code != 0 || strings.Contains(r.stdout, "ada@example.com") != tc.kept ||
			strings.Contains(r.stderr, "--no-pii is deprecated; use --keep-pii") != tc.dep {
			t.Errorf("%q: exit %d stdout %q stderr %q", tc.flag, r.code, r.stdout, r.stderr)
		}
	}
}

// TestPiExtensionDeltas loads the pi extension in Node with a stand-in
// for pi's bus: AEP_DELTAS=1 (the OpenCode and Kilo plugins' name) and
// AEP_PI_DELTAS=1 (its old name) both subscribe to the stream updates;
// neither set, it does not.
func TestPiExtensionDeltas(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	dir := t.TempDir()
	ext := filepath.Join(dir, "aep-hook.mjs")
	if err := os.WriteFile(ext, []byte(do(t, 0, "plugin", "pi", "--binary", "/nonexistent/aep-hook")), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import(process.argv[1]).then(m => { const on = []; m.default({ on: n => on.push(n) }); console.log(on.includes("message_update")); })`
	for _, tc := range []struct {
		env  string
		want string
	}{{"", "false"}, {"AEP_DELTAS=1", "true"}, {"AEP_PI_DELTAS=1", "true"}} {
		cmd := exec.Command(node, "--input-type=module", "-e", script, ext)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("%q: %v %s, want %s", tc.env, err, out, tc.want)
		}
	}
}
