package fakemodel

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServe drives each wire format with a request shaped as its agents
// send it, one tool round in: the script sees the marker and round 1, and
// the answer streams the scripted tool call in the API's own framing.
func TestServe(t *testing.T) {
	script := Turns(map[string][]Reply{"demo": {
		{Calls: []ToolCall{{Name: "first"}}},
		{Calls: []ToolCall{{Name: "second_tool", Args: map[string]any{"x": 1}}}},
	}})
	cases := []struct {
		api        API
		path, body string
		want       []string
	}{
		{Anthropic, "/v1/messages", `{"model":"m","stream":true,"tools":[{"name":"second_tool"}],"messages":[
			{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"SCENARIO:demo go"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"first","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`,
			[]string{"event: message_start", `"name":"second_tool"`, `"partial_json":"{\"x\":1}"`, `"stop_reason":"tool_use"`, "event: message_stop"}},
		{Responses, "/v1/responses", `{"model":"m","stream":true,"tools":[{"type":"function","name":"second_tool"}],"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"SCENARIO:demo go"}]},
			{"type":"function_call","call_id":"c1","name":"first","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"ok"}]}`,
			[]string{"event: response.created", `"type":"function_call"`, `"name":"second_tool"`, "event: response.completed"}},
		{Gemini, "/v1beta/models/gm:streamGenerateContent", `{"tools":[{"functionDeclarations":[{"name":"second_tool"}]}],"contents":[
			{"role":"user","parts":[{"text":"SCENARIO:demo go"}]},
			{"role":"model","parts":[{"functionCall":{"name":"first","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"first","response":{}}}]}]}`,
			[]string{`data: {"candidates"`, `"functionCall":{"args":{"x":1},"name":"second_tool"}`}},
		{ChatCompletions, "/v1/chat/completions", `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"second_tool"}}],"messages":[
			{"role":"system","content":"sys"},{"role":"user","content":"SCENARIO:demo go"},
			{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"first","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
			[]string{`"tool_calls":[{"function":{"arguments":"{\"x\":1}","name":"second_tool"}`, `"finish_reason":"tool_calls"`, "data: [DONE]"}},
	}
	for _, c := range cases {
		t.Run(string(c.api), func(t *testing.T) {
			s, err := Start(c.api, script, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("answer lacks %s:\n%s", w, b)
				}
			}
			reqs := s.Requests()
			if len(reqs) != 1 || reqs[0].Marker != "demo" || reqs[0].Round != 1 {
				t.Errorf("requests = %+v, want one with marker demo, round 1", reqs)
			}
		})
	}
}

// TestFailure answers a scripted API failure with the status and the
// vendor's error body, with the scripted code and message where given.
func TestFailure(t *testing.T) {
	for _, tc := range []struct {
		api   API
		path  string
		reply Reply
		want  []string
	}{
		{Anthropic, "/v1/messages", Reply{Status: 400}, []string{`"type":"invalid_request_error"`}},
		{ChatCompletions, "/v1/chat/completions", Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "maximum context length exceeded"},
			[]string{`"code":"context_length_exceeded"`, `"message":"maximum context length exceeded"`}},
	} {
		s, err := Start(tc.api, func(Request) Reply { return tc.reply }, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(s.URL+tc.path, "application/json", strings.NewReader(`{"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if resp.StatusCode != tc.reply.Status {
			t.Errorf("%s: status %d %s", tc.path, resp.StatusCode, b)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: body lacks %s: %s", tc.path, w, b)
			}
		}
	}
}
