package realagents

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPiControlRecorded: replayed, the pi gate's recordings say what pi
// did. Denied: the handler's reply blocks with the reason, and pi's report
// of the blocked call is its tool.denied by policy, caused by the relay's
// command, never a failure. Allowed: the call completes after the answer.
// Relay down: nothing is asked, the call completes. Unanswered: the
// request expires and the call runs. Aborted while held: the wait ends at
// once, the request is dismissed, the call fails aborted, unrun.
func TestPiControlRecorded(t *testing.T) {
	replay := func(name string) (Fixture, []map[string]any) {
		t.Helper()
		fx, err := LoadFixture(filepath.Join(fixturesDir, "pi", "recorded", name))
		if err != nil {
			t.Fatal(err)
		}
		r := Replay(bin, fx, t.TempDir(), nil)
		for _, p := range r.Problems {
			t.Errorf("%s: %s", name, p)
		}
		var evs []map[string]any
		for _, l := range r.Logs {
			evs = append(evs, l.Events...)
		}
		return fx, evs
	}
	typesOf := func(evs []map[string]any) string {
		var ts []string
		for _, e := range evs {
			ts = append(ts, e["type"].(string))
		}
		return strings.Join(ts, " ")
	}

	fx, evs := replay("control-deny")
	if len(fx.Firings) != 1 || !strings.Contains(fx.Firings[0].Stdout, `"block":true`) || !strings.Contains(fx.Firings[0].Stdout, "Use the scratch folder instead.") {
		t.Errorf("control-deny: held reply %+v", fx.Firings)
	}
	cmds := map[any]bool{}
	var denied map[string]any
	for _, e := range evs {
		switch e["type"] {
		case "control.attention.respond":
			cmds[e["id"]] = true
		case "tool.denied":
			denied = e
		case "tool.failed":
			t.Errorf("control-deny: the refused call recorded as failed")
		}
	}
	if denied == nil || !cmds[denied["cause"]] {
		t.Errorf("control-deny: tool.denied %v not caused by the command (%v): %s", denied, cmds, typesOf(evs))
	} else if d, _ := denied["data"].(map[string]any); d["by"] != "policy" {
		t.Errorf("control-deny: tool.denied by %v", d["by"])
	}

	_, evs = replay("control-allow")
	if got := typesOf(evs); !strings.Contains(got, "attention.answered attention.resolved tool.completed") {
		t.Errorf("control-allow: %s", got)
	}

	_, evs = replay("control-down")
	got := typesOf(evs)
	if strings.Contains(got, "attention.") || !strings.Contains(got, "tool.requested tool.completed") {
		t.Errorf("control-down: %s", got)
	}

	_, evs = replay("control-timeout")
	if got := typesOf(evs); !strings.Contains(got, "attention.timeout tool.completed") {
		t.Errorf("control-timeout: %s", got)
	}

	// The abort ended the held run long before its budget, and the call
	// never ran.
	fx, evs = replay("control-abort")
	if len(fx.Firings) != 1 || fx.Firings[0].Signal != "SIGTERM" || fx.Firings[0].ElapsedMS >= 60000 {
		t.Errorf("control-abort: held firing %+v", fx.Firings)
	}
	got = typesOf(evs)
	if !strings.Contains(got, "attention.resolved tool.failed") || !strings.Contains(got, "run.cancelled") {
		t.Errorf("control-abort: %s", got)
	}
	for _, e := range evs {
		if e["type"] == "tool.failed" {
			if d, _ := e["data"].(map[string]any); d["error"].(map[string]any)["type"] != "aborted" {
				t.Errorf("control-abort: tool.failed %v", d)
			}
		}
	}
}
