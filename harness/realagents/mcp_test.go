package realagents

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/tidwall/gjson"
)

// mcpSession runs ServeMCP over pipes and exchanges lines with it.
type mcpSession struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

func startMCP(t *testing.T) *mcpSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		ServeMCP(inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return &mcpSession{t: t, in: inW, out: bufio.NewScanner(outR)}
}

func (s *mcpSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *mcpSession) read() map[string]any {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatal("the server wrote nothing")
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

func toolNames(m map[string]any) []string {
	var names []string
	tools, _ := m["result"].(map[string]any)["tools"].([]any)
	for _, t := range tools {
		names = append(names, t.(map[string]any)["name"].(string))
	}
	return names
}

func resultText(t *testing.T, m map[string]any) string {
	t.Helper()
	r, _ := m["result"].(map[string]any)
	c, _ := r["content"].([]any)
	if len(c) != 1 {
		t.Fatalf("result %v: want one content block", m)
	}
	return c[0].(map[string]any)["text"].(string)
}

// TestMCPElicitOffered: the deploy tool is offered only to a client that
// declared the elicitation capability, and the server declares only tools.
func TestMCPElicitOffered(t *testing.T) {
	for _, tt := range []struct {
		caps string
		want string
	}{
		{`{}`, "echo"},
		{`{"elicitation":{}}`, "echo deploy"},
		{`{"elicitation":{"form":{},"url":{}}}`, "echo deploy"},
		{`{"elicitation":{"url":{}}}`, "echo"},
	} {
		s := startMCP(t)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + tt.caps + `}}`)
		init := s.read()
		caps, _ := init["result"].(map[string]any)["capabilities"].(map[string]any)
		if len(caps) != 1 || caps["tools"] == nil {
			t.Errorf("%s: server capabilities %v, want tools only", tt.caps, caps)
		}
		s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if got := strings.Join(toolNames(s.read()), " "); got != tt.want {
			t.Errorf("%s: tools %q, want %q", tt.caps, got, tt.want)
		}
	}
}

// TestMCPElicitRoundTrip: calling the deploy tool sends one
// elicitation/create with a flat primitive schema; the client's answer,
// after a ping in between, becomes the call's result.
func TestMCPElicitRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		answer, want string
	}{
		{`{"action":"accept","content":{"replicas":3,"env":"production","confirm":true}}`,
			`elicitation accept: {"confirm":true,"env":"production","replicas":3}`},
		{`{"action":"decline"}`, "elicitation decline: nothing deployed"},
		{`{"action":"cancel"}`, "elicitation cancel: nothing deployed"},
	} {
		s := startMCP(t)
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"elicitation":{}}}}`)
		s.read()
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`)
		req := s.read()
		if req["method"] != "elicitation/create" {
			t.Fatalf("got %v, want an elicitation/create request", req)
		}
		p := req["params"].(map[string]any)
		if p["message"] != MCPElicitMessage {
			t.Errorf("message %v", p["message"])
		}
		props := p["requestedSchema"].(map[string]any)["properties"].(map[string]any)
		for k, v := range props {
			switch v.(map[string]any)["type"] {
			case "string", "integer", "number", "boolean":
			default:
				t.Errorf("field %s is not primitive: %v", k, v)
			}
		}
		s.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
		if pong := s.read(); pong["id"] != float64(8) {
			t.Fatalf("got %v, want the ping's answer", pong)
		}
		id, _ := json.Marshal(req["id"])
		s.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + tt.answer + `}`)
		res := s.read()
		if res["id"] != float64(7) {
			t.Fatalf("got %v, want the tool call's answer", res)
		}
		if got := resultText(t, res); got != tt.want {
			t.Errorf("answer %s: result %q, want %q", tt.answer, got, tt.want)
		}
	}
}

// TestMCPElicitRefusedWithoutCapability: a client that never declared
// elicitation is not asked; the deploy tool is unknown to it.
func TestMCPElicitRefusedWithoutCapability(t *testing.T) {
	s := startMCP(t)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	s.read()
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`)
	res := s.read()
	if res["method"] != nil || res["result"].(map[string]any)["isError"] != true {
		t.Errorf("got %v, want an error result", res)
	}
}

// TestRecordedElicitationReachesServer: in every recording where an MCP
// Elicitation was held and answered over control, the hook's reply is the
// answer in Claude Code's own shape (hookSpecificOutput action, and the
// values as content on accept), and the server got exactly that: the
// elicit tool's result, which the model read next, names the action and
// carries the values.
func TestRecordedElicitationReachesServer(t *testing.T) {
	checked := map[string]int{}
	eachHeldAnswer(t, func(fx Fixture, i int, a *answer.Answer) {
		f := fx.Firings[i]
		if f.Hook() != "Elicitation" {
			return
		}
		name := fx.Scenario.Agent + "/" + fx.Scenario.Name
		var reply struct {
			Out struct {
				Event   string         `json:"hookEventName"`
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(f.Stdout), &reply); err != nil || reply.Out.Event != "Elicitation" {
			t.Errorf("%s: firing %d replied %q, want an Elicitation hookSpecificOutput", name, f.N, f.Stdout)
			return
		}
		want := "elicitation " + a.Option + ": nothing deployed"
		if a.Values != nil {
			b, _ := json.Marshal(a.Values)
			if reply.Out.Action != "accept" || !reflect.DeepEqual(reply.Out.Content, a.Values) {
				t.Errorf("%s: firing %d replied %s, want accept with %s", name, f.N, f.Stdout, b)
			}
			want = "elicitation accept: " + string(b)
		} else if reply.Out.Action != a.Option || reply.Out.Content != nil {
			t.Errorf("%s: firing %d replied %s, want action %s and no content", name, f.N, f.Stdout, a.Option)
		}
		got := ""
		for _, g := range fx.Firings[i+1:] {
			if g.Hook() == "PostToolUse" && gjson.GetBytes(g.Stdin(), "tool_name").String() == claudeElicitTool {
				got = gjson.GetBytes(g.Stdin(), "tool_response.0.text").String()
				break
			}
		}
		if got != want {
			t.Errorf("%s: the elicit tool returned %q, want %q", name, got, want)
		}
		checked[reply.Out.Action]++
	})
	if checked["accept"] == 0 || checked["decline"] == 0 {
		t.Errorf("elicitations answered over control, by action: %v; want an accept and a decline recorded", checked)
	}
}

// TestRecordedElicitationChecked: the form Claude Code 2.1.332 really
// raised is checked as AEP-0006 has it before anything reaches the agent:
// a value out of a field's range, a choice the enum lacks, a wrong type,
// a missing required field or an unknown one is invalid (the request
// stays pending); the recorded values and the MCP actions are taken.
func TestRecordedElicitationChecked(t *testing.T) {
	fxs, err := LoadFixtures(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := mapping.Lookup("claude-code")
	var hold *mapping.Hold
	for _, fx := range fxs {
		if fx.Scenario.Agent != "claude-code" || fx.Scenario.Name != "control-elicit-accept" {
			continue
		}
		for _, f := range fx.Firings {
			if f.Hook() == "Elicitation" {
				hold = v.Hold(mapping.Moment{Raw: f.Stdin()}, mapping.Gate{})
			}
		}
	}
	if hold == nil {
		t.Fatal("no held Elicitation in the control-elicit-accept recording")
	}
	ok := map[string]any{"env": "production", "replicas": 3.0, "confirm": true, "note": "hotfix"}
	with := func(k string, val any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		if val == nil {
			delete(m, k)
		} else {
			m[k] = val
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		a     mapping.Answer
		valid bool
	}{
		{"the recorded values", mapping.Answer{Values: ok}, true},
		{"an optional field left out", mapping.Answer{Values: with("note", nil)}, true},
		{"decline", mapping.Answer{Option: "decline"}, true},
		{"cancel", mapping.Answer{Option: "cancel"}, true},
		{"out of range", mapping.Answer{Values: with("replicas", 9.0)}, false},
		{"not a choice", mapping.Answer{Values: with("env", "dev")}, false},
		{"a wrong type", mapping.Answer{Values: with("confirm", "yes")}, false},
		{"a required field missing", mapping.Answer{Values: with("env", nil)}, false},
		{"an unknown field", mapping.Answer{Values: with("region", "eu")}, false},
		{"an option the form lacks", mapping.Answer{Option: "accept"}, false},
	} {
		_, err := hold.Resolve(tc.a)
		if (err == nil) != tc.valid || err != nil && !errors.Is(err, mapping.ErrInvalid) {
			t.Errorf("%s: %v, want valid %v", tc.name, err, tc.valid)
		}
	}
}
