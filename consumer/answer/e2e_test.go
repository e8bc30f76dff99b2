package answer_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/relaytest"
)

// The AEP-0004 §7 fixture classes through the built binary: a real
// `aep-hook relay`, real hook processes holding their moments, and the
// sender package (or a raw WebSocket where a test must send exactly the
// same bytes twice).

var bin string

func TestMain(m *testing.M) {
	relaytest.Main(m, "aep-answer-e2e-", func(dir string) error {
		// The binary as installed: the hook-only build, which runs every
		// hook (the held ones too) and hands other verbs (relay, answer)
		// to the full binary beside it.
		bin = filepath.Join(dir, "aep-hook")
		if err := relaytest.Build(bin+"-full", "../../cmd/aep-hook", relaytest.Race); err != nil {
			return err
		}
		return relaytest.Build(bin, "../../cmd/aep-hook/hookonly", relaytest.Race)
	})
}

// wait bounds every wait: a failure bound against a hang, never a measure
// of speed.
const wait = 30 * time.Second

const (
	emitTok  = "emit-e2e-token-0123456789"
	aliceTok = "alice-e2e-token-0123456789"
	bobTok   = "bob-e2e-token-0123456789" // watches, never commands
	host     = "e2e-host"
)

// fleet is one relay with its tokens and home, where the hooks write too.
type fleet struct {
	t    *testing.T
	home string
	url  string
	cmd  *exec.Cmd
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	home := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	lines := []string{
		`{"token":"` + emitTok + `","identity":"emitter:` + host + `/*","scopes":["write:*"]}`,
		`{"token":"` + aliceTok + `","identity":"consumer:alice","scopes":["subscribe:*","read:*","control:control.*"]}`,
		`{"token":"` + bobTok + `","identity":"consumer:bob","scopes":["subscribe:*","read:*"]}`,
	}
	if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proc, addr := relaytest.StartRelay(t, relaytest.Relay{
		Bin:  bin,
		Env:  append(os.Environ(), "AEP_HOME="+home),
		Args: []string{"--tokens", tokens},
		Wait: wait,
	})
	return &fleet{t: t, home: home, url: "ws://" + addr + "/socket", cmd: proc.Cmd}
}

// hookProc is one running hook process.
type hookProc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan error
	start  time.Time
	took   time.Duration
}

// hook starts `aep-hook vendor` on payload with control on against the
// fleet's relay (extra environment last, so it can override).
func (f *fleet) hook(vendor, payload string, extra ...string) *hookProc {
	f.t.Helper()
	h := &hookProc{done: make(chan error, 1)}
	h.cmd = exec.Command(bin, vendor)
	h.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "AEP_HOME=" + f.home, "AEP_HOST=" + host,
		"AEP_CONTROL=1", "AEP_RELAY=" + f.url, "AEP_RELAY_TOKEN=" + emitTok, "AEP_CONTROL_BUDGET=25s"}, extra...)
	h.cmd.Stdin = strings.NewReader(payload)
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
	h.start = time.Now()
	if err := h.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	go func() {
		err := h.cmd.Wait()
		h.took = time.Since(h.start)
		h.done <- err
	}()
	f.t.Cleanup(func() { h.cmd.Process.Kill() })
	return h
}

// result waits for the hook to exit and returns its stdout.
func (h *hookProc) result(t *testing.T) string {
	t.Helper()
	select {
	case err := <-h.done:
		if err != nil {
			t.Fatalf("hook: %v\n%s", err, h.stderr.String())
		}
		if h.stderr.Len() > 0 {
			t.Errorf("hook stderr: %s", h.stderr.String())
		}
		return h.stdout.String()
	case <-time.After(wait):
		t.Fatal("the hook did not finish")
	}
	return ""
}

func (f *fleet) sender(token, as string) *answer.Conn {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cn, err := (&answer.Client{URL: f.url, Token: token, Agent: as, Host: "sender-host", Window: 3 * time.Second}).Dial(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cn.Close() })
	return cn
}

// pending waits until a request of session is pending and answerable.
func (f *fleet) pending(cn *answer.Conn, session string) answer.Request {
	f.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		rs, err := cn.Pending(ctx)
		cancel()
		if err != nil {
			f.t.Fatal(err)
		}
		for _, r := range rs {
			if r.Session == session && r.Answerable {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("no answerable request of session %s", session)
	return answer.Request{}
}

// log reads a session's log as events.
func (f *fleet) log(agent, session string) []map[string]any {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.home, "logs", agent, session+".jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func types(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e["type"].(string))
	}
	return out
}

func perm(session, cmd string) string {
	return `{"hook_event_name":"PermissionRequest","session_id":"` + session + `","tool_name":"Bash","tool_input":{"command":"` + cmd + `"}}`
}

func respond(t *testing.T, cn *answer.Conn, r answer.Request, a answer.Answer) answer.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	out, err := cn.Respond(ctx, r, a)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip is the attention round trip (AEP-0004 §7): request,
// respond, answered, resolved, every outcome cause-linked to the command,
// the answer the hook's reply.
func TestRoundTrip(t *testing.T) {
	f := newFleet(t)
	h := f.hook("claude-code", perm("s-round", "touch x"))
	cn := f.sender(aliceTok, "alice")
	r := f.pending(cn, "s-round")
	if r.Agent != "claude-code" || r.Kind != "permission" || len(r.Options) != 2 {
		t.Fatalf("pending %+v", r)
	}
	a, _ := answer.Allow(r)
	out := respond(t, cn, r, a)
	if out.Ack != answer.Accepted || out.Sent != 1 || out.Answered == nil || out.Resolved == nil {
		t.Fatalf("outcome %+v", out)
	}
	if got, want := h.result(t), `{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`; got != want {
		t.Fatalf("reply %s, want %s", got, want)
	}
	evs := f.log("claude-code", "s-round")
	if got, want := strings.Join(types(evs), " "), "attention.requested control.attention.respond control.accepted attention.answered attention.resolved"; got != want {
		t.Fatalf("log %s, want %s", got, want)
	}
	req, cmd := evs[0], evs[1]
	if via := req["data"].(map[string]any)["respond_via"]; fmt.Sprint(via) != "[control]" {
		t.Errorf("respond_via %v", via)
	}
	if cmd["id"] != out.Command || cmd["agent"] != "alice" || cmd["subject"] != req["id"] {
		t.Errorf("command %v", cmd)
	}
	for _, e := range evs[2:] {
		if e["cause"] != out.Command {
			t.Errorf("%s cause %v, want the command %s", e["type"], e["cause"], out.Command)
		}
	}
	for _, e := range evs[3:] {
		if e["subject"] != req["id"] {
			t.Errorf("%s subject %v", e["type"], e["subject"])
		}
	}
	d := evs[3]["data"].(map[string]any)
	if d["by"] != "alice" || d["via"] != "control" || fmt.Sprint(d["answer"]) != "map[option:yes]" {
		t.Errorf("answered %v", d)
	}
	if d := evs[4]["data"].(map[string]any); d["resolution"] != "answered" {
		t.Errorf("resolved %v", d)
	}
}

// rawConsumer is a consumer connection sending exact bytes.
type rawConsumer struct {
	t  *testing.T
	ws *websocket.Conn
}

func (f *fleet) raw(token, role, agent string) *rawConsumer {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ws.CloseNow() })
	rc := &rawConsumer{t: f.t, ws: ws}
	caps := `{}`
	if role == "emitter" {
		caps = `{"control":{"accepts":["control.attention.respond"],"ack_window_ms":10000}}`
	}
	rc.send(`{"type":"hello","versions":["0.1"],"role":"` + role + `","identity":{"agent":"` + agent + `"},"capabilities":` + caps + `}`)
	if m := rc.next(func(m map[string]any) bool { return true }); m["type"] != "hello" {
		f.t.Fatalf("hello answered %v", m)
	}
	return rc
}

func (rc *rawConsumer) send(s string) {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := rc.ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		rc.t.Fatal(err)
	}
}

// next returns the first message match accepts, with its raw bytes under
// "raw".
func (rc *rawConsumer) next(match func(map[string]any) bool) map[string]any {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		_, b, err := rc.ws.Read(ctx)
		if err != nil {
			rc.t.Fatalf("read: %v", err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		if m["type"] == "ping" {
			continue
		}
		if match(m) {
			m["raw"] = string(b)
			return m
		}
	}
}

func command(id, session, subject, answerJSON string) string {
	return `{"aep":"0.1","id":"` + id + `","type":"control.attention.respond","subject":"` + subject +
		`","time":"2026-12-01T10:00:00.000Z","source":"aep://sender-host/agent/alice","agent":"alice","session":"` + session +
		`","cause":"` + subject + `","data":{"answer":` + answerJSON + `}}`
}

// TestDedupeOnRetry: one decision per command, a redelivery answered with
// the recorded ack byte-identically (AEP-0004 §3), never a second event;
// an invalid answer leaves the request pending for a good one.
func TestDedupeOnRetry(t *testing.T) {
	f := newFleet(t)
	h := f.hook("codex", perm("s-dedupe", "rm -rf build"))
	cn := f.sender(aliceTok, "alice")
	r := f.pending(cn, "s-dedupe")
	rc := f.raw(aliceTok, "both", "alice")
	rc.send(`{"type":"subscribe","id":"s1","filter":{"source":["` + r.Source + `"],"type":["control.*","attention.*"]}}`)
	rc.next(func(m map[string]any) bool { return m["type"] == "subscribed" })
	ackOf := func(id string) func(map[string]any) bool {
		return func(m map[string]any) bool {
			return strings.HasPrefix(fmt.Sprint(m["type"]), "control.") && m["cause"] == id
		}
	}
	bad := command("01JCMDBAD000000000000000000", "s-dedupe", r.ID, `{"option":"always"}`)
	rc.send(bad)
	first := rc.next(ackOf("01JCMDBAD000000000000000000"))
	rc.send(bad)
	again := rc.next(ackOf("01JCMDBAD000000000000000000"))
	if first["type"] != "control.rejected" || first["raw"] != again["raw"] {
		t.Fatalf("redelivery answered\n%v\nfirst\n%v", again["raw"], first["raw"])
	}
	if d := first["data"].(map[string]any); d["reason"] != "invalid" {
		t.Errorf("rejected %v", d)
	}
	good := command("01JCMDGOOD00000000000000000", "s-dedupe", r.ID, `{"text":"deny"}`)
	rc.send(good)
	if ack := rc.next(ackOf("01JCMDGOOD00000000000000000")); ack["type"] != "control.accepted" {
		t.Fatalf("ack %v", ack)
	}
	want := `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied over the control loop (aep-hook): do not run this call."},"hookEventName":"PermissionRequest"}}`
	if got := h.result(t); got != want {
		t.Fatalf("reply %s", got)
	}
	evs := f.log("codex", "s-dedupe")
	if got, want := strings.Join(types(evs), " "), "attention.requested control.attention.respond control.rejected control.attention.respond control.accepted attention.answered attention.resolved"; got != want {
		t.Fatalf("log %s\nwant %s", got, want)
	}
	if d := evs[5]["data"].(map[string]any); fmt.Sprint(d["answer"]) != "map[option:deny]" {
		t.Errorf("the word deny applied as %v", d["answer"])
	}
}

// TestWindowTimeout: silence past the window is a timeout at the sender,
// which re-sent the command with the same bytes, never a fresh id.
func TestWindowTimeout(t *testing.T) {
	f := newFleet(t)
	// A target that claims a session and never acknowledges.
	mute := f.raw(emitTok, "emitter", "codex")
	mute.send(`{"aep":"0.1","id":"01JMUTE0000000000000000000","type":"attention.requested","time":"2026-12-01T10:00:00.000Z","source":"aep://` + host +
		`/agent/codex/session/s-mute","agent":"codex","session":"s-mute","seq":0,"epoch":0,"data":{"kind":"permission","prompt":"p","options":[{"id":"allow","label":"Allow"}],"respond_via":["control"]}}`)
	cn := f.sender(aliceTok, "alice")
	r := f.pending(cn, "s-mute")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	got := make(chan []string, 1)
	go func() {
		var seen []string
		for len(seen) < 3 {
			_, b, err := mute.ws.Read(ctx)
			if err != nil {
				break
			}
			if strings.Contains(string(b), "control.attention.respond") {
				seen = append(seen, string(b))
			}
		}
		got <- seen
	}()
	out, err := cn.Respond(ctx, r, answer.Answer{Option: "allow"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ack != answer.Timeout || out.Sent != 3 {
		t.Fatalf("outcome %+v", out)
	}
	seen := <-got
	if len(seen) != 3 || seen[0] != seen[1] || seen[1] != seen[2] {
		t.Fatalf("the target received %d deliveries, not three identical ones: %q", len(seen), seen)
	}
}

// TestCapabilityNack: a command type the target did not declare is
// refused unsupported (here by the relay, which knows the declaration) and
// the held request stays answerable.
func TestCapabilityNack(t *testing.T) {
	f := newFleet(t)
	h := f.hook("qwen-code", perm("s-caps", "ls"))
	cn := f.sender(aliceTok, "alice")
	r := f.pending(cn, "s-caps")
	rc := f.raw(aliceTok, "both", "alice")
	rc.send(`{"aep":"0.1","id":"01JCANCEL00000000000000000","type":"control.cancel","time":"2026-12-01T10:00:00.000Z","source":"aep://sender-host/agent/alice","agent":"alice","session":"s-caps","data":{"scope":"run"}}`)
	m := rc.next(func(m map[string]any) bool { return m["type"] == "error" })
	if m["cause"] != "01JCANCEL00000000000000000" || m["code"] != "unsupported" {
		t.Fatalf("refusal %v", m)
	}
	// An option the vendor's hook cannot apply: the target refuses it.
	out := respond(t, cn, r, answer.Answer{Option: "proceed_always_user"})
	if out.Ack != answer.Rejected || out.Reason != "refused" {
		t.Fatalf("outcome %+v", out)
	}
	a, _ := answer.Allow(r)
	if out := respond(t, cn, r, a); out.Ack != answer.Accepted {
		t.Fatalf("outcome %+v", out)
	}
	if got := h.result(t); !strings.Contains(got, `"behavior":"allow"`) {
		t.Fatalf("reply %s", got)
	}
}

// TestRelayBehalfRefusal: commands the relay refuses for the target (no
// route, no control scope) get the cause-correlated error frame, and the
// addressed session's replay never holds the refusal (AEP-0004 §8).
func TestRelayBehalfRefusal(t *testing.T) {
	f := newFleet(t)
	// A hook whose budget passes: the card stays, the route goes.
	h := f.hook("claude-code", perm("s-gone", "touch y"), "AEP_CONTROL_BUDGET=1s")
	cn := f.sender(aliceTok, "alice")
	r := f.pending(cn, "s-gone")
	if got := h.result(t); got != "" {
		t.Fatalf("a hook whose budget passed replied %q, want the neutral reply", got)
	}
	out := respond(t, cn, r, answer.Answer{Option: "yes"})
	if out.Ack != answer.Refused || out.Reason != "no-route" {
		t.Fatalf("outcome %+v", out)
	}
	bob := f.sender(bobTok, "bob")
	h2 := f.hook("claude-code", perm("s-bob", "touch z"), "AEP_CONTROL_BUDGET=3s")
	r2 := f.pending(bob, "s-bob")
	if out := respond(t, bob, r2, answer.Answer{Option: "yes"}); out.Ack != answer.Refused || out.Reason != "unauthorized" {
		t.Fatalf("outcome %+v", out)
	}
	h2.result(t)
	rc := f.raw(aliceTok, "consumer", "alice")
	rc.send(`{"type":"subscribe","id":"all","from":"all","filter":{"session":["s-gone","s-bob"]}}`)
	rc.send(`{"type":"ping","t":7}`)
	for {
		m := rc.next(func(map[string]any) bool { return true })
		if m["type"] == "pong" {
			break
		}
		if strings.HasPrefix(fmt.Sprint(m["type"]), "control.") || m["type"] == "error" {
			t.Fatalf("the session's replay holds a refusal: %v", m["raw"])
		}
	}
	// Nothing answered them over control: no terminal was invented.
	for _, s := range []string{"s-gone", "s-bob"} {
		if got := strings.Join(types(f.log("claude-code", s)), " "); got != "attention.requested" {
			t.Errorf("%s log %s", s, got)
		}
	}
}

// TestFailOpen: without a relay the hook replies neutrally at once and the
// card says oob; a relay that goes while the hook holds its moment frees
// it at once, not at its budget.
func TestFailOpen(t *testing.T) {
	home := t.TempDir()
	h := &hookProc{done: make(chan error, 1)}
	h.cmd = exec.Command(bin, "claude-code")
	h.cmd.Env = []string{"AEP_HOME=" + home, "AEP_HOST=" + host, "AEP_CONTROL=1", "AEP_RELAY=ws://127.0.0.1:1/socket", "AEP_CONTROL_BUDGET=25s"}
	h.cmd.Stdin = strings.NewReader(perm("s-none", "ls"))
	out, err := h.cmd.Output()
	if err != nil || len(out) != 0 {
		t.Fatalf("hook %q %v", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(home, "logs", "claude-code", "s-none.jsonl"))
	if !strings.Contains(string(b), `"respond_via":["oob"]`) {
		t.Errorf("card %s", b)
	}
	if _, err := os.Stat(filepath.Join(home, "internal", "errors.jsonl")); err == nil {
		t.Error("a relay that is not listening was recorded as a failure")
	}

	f := newFleet(t)
	held := f.hook("claude-code", perm("s-drop", "ls"))
	f.pending(f.sender(aliceTok, "alice"), "s-drop")
	f.cmd.Process.Kill()
	select {
	case <-held.done:
		if held.stdout.Len() != 0 {
			t.Errorf("reply %q", held.stdout.String())
		}
		if held.took > 20*time.Second {
			t.Errorf("the hook waited %s after the relay went", held.took)
		}
	case <-time.After(wait):
		t.Fatal("the hook is still held after its relay went")
	}
}

// TestFormAnswer: an AskUserQuestion answered with values (AEP-0006): a
// missing required field is nacked invalid and the form stays pending,
// then the answer reaches Claude Code through updatedInput.
func TestFormAnswer(t *testing.T) {
	f := newFleet(t)
	ask := `{"hook_event_name":"PermissionRequest","session_id":"s-form","tool_name":"AskUserQuestion","tool_input":{"questions":[` +
		`{"question":"Which color?","header":"Color","options":[{"label":"Red"},{"label":"Blue"}],"multiSelect":false},` +
		`{"question":"Which sizes?","header":"Size","options":[{"label":"S"},{"label":"M"}],"multiSelect":true}]}}`
	h := f.hook("claude-code", ask)
	cn := f.sender(aliceTok, "alice")
	r := f.pending(cn, "s-form")
	if r.Kind != "form" {
		t.Fatalf("pending %+v", r)
	}
	out := respond(t, cn, r, answer.Answer{Values: map[string]any{"1": "2"}})
	// The detail is content ([redacted]), above the default control.*
	// ceiling: only the reason arrives.
	if out.Ack != answer.Rejected || out.Reason != "invalid" || out.Detail != "" {
		t.Fatalf("outcome %+v", out)
	}
	out = respond(t, cn, r, answer.Answer{Values: map[string]any{"1": "2", "2": []any{"1", "2"}}})
	if out.Ack != answer.Accepted {
		t.Fatalf("outcome %+v", out)
	}
	got := h.result(t)
	if !strings.Contains(got, `"answers":{"Which color?":"Blue","Which sizes?":"S, M"}`) {
		t.Fatalf("reply %s", got)
	}
}

// TestNoLoopNoControlClaim: respond_via says control only when the loop
// holds that very request. With control on and a relay listening, a relay
// that refuses the hook's token, and a permission moment no table holds
// (Kimi Code's, observed only), both reply neutrally and their requests
// say oob; the refusal is recorded where doctor shows it.
func TestNoLoopNoControlClaim(t *testing.T) {
	f := newFleet(t)
	refused := f.hook("claude-code", perm("s-refused", "ls"), "AEP_RELAY_TOKEN=not-a-token-of-this-relay")
	if got := refused.result(t); got != "" {
		t.Fatalf("a refused hook replied %q, want the neutral reply", got)
	}
	note := f.hook("kimi-code", `{"hook_event_name":"PermissionRequest","session_id":"s-note","tool_name":"Bash","tool_call_id":"c1","action":"Running: ls"}`)
	if got := note.result(t); got != "" {
		t.Fatalf("an unheld moment replied %q", got)
	}
	for s, agent := range map[string]string{"s-refused": "claude-code", "s-note": "kimi-code"} {
		n := 0
		for _, e := range f.log(agent, s) {
			if e["type"] != "attention.requested" {
				continue
			}
			n++
			if via := fmt.Sprint(e["data"].(map[string]any)["respond_via"]); via != "[oob]" {
				t.Errorf("%s: respond_via %s with no loop holding the request", s, via)
			}
		}
		if n != 1 {
			t.Errorf("%s: %d attention.requested, want 1", s, n)
		}
	}
	b, err := os.ReadFile(filepath.Join(f.home, "internal", "errors.jsonl"))
	if err != nil || !strings.Contains(string(b), `"stage":"control"`) {
		t.Errorf("the refusal is not recorded: %s %v", b, err)
	}
}
