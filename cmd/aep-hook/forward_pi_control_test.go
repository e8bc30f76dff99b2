package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/answer"
)

// pi's tool_call gate over the control loop, through the built binary: a
// real `aep-hook relay`, the forwarder fed what the extension writes
// (`aep-hook forward pi`), the held run the extension starts for a gated
// call (`aep-hook forward pi --hold`) and the AEP-0004 sender package.

// piLine is one forwarder line of session for the pi event ev.
func piLine(session, ev string) string {
	return `{"session":{"id":"` + session + `"},"event":` + ev + "}\n"
}

// piForward feeds lines to one `aep-hook forward pi` and waits for it.
func (f *ctlFleet) piForward(lines ...string) {
	f.t.Helper()
	cmd := exec.Command(bin, "forward", "pi")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "AEP_HOME=" + f.home, "AEP_HOST=" + ctlHost, "TMPDIR=" + f.t.TempDir()}
	cmd.Stdin = strings.NewReader(strings.Join(lines, ""))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		f.t.Fatalf("forward pi: %v %q", err, out)
	}
}

// piHold starts the held run of line against relay with the gate on for
// bash; wait returns its stdout once it exited.
func (f *ctlFleet) piHold(relay, line string) (wait func() string) {
	f.t.Helper()
	cmd := exec.Command(bin, "forward", "pi", "--hold")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "AEP_HOME=" + f.home, "AEP_HOST=" + ctlHost, "TMPDIR=" + f.t.TempDir(),
		"AEP_CONTROL=1", "AEP_CONTROL_TOOLS=bash", "AEP_RELAY=" + relay, "AEP_RELAY_TOKEN=" + ctlEmitTok, "AEP_CONTROL_BUDGET=20s"}
	cmd.Stdin = strings.NewReader(line)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	return func() string {
		f.t.Helper()
		if err := cmd.Wait(); err != nil || errb.Len() > 0 {
			f.t.Fatalf("forward pi --hold: %v %q", err, errb.String())
		}
		return out.String()
	}
}

// TestPiGateOverControl: a gated tool_call waits for the answer; a
// refusal becomes the handler's block result carrying the reason, and
// pi's report of the blocked call (tool_execution_end, isError) is
// recorded as the call's denial by policy, caused by the command; an
// allow replies nothing (the call runs) and the call completes; with no
// relay the run asks nothing and replies nothing; an ungated tool is not
// held.
func TestPiGateOverControl(t *testing.T) {
	f := newCtlFleet(t)
	cn := f.sender()
	start := func(s, call string) {
		f.piForward(piLine(s, `{"type":"session_start","reason":"startup"}`), piLine(s, `{"type":"agent_start"}`),
			piLine(s, `{"type":"tool_execution_start","toolCallId":"`+call+`","toolName":"bash","args":{"command":"rm -f x"}}`))
	}
	toolCall := func(s, call, tool string) string {
		return piLine(s, `{"type":"tool_call","toolCallId":"`+call+`","toolName":"`+tool+`","input":{"command":"rm -f x"}}`)
	}
	end := func(s, call string, isError bool, text string) {
		e := "false"
		if isError {
			e = "true"
		}
		f.piForward(piLine(s, `{"type":"tool_execution_end","toolCallId":"`+call+`","toolName":"bash","result":{"content":[{"type":"text","text":"`+text+`"}]},"isError":`+e+`}`),
			piLine(s, `{"type":"agent_end","messages":[{"role":"assistant","stopReason":"stop"}]}`))
	}
	// validate holds the session's log, written by the forwarder and the
	// held run in turn, to AEP (order, references, acks, schemas).
	validate := func(s string) {
		t.Helper()
		out, err := exec.Command(bin, "validate", filepath.Join(f.home, "logs", "pi", s+".jsonl")).CombinedOutput()
		if err != nil {
			t.Errorf("validate %s: %v\n%s", s, err, out)
		}
	}
	types := func(evs []map[string]any) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e["type"].(string))
		}
		return out
	}

	t.Run("deny", func(t *testing.T) {
		start("pd", "c1")
		wait := f.piHold(f.url, toolCall("pd", "c1", "bash"))
		r := f.pending(cn, "pd", "bash")
		if len(r.Options) != 2 || r.Options[0].ID != "allow" || r.Options[1].ID != "deny" {
			t.Fatalf("options %+v", r.Options)
		}
		out := respondTo(t, cn, r, answer.Answer{Option: "deny", Text: "Use the scratch folder."})
		if out.Ack != answer.Accepted {
			t.Fatalf("outcome %+v", out)
		}
		if got := wait(); got != `{"block":true,"reason":"Use the scratch folder."}` {
			t.Fatalf("reply %q", got)
		}
		end("pd", "c1", true, "Use the scratch folder.")
		evs := f.events("pi", "pd")
		var denied map[string]any
		for _, e := range evs {
			switch e["type"] {
			case "tool.denied":
				denied = e
			case "tool.failed":
				t.Errorf("the refused call recorded as failed: %v", types(evs))
			}
		}
		if denied == nil || denied["cause"] != out.Command || dataOf(denied)["by"] != "policy" {
			t.Fatalf("tool.denied %v (command %s) in %v", denied, out.Command, types(evs))
		}
		validate("pd")
	})

	t.Run("allow", func(t *testing.T) {
		start("pa", "c2")
		wait := f.piHold(f.url, toolCall("pa", "c2", "bash"))
		r := f.pending(cn, "pa", "bash")
		if out := respondTo(t, cn, r, answer.Answer{Option: "allow"}); out.Ack != answer.Accepted {
			t.Fatalf("outcome %+v", out)
		}
		if got := wait(); got != "" {
			t.Fatalf("reply %q, want none (the call runs)", got)
		}
		end("pa", "c2", false, "ok")
		got := strings.Join(types(f.events("pi", "pa")), " ")
		if !strings.Contains(got, "attention.requested control.attention.respond control.accepted attention.answered attention.resolved tool.completed") {
			t.Errorf("events %s", got)
		}
		validate("pa")
	})

	t.Run("down", func(t *testing.T) {
		start("pn", "c3")
		if got := f.piHold("ws://127.0.0.1:9/socket", toolCall("pn", "c3", "bash"))(); got != "" {
			t.Fatalf("reply %q with no relay", got)
		}
		end("pn", "c3", false, "ok")
		for _, e := range f.events("pi", "pn") {
			if strings.HasPrefix(e["type"].(string), "attention.") {
				t.Errorf("asked with no relay: %v", e)
			}
		}
	})

	t.Run("ungated", func(t *testing.T) {
		start("pu", "c4")
		if got := f.piHold(f.url, toolCall("pu", "c4", "read"))(); got != "" {
			t.Fatalf("reply %q for an ungated tool", got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), ctlWait)
		defer cancel()
		rs, err := cn.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Session == "pu" {
				t.Errorf("an ungated call raised %+v", r)
			}
		}
	})
}
