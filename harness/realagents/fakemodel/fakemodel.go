// Package fakemodel serves scripted model replies on 127.0.0.1 in the wire
// formats the coding agents speak: Anthropic messages, OpenAI Responses,
// Gemini streamGenerateContent and OpenAI chat completions, each streamed as
// Server-Sent Events exactly as the vendor's API does. A Script picks the
// reply from the request (the SCENARIO: marker in the human's prompt and the
// number of assistant replies since it), so one server drives a whole
// scripted session of a real agent without any network.
//
// It is test equipment for the real-agent harness (harness/realagents):
// nothing in the aep-hook binary links it.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// API names a vendor wire format.
type API string

// The wire formats served.
const (
	Anthropic       API = "anthropic"        // POST /v1/messages (Claude Code)
	Responses       API = "openai-responses" // POST /v1/responses (Codex)
	Gemini          API = "gemini"           // POST /v1beta/models/M:streamGenerateContent (Gemini CLI)
	ChatCompletions API = "openai-chat"      // POST /v1/chat/completions (Qwen Code, Kimi, Cline, OpenCode, pi, ...)
)

// ToolCall is one tool call the scripted model makes.
type ToolCall struct {
	// ID is the call id; "" mints one ("call_<n>" / "toolu_<n>").
	ID string
	// Name is the agent's tool name as offered in the request's tools.
	Name string
	// Args is the call's JSON arguments (any value json.Marshal takes).
	Args any
	// Input, with Custom, is a freeform tool's raw input (Codex apply_patch).
	Input  string
	Custom bool
	// Namespace names the tool namespace of a Responses call (Codex's
	// multi_agent_v1 tools).
	Namespace string
}

// Reply is one scripted model answer.
type Reply struct {
	// Text is assistant text (may be empty when Calls is not).
	Text string
	// Calls are the tool calls of this answer, in order.
	Calls []ToolCall
	// Status, when non-zero, answers with this HTTP error status and an
	// error body in the API's format instead (an API failure).
	Status int
	// ErrorCode and ErrorMessage, with Status, replace the error body's
	// code (OpenAI-style bodies: "context_length_exceeded") and message,
	// for agents that read them (a context overflow, not a plain failure).
	ErrorCode, ErrorMessage string
	// Hang starts the stream and then holds it open until the client goes
	// away, the server closes or 30 s pass (then the stream ends empty): a
	// model still thinking, for interrupts.
	Hang bool
	// StreamFailed starts the stream and then reports the response failed
	// (Responses: response.failed with a server_error): a failure the
	// agent's stream retry sees, unlike an HTTP status.
	StreamFailed bool
	// Refuse ends the answer as the API ends a refusal (Anthropic
	// stop_reason refusal, Gemini finishReason SAFETY, chat completions
	// finish_reason content_filter), with Text (if any) before it.
	Refuse bool
	// Cut streams the start of the answer's text and then drops the
	// connection without ending the stream: an error mid-stream.
	Cut bool
	// InputTokens is the prompt size the answer's usage reports (0: 100):
	// a large one makes an agent compact its context.
	InputTokens int
}

func (r Reply) inputTokens() int {
	if r.InputTokens > 0 {
		return r.InputTokens
	}
	return 100
}

// Request is what a Script sees of one model request.
type Request struct {
	API    API
	Path   string
	Header http.Header
	Body   []byte
	// Human is the text of the last message the human typed (tool results
	// and agent-injected context excluded).
	Human string
	// Marker is the SCENARIO:<name> token of Human, else of any user text.
	Marker string
	// Round counts assistant replies since Human: 0 is the first answer of
	// the turn, 1 the answer after the first tool results, and so on.
	Round int
	// Tools lists the tool names the request offers.
	Tools []string
	// Stream reports a streaming request.
	Stream bool
	// Model is the model the request names.
	Model string
}

// Side reports a request offering no tools: titles, summaries, checks
// (scripts usually answer those with plain text).
func (r Request) Side() bool { return len(r.Tools) == 0 }

// HasTool reports whether the request offers the named tool.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Script picks the reply to a request.
type Script func(Request) Reply

// Turns is the common script: per marker, the replies of one turn by
// Round; past the last one, and for side requests and unknown markers, the
// model answers plain text "Done.".
func Turns(byMarker map[string][]Reply) Script {
	return func(r Request) Reply {
		if r.Side() {
			return Reply{Text: "Done."}
		}
		rs := byMarker[r.Marker]
		if r.Round < len(rs) {
			return rs[r.Round]
		}
		return Reply{Text: "Done."}
	}
}

// markerRE finds the scenario marker in a prompt.
var markerRE = regexp.MustCompile(`SCENARIO:([A-Za-z0-9_.-]+)`)

// Marker returns the last SCENARIO: token in s, "" when none: a message
// holding two prompts (Claude Code folds a queued prompt into the
// interrupted one's message) is answered for the later.
func Marker(s string) string {
	if ms := markerRE.FindAllStringSubmatch(s, -1); len(ms) > 0 {
		return ms[len(ms)-1][1]
	}
	return ""
}

// Server is one fake model endpoint.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	api    API
	script Script
	log    io.Writer
	srv    *http.Server
	ln     net.Listener
	closed chan struct{}

	mu   sync.Mutex
	reqs []Request
	n    int
}

// Start serves api on an ephemeral 127.0.0.1 port. Every request is logged
// as one JSON line to log (nil logs nothing).
func Start(api API, script Script, log io.Writer) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), api: api, script: script, log: log, ln: ln, closed: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server, releasing hanging streams.
func (s *Server) Close() error {
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	return s.srv.Close()
}

// Requests returns the model requests served so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// nextID mints a per-server sequence number for ids.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		s.models(w)
		return
	case strings.HasSuffix(path, ":countTokens"):
		writeJSON(w, 200, map[string]any{"totalTokens": 100})
		return
	case strings.HasSuffix(path, "/count_tokens"):
		writeJSON(w, 200, map[string]any{"input_tokens": 100})
		return
	case r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	}
	req := parse(s.api, path, r.Header, body)
	if strings.Contains(path, ":streamGenerateContent") || r.URL.Query().Get("alt") == "sse" {
		req.Stream = true
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	reply := s.script(req)
	if s.log != nil {
		line, _ := json.Marshal(map[string]any{
			"time": time.Now().UTC().Format(time.RFC3339Nano), "path": path, "marker": req.Marker,
			"round": req.Round, "tools": req.Tools, "stream": req.Stream, "model": req.Model,
			"human": clip(req.Human, 200), "reply": reply, "shape": shape(req.API, req.Body), "body": json.RawMessage(validOr(req.Body)), "header_kind": r.Header.Get("x-openai-subagent") + r.Header.Get("request_kind"),
		})
		s.mu.Lock()
		s.log.Write(append(line, '\n'))
		s.mu.Unlock()
	}
	if reply.Status != 0 {
		s.fail(w, reply)
		return
	}
	switch s.api {
	case Anthropic:
		s.anthropic(w, r, req, reply)
	case Responses:
		s.responses(w, r, req, reply)
	case Gemini:
		s.gemini(w, r, req, reply)
	case ChatCompletions:
		s.chat(w, r, req, reply)
	default:
		http.NotFound(w, r)
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// fail answers an API failure in the vendor's error shape.
func (s *Server) fail(w http.ResponseWriter, reply Reply) {
	status := reply.Status
	msg := fmt.Sprintf("scripted failure (HTTP %d)", status)
	if reply.ErrorMessage != "" {
		msg = reply.ErrorMessage
	}
	var code any
	if reply.ErrorCode != "" {
		code = reply.ErrorCode
	}
	switch s.api {
	case Anthropic:
		typ := "invalid_request_error"
		switch {
		case status == 429:
			typ = "rate_limit_error"
		case status >= 500:
			typ = "api_error"
		}
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	case Gemini:
		writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}})
	default:
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code}})
	}
}

func (s *Server) models(w http.ResponseWriter) {
	writeJSON(w, 200, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": "fake-model", "object": "model", "created": 1700000000, "owned_by": "fake"},
	}, "models": []any{}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// sse is one open event stream.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one SSE event; name "" writes a data-only event.
func (e *sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if e.f != nil {
		e.f.Flush()
	}
}

func (e *sse) raw(s string) {
	io.WriteString(e.w, s)
	if e.f != nil {
		e.f.Flush()
	}
}

// hang holds the stream open until the client leaves or the server closes.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closed:
	case <-time.After(hangMax):
		// An agent that stops listening without closing the request (Gemini
		// CLI's Esc) waits for this stream before its next turn: end it.
	}
}

// cut drops the connection of a stream begun, mid-answer: net/http closes
// it without ending the response.
func cut() { panic(http.ErrAbortHandler) }

// hangMax bounds a Hang: long enough to interrupt, short enough that an
// agent waiting for the abandoned stream gets on.
const hangMax = 30 * time.Second

// argsJSON spells a call's arguments as a JSON object string.
func argsJSON(c ToolCall) string {
	if c.Args == nil {
		return "{}"
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// validOr returns b when it is JSON, else JSON null, for the log.
func validOr(b []byte) []byte {
	if json.Valid(b) {
		return b
	}
	return []byte("null")
}
