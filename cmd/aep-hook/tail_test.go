package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTailVerb: `tail -n -1` (the help's "every event") parses, as do
// `--last=-1` and `-n all`; a pattern on a key other than type is refused
// as AEP-0003 §6.1 says (exit 2, never a filter that matches nothing); a
// pattern on type is taken.
func TestTailVerb(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "logs", "codex", "s1.jsonl")
	os.MkdirAll(filepath.Dir(log), 0o700)
	var lines strings.Builder
	for i, typ := range []string{"run.started", "tool.requested", "tool.completed"} {
		lines.WriteString(`{"aep":"0.1","id":"e` + string(rune('1'+i)) + `","type":"` + typ + `","time":"2026-11-30T10:00:0` + string(rune('1'+i)) + `.000Z","source":"aep://h/agent/codex/session/s1","agent":"codex","session":"s1","run":"r1","seq":` + string(rune('0'+i)) + "}\n")
	}
	os.WriteFile(log, []byte(lines.String()), 0o600)
	env := hookEnv(home, t.TempDir())
	for _, args := range [][]string{{"tail", "-n", "-1"}, {"tail", "--last", "-1"}, {"tail", "--last=-1"}, {"tail", "-n", "all"}} {
		r := runHook(t, env, nil, args...)
		if r.code != 0 || strings.Count(r.stdout, "codex/s1 r1 ") != 3 {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runHook(t, env, nil, "tail", "-n", "1")
	if r.code != 0 || strings.Count(r.stdout, "codex/s1 r1 ") != 1 {
		t.Errorf("-n 1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"agent=cod*", `{"session":"s*"}`, "type=tool*"} {
		r := runHook(t, env, nil, "tail", "--filter", f)
		if r.code != 2 || !strings.Contains(r.stderr, "invalid-filter:") || !strings.Contains(r.stderr, "applies to type only (AEP-0003 §6.1)") {
			t.Errorf("--filter %s: exit %d\n%s%s", f, r.code, r.stdout, r.stderr)
		}
	}
	if r := runHook(t, env, nil, "tail", "--filter", "type=tool.*"); r.code != 0 || strings.Count(r.stdout, "codex/s1 r1 ") != 2 {
		t.Errorf("type=tool.*: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestTimelineNotAEP: a file that is not an AEP log (a transcript whose
// lines have a type but no aep) makes timeline exit 1 and say so; an AEP
// log exits 0.
func TestTimelineNotAEP(t *testing.T) {
	dir := t.TempDir()
	notAEP := filepath.Join(dir, "transcript.jsonl")
	os.WriteFile(notAEP, []byte(`{"type":"user","message":{"content":"hi"}}`+"\n"+"plain text\n"), 0o600)
	r := runHook(t, hookEnv(dir, dir), nil, "timeline", notAEP)
	if r.code != 1 || !strings.Contains(r.stderr, "transcript.jsonl: not an AEP log: no line is an AEP event") ||
		!strings.Contains(r.stdout, "line 1: not an AEP event") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ok := filepath.Join(dir, "s.jsonl")
	os.WriteFile(ok, []byte(`{"aep":"0.1","id":"1","type":"session.started","time":"2026-01-01T00:00:00Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":0}`+"\n"), 0o600)
	if r := runHook(t, hookEnv(dir, dir), nil, "timeline", ok); r.code != 0 || !strings.Contains(r.stdout, "session.started") {
		t.Fatalf("an AEP log: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
