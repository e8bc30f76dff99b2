//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/harness/payloads"
)

// A valid 16 MiB PostToolUse whose result is structured took about 1 s to
// bound and digest, so at the default deadline the moment was lost in
// Claude Code, Codex and Gemini CLI alike. Through the binary, each
// vendor's such moment is recorded whole: a tool.completed with its result
// digest and the call's id, which follows the result in the payload. The
// deadline here is the most AEP_HOOK_DEADLINE allows (30 s), a safety net
// far above the work, so the test does not depend on the machine's load; that the moment lands at the default
// 750 ms is a timing figure, printed by `make bench` (how many landed, with
// their digest or naming it missing), and what is recorded when the digest
// runs out of time is held with a spent deadline by the jsonbound and
// emitter tests.
func TestAttackBigStructuredLands(t *testing.T) {
	out := payloads.StructuredOutput()
	for _, agent := range payloads.StructuredAgents {
		t.Run(agent, func(t *testing.T) {
			home := t.TempDir()
			env := hookEnv(home, t.TempDir(), "AEP_HOOK_DEADLINE=30s")
			r := runHook(t, env, []byte(payloads.StructuredPostToolUse(agent, "s-big", out)), agent)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			b, _ := os.ReadFile(filepath.Join(home, "logs", agent, "s-big.jsonl"))
			var ev struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			json.Unmarshal(b, &ev)
			_, digest := ev.Data["result_digest"]
			_, missing := ev.Data["digests_missing"]
			// The call's id follows the result in the payload, as the
			// agents send it: it must survive for the call to join.
			tool, _ := ev.Data["tool"].(map[string]any)
			wantCall := map[string]any{"claude-code": "toolu_1", "codex": "call_1"}[agent]
			if ev.Type != "tool.completed" || tool == nil || tool["call_id"] != wantCall || !digest || missing {
				t.Fatalf("recorded %.400s\nfailures %+v", b, failuresIn(t, filepath.Join(home, "internal", "errors.jsonl")))
			}
		})
	}
}

// A moment lost to the deadline left no mark in its session's log (the
// error line named neither the session nor the hook) and validate
// --complete saw no gap. It now leaves an error.raised naming the hook at
// the moment's time in its own session's log, which validate --complete,
// timeline and doctor show.
func TestAttackLostMomentMarked(t *testing.T) {
	home := t.TempDir()
	env := hookEnv(home, t.TempDir(), "AEP_HOOK_DEADLINE=400ms")
	if r := runHook(t, env, codexTool("s-lost", 0), "codex"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	// A holder that keeps the session's lock and is not stuck (it runs):
	// the hook waits for it, as for any writer, until its deadline.
	holder, stdin := startHolder(t, statePath(home, "codex", "s-lost"))
	defer func() { stdin.Close(); holder.Wait() }()
	payload := `{"hook_event_name":"PostToolUse","session_id":"s-lost","turn_id":"t1","tool_name":"shell","tool_use_id":"call_9","tool_input":{"command":"ls"},"tool_response":"ok"}`
	if r := runHook(t, env, []byte(payload), "codex"); r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	stdin.Close()
	holder.Wait()
	logPath := filepath.Join(home, "logs", "codex", "s-lost.jsonl")
	evs := readLog(t, logPath)
	mark := evs[len(evs)-1]
	d, _ := mark["data"].(map[string]any)
	if mark["type"] != "error.raised" || d["code"] != "moment_lost" || d["hook"] != "PostToolUse" || mark["session"] != "s-lost" {
		t.Fatalf("last event %v, want the lost mark", mark)
	}
	// validate --complete sees the gap.
	r := runHook(t, env, nil, "validate", "--complete", logPath)
	if r.code != 1 || !strings.Contains(r.stdout, "PostToolUse moment of this session was lost") {
		t.Errorf("validate --complete: exit %d\n%s", r.code, r.stdout)
	}
	// timeline shows it.
	r = runHook(t, env, nil, "timeline", logPath)
	if !strings.Contains(r.stdout, "moment_lost") || !strings.Contains(r.stdout, "lost: a PostToolUse moment") {
		t.Errorf("timeline:\n%s", r.stdout)
	}
	// doctor shows it, with the session and the hook.
	r = runHook(t, append(env, "HOME="+home), nil, "doctor", "--no-probe")
	if !strings.Contains(r.stdout, "PostToolUse [deadline]") || !strings.Contains(r.stdout, "session s-lost") {
		t.Errorf("doctor:\n%s", r.stdout)
	}
}
