package openhands_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/openhands"
	"github.com/aep-hook/aep-hook/harness/ohstub"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// status is a ConversationStateUpdateEvent carrying an execution status.
func status(s string) map[string]any {
	return map[string]any{"kind": "ConversationStateUpdateEvent", "source": "environment", "key": "execution_status", "value": s}
}

func action(call, tool, resp string, args map[string]any) map[string]any {
	a, _ := json.Marshal(args)
	return map[string]any{"kind": "ActionEvent", "source": "agent", "tool_name": tool, "tool_call_id": call,
		"action":          map[string]any{"kind": "ExecuteBashAction", "command": args["command"]},
		"tool_call":       map[string]any{"id": call, "type": "function", "function": map[string]any{"name": tool, "arguments": string(a)}},
		"llm_response_id": resp, "security_risk": "LOW", "thought": []any{}}
}

func observation(call, tool string, isError bool) map[string]any {
	return map[string]any{"kind": "ObservationEvent", "source": "environment", "tool_name": tool, "tool_call_id": call,
		"observation": map[string]any{"kind": "ExecuteBashObservation", "content": []any{map[string]any{"type": "text", "text": "out"}}, "is_error": isError}}
}

// waitFor polls cond (the bridge works asynchronously to the server's
// script) without any wall-clock assertion beyond a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBridgeScripted follows a scripted agent server through three
// conversations (one discovered while the bridge runs), a dropped
// connection in the middle of a run, a confirmation loop, a hook's and a
// user's rejection, compaction, an idle close, a stuck run and a deletion,
// and holds the whole record to what the script did. The bridge's only
// writes are its auth frames.
func TestBridgeScripted(t *testing.T) {
	srv := ohstub.Start("sk-oh-test")
	defer srv.Close()
	home := t.TempDir()
	cfg := shim.Config{Home: home, Host: "test-host"}
	p, _ := cfg.Policy()
	em := cfg.NewFileEmitter(p)
	v, _ := mapping.Lookup("openhands")
	errs := shim.NewErrorLog(cfg.HomeDir())
	u, _ := url.Parse(srv.URL)
	ids := shim.NewIDs()
	b := &openhands.Bridge{Base: u, APIKey: "sk-oh-test", Poll: 50 * time.Millisecond, Errors: errs,
		Nonce: func() string { return ids.New(time.Now()) }}
	r := &follow.Runner{Name: "openhands", Source: b, Handle: em.Handler(v), Errors: errs,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		Cursor: follow.FileCursor{Path: filepath.Join(home, "cursor")}}

	const a, bConv, c = "conv-a", "conv-b", "conv-c"
	srv.AddConversation(a)
	srv.AddConversation(c)
	srv.Emit(a, map[string]any{"kind": "SystemPromptEvent", "source": "agent", "system_prompt": map[string]any{"type": "text", "text": "sys"}, "tools": []any{}})
	srv.Emit(a, status("running"))
	srv.Emit(a, map[string]any{"kind": "MessageEvent", "source": "user", "llm_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "fix it"}}}})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	waitFor(t, "both sockets", func() bool { return srv.Sockets() == 2 })

	srv.Emit(a, action("c1", "execute_bash", "r1", map[string]any{"command": "ls"}))
	srv.Emit(a, observation("c1", "execute_bash", false))
	srv.Emit(a, action("c2", "execute_bash", "r2", map[string]any{"command": "cat missing"}))
	srv.Emit(a, observation("c2", "execute_bash", true))
	// The network drops; the run goes on while the bridge is away.
	srv.DropSockets()
	srv.Emit(a, status("waiting_for_confirmation"))
	srv.Emit(a, status("running"))
	srv.Emit(a, action("c3", "execute_bash", "r3", map[string]any{"command": "rm -rf /"}))
	srv.Emit(a, map[string]any{"kind": "UserRejectObservation", "source": "hook", "tool_name": "execute_bash", "tool_call_id": "c3", "rejection_reason": "policy", "rejection_source": "hook"})
	srv.Emit(a, action("c4", "execute_bash", "r4", map[string]any{"command": "curl x"}))
	srv.Emit(a, map[string]any{"kind": "UserRejectObservation", "source": "user", "tool_name": "execute_bash", "tool_call_id": "c4", "rejection_reason": "no", "rejection_source": "user"})
	srv.Emit(a, map[string]any{"kind": "Condensation", "source": "environment", "forgotten_event_ids": []any{"x", "y"}, "summary": "s"})
	srv.Emit(a, map[string]any{"kind": "AgentErrorEvent", "source": "agent", "tool_name": "browser", "tool_call_id": "c5", "error": "crashed"})
	srv.Emit(a, map[string]any{"kind": "TokenEvent", "source": "agent", "prompt_token_ids": []any{1}, "response_token_ids": []any{2}})
	srv.Emit(a, status("finished"))
	waitFor(t, "reconnected", func() bool { return srv.Sockets() == 2 })

	// A conversation created while the bridge runs is discovered.
	srv.Emit(bConv, status("running"))
	waitFor(t, "the new conversation", func() bool { return srv.Sockets() == 3 })
	srv.Emit(bConv, action("d1", "file_read", "s1", map[string]any{"command": "x"}))
	srv.Emit(bConv, observation("d1", "file_read", false))
	srv.Emit(bConv, status("idle"))
	srv.Emit(bConv, status("running"))
	srv.Emit(bConv, map[string]any{"kind": "ConversationErrorEvent", "source": "environment", "code": "AgentStuckInLoopError", "detail": "loop"})
	srv.Emit(bConv, status("stuck"))

	srv.Emit(c, status("running"))
	srv.Emit(c, status("waiting_for_confirmation"))
	last := srv.Emit(c, status("deleting"))
	waitFor(t, "the last event recorded", func() bool {
		logs, _ := realagents.ReadLogs(filepath.Join(home, "logs", "openhands"))
		for _, lg := range logs {
			for _, e := range lg.Events {
				if d, _ := e["data"].(map[string]any); d["vendor_event_id"] == idOf(last) {
					return true
				}
			}
		}
		return false
	})
	srv.Delete(c)
	cancel()
	<-done

	logs, err := realagents.ReadLogs(filepath.Join(home, "logs", "openhands"))
	if err != nil {
		t.Fatal(err)
	}
	var schemas *truth.Schemas
	if dir, ok := truth.SchemaDir(); ok {
		schemas, _ = truth.LoadSchemas(dir)
	}
	facts := truth.Facts{
		Runs: 4, Sessions: 3, Ended: 1, Failures: 1, Interrupts: 1, Compactions: 1,
		// The observer sees confirmation loops resolve, not who answered.
		Answers: truth.Any,
		// A user's rejection is vendor-scoped (no tool.denied by user);
		// AgentErrorEvent c5 failed a call whose action the script never sent.
		OpenTools: 1,
	}
	t.Logf("record: %s", truth.Summary(logs))
	for _, p := range truth.Check(logs, facts, schemas) {
		t.Error(p)
	}
	count := map[string]int{}
	for _, lg := range logs {
		for _, e := range lg.Events {
			count[e["type"].(string)]++
		}
	}
	for typ, want := range map[string]int{"tool.requested": 5, "tool.completed": 2, "tool.failed": 2, "tool.denied": 1,
		"attention.requested": 2, "attention.resolved": 2, "x.openhands.user_reject.observation": 1} {
		if count[typ] != want {
			t.Errorf("%s: %d, want %d (record: %s)", typ, count[typ], want, truth.Summary(logs))
		}
	}
	for _, f := range srv.Received() {
		if !strings.Contains(f, `"type":"auth"`) {
			t.Errorf("the bridge wrote a frame that is not auth: %s", f)
		}
	}
	if n := len(srv.Received()); n < 4 {
		t.Errorf("%d auth frames, want one per socket (at least 4)", n)
	}
	if fs, _ := shim.ReadFailures(filepath.Join(home, "internal", "errors.jsonl")); len(fs) > 0 {
		for _, f := range fs {
			if f.Stage != "read" { // the dropped sockets
				t.Errorf("failure recorded: %+v", f)
			}
		}
	}
}

func idOf(ev []byte) string {
	var m map[string]any
	json.Unmarshal(ev, &m)
	return fmt.Sprint(m["id"])
}
