package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The stub editor and stub agent are this test binary re-executed with
// ACP_STUB_ROLE set. Each records the exact bytes it sent and received in
// ACP_STUB_DIR, so the test can compare both directions byte for byte.

const (
	roleEnv  = "ACP_STUB_ROLE"
	dirEnv   = "ACP_STUB_DIR"
	exitEnv  = "ACP_STUB_EXIT"
	hugeSize = 10 << 20
)

// runStub runs the role named in the environment, if any, and exits.
func runStub() {
	role := os.Getenv(roleEnv)
	if role == "" {
		return
	}
	runProcessStub(role)
	dir := os.Getenv(dirEnv)
	sent, err := os.Create(filepath.Join(dir, role+".sent"))
	if err != nil {
		panic(err)
	}
	recv, err := os.Create(filepath.Join(dir, role+".recv"))
	if err != nil {
		panic(err)
	}
	s := &stub{in: bufio.NewReader(io.TeeReader(os.Stdin, recv)), out: io.MultiWriter(os.Stdout, sent)}
	code := 0
	switch role {
	case "agent":
		code = s.agent()
	case "editor":
		s.editor()
	case "echo":
		io.Copy(os.Stdout, os.Stdin)
	}
	sent.Close()
	recv.Close()
	os.Exit(code)
}

type stub struct {
	in  *bufio.Reader
	out io.Writer
}

type rpc struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

func (s *stub) send(line string) { io.WriteString(s.out, line+"\n") }

// next reads one line; ok is false at EOF. Lines that are not JSON-RPC
// come back with an empty rpc.
func (s *stub) next() (rpc, bool) {
	line, err := s.in.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return rpc{}, false
	}
	var m rpc
	json.Unmarshal(line, &m)
	return m, true
}

func update(u string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_stub","update":` + u + `}}`
}

// agent answers the editor's script and exits with ACP_STUB_EXIT at EOF.
func (s *stub) agent() int {
	prompts := 0
	var promptID json.RawMessage
	for {
		m, ok := s.next()
		if !ok {
			var code int
			fmt.Sscan(os.Getenv(exitEnv), &code)
			return code
		}
		switch {
		case m.Method == "initialize":
			s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":1,"agentCapabilities":{}}}`)
		case m.Method == "session/new":
			s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"sessionId":"sess_stub"}}`)
		case m.Method == "session/prompt":
			prompts++
			promptID = m.ID
			if prompts == 1 {
				s.send(update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Looking."}}`))
				s.send(update(`{"sessionUpdate":"tool_call","toolCallId":"tc1","title":"run tests","kind":"execute","status":"pending","rawInput":{"command":"npm test"}}`))
				s.send(update(`{"sessionUpdate":"tool_call_update","toolCallId":"tc1","status":"in_progress"}`))
				s.send(update(`{"sessionUpdate":"tool_call_update","toolCallId":"tc1","status":"completed","rawOutput":{"output":"ok"}}`))
				s.send(update(`{"sessionUpdate":"plan","entries":[{"content":"fix","priority":"high","status":"pending"}]}`))
				s.send(`this is not json {`)
				s.send(update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", hugeSize) + `"}}`))
				s.send(update(`{"sessionUpdate":"usage_update","usedTokens":1200,"outputTokens":80}`))
				s.send(`{"jsonrpc":"2.0","id":100,"method":"session/request_permission","params":{"sessionId":"sess_stub","toolCall":{"toolCallId":"tc2","title":"sudo make install","kind":"execute"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"reject_once","name":"Reject","kind":"reject_once"}]}}`)
			} else {
				s.send(update(`{"sessionUpdate":"tool_call","toolCallId":"tc3","title":"long job","kind":"execute","status":"pending"}`))
			}
		case string(m.ID) == "100" && m.Method == "":
			s.send(update(`{"sessionUpdate":"tool_call","toolCallId":"tc2","title":"sudo make install","kind":"execute","status":"in_progress"}`))
			s.send(update(`{"sessionUpdate":"tool_call_update","toolCallId":"tc2","status":"failed"}`))
			s.send(`{"jsonrpc":"2.0","id":` + string(promptID) + `,"result":{"stopReason":"end_turn"}}`)
		case m.Method == "session/cancel":
			s.send(`{"jsonrpc":"2.0","id":` + string(promptID) + `,"result":{"stopReason":"cancelled"}}`)
		}
	}
}

// until reads until the response with id, answering permission requests.
func (s *stub) until(id string, also func(rpc)) {
	for {
		m, ok := s.next()
		if !ok {
			panic("editor: EOF before response " + id)
		}
		if m.Method == "session/request_permission" {
			s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`)
			continue
		}
		if also != nil {
			also(m)
		}
		if m.Method == "" && string(m.ID) == id {
			return
		}
	}
}

// editor drives a whole session, then exits (closing its stdout).
func (s *stub) editor() {
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`)
	s.until("1", nil)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp/project","mcpServers":[]}}`)
	s.until("2", nil)
	s.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess_stub","prompt":[{"type":"text","text":"fix the failing build"}]}}`)
	s.until("3", nil)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"sess_stub","prompt":[{"type":"text","text":"now deploy"}]}}`)
	cancelled := false
	s.until("4", func(m rpc) {
		if m.Method == "session/update" && !cancelled && strings.Contains(string(m.Params), `"tc3"`) {
			cancelled = true
			s.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess_stub"}}`)
		}
	})
}
