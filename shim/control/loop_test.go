package control

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// sink keeps the lines the emitter writes.
type sink struct {
	mu    sync.Mutex
	lines []string
}

func (s *sink) Write(_, _ string, lines [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range lines {
		s.lines = append(s.lines, strings.TrimSpace(string(l)))
	}
	return nil
}

func (s *sink) types() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		var e struct{ Type string }
		json.Unmarshal([]byte(l), &e)
		out = append(out, e.Type)
	}
	return out
}

func cmd(id, typ, subject, answer string) string {
	return `{"aep":"0.1","id":"` + id + `","type":"` + typ + `","subject":"` + subject + `","time":"2026-12-01T10:00:00.000Z",` +
		`"source":"aep://h/agent/alice","agent":"alice","session":"s1","data":{"answer":` + answer + `}}`
}

// TestLoop holds the target to AEP-0004 §3 and §7 on its own side (the
// relay, which knows its declaration, refuses most of these first):
// unsupported types and unknown requests nacked, one decision per command
// and its ack re-sent byte-identically, the answer applied once (a hook
// leaves once it has answered: a later redelivery finds no route).
func TestLoop(t *testing.T) {
	script := []string{
		cmd("c1", "control.pause", "", `{}`),
		cmd("c2", Respond, "nope", `{"option":"yes"}`),
		cmd("c3", Respond, "REQ", `{"option":"maybe"}`),
		cmd("c3", Respond, "REQ", `{"option":"maybe"}`),
		cmd("c4", Respond, "REQ", `{"text":"use the staging registry"}`),
	}
	got := make(chan []string, 1)
	url := server(t, func(ctx context.Context, c *websocket.Conn, _ *http.Request) {
		c.Read(ctx) // hello
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","versions":["0.1"],"role":"both"}`))
		_, req, _ := c.Read(ctx) // the request event
		var r struct{ ID string }
		json.Unmarshal(req, &r)
		var seen []string
		for _, s := range script {
			c.Write(ctx, websocket.MessageText, []byte(strings.ReplaceAll(s, "REQ", r.ID)))
			// Each command's answer: an ack, and for c4 two outcomes.
			n := 1
			if strings.Contains(s, `"c4"`) {
				n = 3
			}
			for range n {
				_, b, err := c.Read(ctx)
				if err != nil {
					got <- seen
					return
				}
				seen = append(seen, string(b))
			}
		}
		got <- seen
	})
	sk := &sink{}
	em := &shim.Emitter{Host: "h", Policy: redact.Policy{Default: redact.Full}, Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sk, IDs: shim.NewIDs()}
	v, _ := mapping.Lookup("claude-code")
	perm := `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}`
	m := mapping.Moment{Raw: []byte(perm), Nonce: "n1", Control: true}
	res, err := em.Handle(v, m)
	if err != nil {
		t.Fatal(err)
	}
	link, err := Dial(context.Background(), url, "tok", Identity{Agent: "claude-code"}, Offer{Accepts: []string{Respond}, AckWindow: AckWindow}, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &Hook{Config: &Config{URL: url, Budget: 20 * time.Second}, Vendor: v, Emitter: em, Failed: func(stage string, err error) { t.Errorf("%s: %v", stage, err) }}
	reply := h.Wait(context.Background(), link, v.Hold(m, mapping.Gate{}), "s1", &res.Events[0])
	link.Close("done")
	if want := `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"use the staging registry"},"hookEventName":"PermissionRequest"}}`; string(reply) != want {
		t.Fatalf("reply %s", reply)
	}
	seen := <-got
	acks := map[string][]string{}
	for _, s := range seen {
		var e struct {
			Type, Cause string
			Data        map[string]any
		}
		json.Unmarshal([]byte(s), &e)
		if strings.HasPrefix(e.Type, "control.") {
			acks[e.Cause] = append(acks[e.Cause], s)
			if e.Cause == "c1" && e.Data["reason"] != "unsupported" || e.Cause == "c2" && e.Data["reason"] != "invalid" ||
				e.Cause == "c3" && e.Data["reason"] != "invalid" || e.Cause == "c4" && e.Type != "control.accepted" {
				t.Errorf("ack of %s: %s", e.Cause, s)
			}
		}
	}
	if c3 := acks["c3"]; len(c3) != 2 || c3[0] != c3[1] {
		t.Errorf("a redelivery not answered byte-identically: %q", c3)
	}
	want := "attention.requested control.pause control.rejected control.attention.respond control.rejected control.attention.respond control.rejected control.attention.respond control.accepted attention.answered attention.resolved"
	if got := strings.Join(sk.types(), " "); got != want {
		t.Errorf("log:\n%s\nwant\n%s", got, want)
	}
}

// TestRelayRefusesRequest: an error frame naming the request's event
// means nothing will route to it: the wait ends at once, neutral.
func TestRelayRefusesRequest(t *testing.T) {
	url := server(t, func(ctx context.Context, c *websocket.Conn, _ *http.Request) {
		c.Read(ctx)
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","versions":["0.1"],"role":"both"}`))
		_, req, _ := c.Read(ctx)
		var r struct{ ID string }
		json.Unmarshal(req, &r)
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"error","cause":"`+r.ID+`","code":"unauthorized","detail":"no"}`))
		c.Read(ctx)
	})
	em := &shim.Emitter{Host: "h", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: &sink{}, IDs: shim.NewIDs()}
	v, _ := mapping.Lookup("codex")
	m := mapping.Moment{Raw: []byte(`{"hook_event_name":"PermissionRequest","session_id":"s1","turn_id":"t","tool_name":"Bash","tool_input":{"command":"ls"}}`), Nonce: "n", Control: true}
	res, _ := em.Handle(v, m)
	link, err := Dial(context.Background(), url, "tok", Identity{Agent: "codex"}, Offer{Accepts: []string{Respond}}, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	h := &Hook{Config: &Config{Budget: 20 * time.Second}, Vendor: v, Emitter: em, Failed: func(stage string, err error) { failed = append(failed, err.Error()) }}
	start := time.Now()
	if b := h.Wait(context.Background(), link, v.Hold(m, mapping.Gate{}), "s1", &res.Events[0]); b != nil {
		t.Fatalf("reply %s", b)
	}
	if time.Since(start) > 15*time.Second || len(failed) != 1 || !strings.Contains(failed[0], "unauthorized") {
		t.Fatalf("failed %q after %s", failed, time.Since(start))
	}
}

func TestFromEnv(t *testing.T) {
	// A home with the user's token, one without any, one whose token
	// others may read.
	withTok, noTok, loose := t.TempDir(), t.TempDir(), t.TempDir()
	const userTok = "user-token-0123456789abcdef"
	if err := os.WriteFile(filepath.Join(withTok, "token"), []byte(userTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loose, "token"), []byte(userTok+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(loose, "token"), 0o644)
	cases := []struct {
		env  map[string]string
		want *Config
		err  string
	}{
		{map[string]string{}, nil, ""},
		{map[string]string{"AEP_CONTROL": "0"}, nil, ""},
		{map[string]string{"AEP_CONTROL": "1", "AEP_HOME": noTok}, &Config{URL: DefaultRelay}, ""},
		// The user's token is the default for a relay on this machine,
		// never sent off it, and a given token wins.
		{map[string]string{"AEP_CONTROL": "1", "AEP_HOME": withTok}, &Config{URL: DefaultRelay, Token: userTok}, ""},
		{map[string]string{"AEP_CONTROL": "1", "AEP_HOME": withTok, "AEP_RELAY": "ws://localhost:9/socket"}, &Config{URL: "ws://localhost:9/socket", Token: userTok}, ""},
		{map[string]string{"AEP_CONTROL": "1", "AEP_HOME": withTok, "AEP_RELAY": "wss://r.example/socket"}, &Config{URL: "wss://r.example/socket"}, ""},
		{map[string]string{"AEP_CONTROL": "1", "AEP_HOME": withTok, "AEP_RELAY_TOKEN": "given"}, &Config{URL: DefaultRelay, Token: "given"}, ""},
		{map[string]string{"AEP_CONTROL": "1", "AEP_HOME": loose}, nil, "chmod 600"},
		{map[string]string{"AEP_CONTROL": "true", "AEP_RELAY": "wss://r.example/socket", "AEP_RELAY_TOKEN": " t ",
			"AEP_CONTROL_TOOLS": "Bash, Write,", "AEP_CONTROL_BUDGET": "20s"},
			&Config{URL: "wss://r.example/socket", Token: "t", Gate: mapping.Gate{Tools: []string{"Bash", "Write"}}, Budget: 20 * time.Second}, ""},
		{map[string]string{"AEP_CONTROL": "yes"}, nil, "not a boolean"},
		{map[string]string{"AEP_CONTROL": "1", "AEP_RELAY": "http://x"}, nil, "ws://"},
		{map[string]string{"AEP_CONTROL": "1", "AEP_CONTROL_BUDGET": "1h"}, nil, "duration up to"},
	}
	for _, c := range cases {
		got, err := FromEnv(func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || (got == nil) != (c.want == nil) || got != nil && (got.URL != c.want.URL || got.Token != c.want.Token ||
			strings.Join(got.Gate.Tools, ",") != strings.Join(c.want.Gate.Tools, ",") || got.Budget != c.want.Budget) {
			t.Errorf("%v: %+v %v, want %+v", c.env, got, err, c.want)
		}
	}
}
