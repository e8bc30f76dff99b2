package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validateLogs runs `aep-hook validate --complete` over a home's logs (the
// demo sessions' record) and fails on any violation or warning.
func validateLogs(t *testing.T, home string, logs []string) {
	t.Helper()
	args := []string{"validate", "--complete"}
	for _, rel := range logs {
		args = append(args, filepath.Join(home, "logs", filepath.FromSlash(rel)))
	}
	r := runHook(t, hookEnv(home, t.TempDir()), nil, args...)
	if r.code != 0 || !strings.Contains(r.stdout, " 0 violation(s), 0 warning(s)") {
		t.Errorf("validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestValidateVerb(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"aep":"0.1","id":"1","type":"run.started","time":"2026-01-01T00:00:00Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s"}`+"\n"), 0o644)
	r := runHook(t, hookEnv(dir, dir), nil, "validate", bad)
	if r.code != 1 || !strings.Contains(r.stdout, "bad.jsonl:1: violation: session-scoped run.started must carry seq [AEP-0001 §5.2]") {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	r = runHook(t, hookEnv(dir, dir), []byte(`{"aep":"0.1","id":"1","type":"agent.heartbeat","time":"2026-01-01T00:00:00Z","source":"aep://h/agent/a","agent":"a"}`+"\n"), "validate")
	if r.code != 0 || !strings.Contains(r.stdout, "1 events checked") {
		t.Fatalf("stdin: exit %d\n%s", r.code, r.stdout)
	}
}
