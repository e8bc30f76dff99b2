package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestResumedSessionFileName: a Claude Code resume goes to a new AEP
// session whose log file is named exactly as the README says.
func TestResumedSessionFileName(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	said := regexp.MustCompile("`(logs/<agent>/[^`]*%7Er[^`]*\\.jsonl)`").FindStringSubmatch(string(b))
	if said == nil {
		t.Fatal("the README names no resumed session's log file")
	}
	pattern := regexp.QuoteMeta(said[1])
	for ph, re := range map[string]string{"<agent>": "claude-code", "<id>": "sess-1", "<ULID>": "[0-9A-HJKMNP-TV-Z]{26}", "<digest>": "[0-9a-f]{12}"} {
		pattern = strings.ReplaceAll(pattern, regexp.QuoteMeta(ph), re)
	}
	home := t.TempDir()
	env := hookEnv(home, t.TempDir())
	for _, p := range []string{
		`{"hook_event_name":"SessionStart","session_id":"sess-1","source":"startup"}`,
		`{"hook_event_name":"SessionEnd","session_id":"sess-1","reason":"exit"}`,
		`{"hook_event_name":"SessionStart","session_id":"sess-1","source":"resume"}`,
	} {
		if r := runHook(t, env, []byte(p), "claude-code"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(home, "logs", "claude-code", "*.jsonl"))
	re := regexp.MustCompile("^" + pattern + "$")
	found := false
	for _, l := range logs {
		rel, _ := filepath.Rel(home, l)
		if re.MatchString(filepath.ToSlash(rel)) {
			found = true
			ev := readLog(t, l)[0]
			if s, _ := ev["session"].(string); !regexp.MustCompile(`^sess-1~r[0-9A-Z]{26}$`).MatchString(s) {
				t.Errorf("the resumed session is %q, not <id>~r<ULID>", s)
			}
		}
	}
	if !found {
		t.Errorf("no log matches the README's %s: %v", said[1], logs)
	}
}
