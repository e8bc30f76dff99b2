package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimelineNeutralisesControls runs `aep-hook timeline` as a process on
// a log whose fields carry terminal escapes (clear screen, set title, a
// bidi override, a forged line break) and asserts none reaches stdout raw.
func TestTimelineNeutralisesControls(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "s\x1b[2J.jsonl")
	line := `{"aep":"0.1","id":"01JX9YB3P4T9ZK3V8Q2W6E5R7T","type":"tool.requested\u001b]0;pwned\u0007","subject":"Bash\u001b[2J\u001b[H\n  fake line","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","run":"r","seq":0,"epoch":0,"severity":"warning\u009b","capture":"metadata","data":{"tool\u202e":{"name":"x"},"note\u001b[31m":"red\u001b[0m text \u202eevil","n":3}}` + "\n"
	if err := os.WriteFile(log, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		lines int // the file name line, then one line per event
	}{{[]string{"timeline", log}, 2}, {[]string{"timeline"}, 1}} {
		args := tc.args
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(line)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		got := out.String()
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
			if strings.Contains(got, bad) || strings.Contains(errb.String(), bad) {
				t.Errorf("%v: output holds %q raw:\n%q", args, bad, got)
			}
		}
		if n := strings.Count(got, "\n"); n != tc.lines {
			t.Errorf("%v: %d lines, want %d (a field forged a line):\n%s", args, n, tc.lines, got)
		}
		for _, want := range []string{`Bash\x1b[2J\x1b[H\n  fake line`, `note\x1b[31m=red\x1b[0m text \u202eevil`, `severity=warning\u009b`} {
			if !strings.Contains(got, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, got)
			}
		}
	}
}
