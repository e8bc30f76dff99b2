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
	if r.code != 1 || !strings.Contains(r.stdout, "bad.jsonl:1: violation: session-scoped run.started must carry seq [AEP-0001 §5.2: session-scoped events carry session and seq]") {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	r = runHook(t, hookEnv(dir, dir), []byte(`{"aep":"0.1","id":"1","type":"agent.heartbeat","time":"2026-01-01T00:00:00Z","source":"aep://h/agent/a","agent":"a"}`+"\n"), "validate")
	if r.code != 0 || !strings.Contains(r.stdout, "1 events checked") {
		t.Fatalf("stdin: exit %d\n%s", r.code, r.stdout)
	}
}

// TestValidateCompleteOpenRun: with --complete, a run that never closed is
// a warning at the end (exit 0: zero terminals is legal); without it,
// nothing.
func TestValidateCompleteOpenRun(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "s.jsonl")
	os.WriteFile(log, []byte(`{"aep":"0.1","id":"1","type":"run.started","time":"2026-01-01T00:00:00Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","run":"r1","seq":0}`+"\n"), 0o644)
	r := runHook(t, hookEnv(dir, dir), nil, "validate", "--complete", log)
	want := log + ":1: warning: run r1 of session s never closed: no run.finished, run.failed or run.cancelled [AEP-0002 §2 convention 1: "
	if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "0 violation(s), 1 warning(s)") {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	if r = runHook(t, hookEnv(dir, dir), nil, "validate", log); r.code != 0 || strings.Contains(r.stdout, "never closed") {
		t.Fatalf("without --complete: exit %d\n%s", r.code, r.stdout)
	}
}
