package otlp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

func TestLogsAllEncodings(t *testing.T) {
	codex := logsOf(codexRes,
		codexRec("conv_1", "codex.conversation_starts", "model", "gpt-5.2-codex", "approval_policy", "on-request"),
		codexRec("conv_1", "codex.tool_result", "tool_name", "shell", "success", "false", "duration_ms", "87", "error", "exit 1"),
		codexRec("conv_1", "codex.tool_decision", "tool_name", "shell", "decision", "deny", "source", "config"),
	)
	vscode := logsOf(vscodeRes,
		rec{"event.name": "copilot_chat.session.start", "gen_ai.request.model": "gpt-5.2"},
		rec{"event.name": "copilot_chat.tool.call", "gen_ai.tool.name": "readFile", "duration_ms": int64(63), "success": true},
	)
	cases := []struct {
		name, ctype, enc string
		mode             mapping.Mode
		ld               plog.Logs
		body             func(testing.TB, plog.Logs) []byte
		agent, session   string
		want             []string
	}{
		{"protobuf companion", typeProto, "", "", codex, protoBody, "codex", "conv_1",
			[]string{"x.codex.otel.conversation_starts", "x.codex.otel.tool_result", "x.codex.otel.tool_decision"}},
		{"json primary", typeJSON, "", mapping.Primary, codex, jsonBody, "codex", "conv_1",
			[]string{"session.started", "x.codex.otel.conversation_starts", "tool.failed", "tool.denied"}},
		{"gzip protobuf primary", typeProto, "gzip", mapping.Primary, vscode, protoBody, "vscode", "vsc_1",
			[]string{"session.started", "tool.completed"}},
		{"gzip json companion", typeJSON + "; charset=utf-8", "gzip", "", vscode, jsonBody, "vscode", "vsc_1",
			[]string{"x.vscode.otel.session.start", "x.vscode.otel.tool.call"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Config{Mode: c.mode})
			body := c.body(t, c.ld)
			if c.enc == "gzip" {
				body = gzipped(body)
			}
			status, resp, rtype := e.post(t, PathLogs, c.ctype, c.enc, body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, resp)
			}
			asJSON := strings.HasPrefix(c.ctype, typeJSON)
			if asJSON && (string(resp) != "{}" || rtype != typeJSON) || !asJSON && (len(resp) != 0 || rtype != typeProto) {
				t.Errorf("response %q (%s)", resp, rtype)
			}
			evs := e.events(t, c.agent, c.session)
			if got := types(evs); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("types %v, want %v", got, c.want)
			}
			for i, ev := range evs {
				if ev.Seq == nil || *ev.Seq != int64(i) || ev.Agent != c.agent || ev.Session != c.session {
					t.Errorf("event %d: agent %s session %s seq %v", i, ev.Agent, ev.Session, ev.Seq)
				}
			}
		})
	}
}

func TestAutoVendorPerResource(t *testing.T) {
	e := newEnv(t, Config{})
	ld := logsOf(codexRes, codexRec("c1", "codex.user_prompt", "prompt", "[REDACTED]", "prompt_length", "3"))
	appendResource(ld, vscodeRes, rec{"event.name": "copilot_chat.agent.turn", "turn.index": int64(1)})
	// No service.name: recognised by the records' family and identity.
	appendResource(ld, map[string]any{}, rec{"event.name": "copilot_chat.edit.feedback", "outcome": "accepted"})
	appendResource(ld, map[string]any{"session.id": "vsc_2"}, rec{"event.name": "copilot_chat.edit.feedback", "outcome": "accepted"})
	appendResource(ld, map[string]any{"service.name": "something-else"}, rec{"event.name": "foo.bar", "detail": "x"})
	if status, b, _ := e.post(t, PathLogs, typeProto, "", protoBody(t, ld)); status != 200 {
		t.Fatalf("status %d %s", status, b)
	}
	checks := []struct{ agent, session, typ string }{
		{"codex", "c1", "x.codex.otel.user_prompt"},
		{"vscode", "vsc_1", "x.vscode.otel.agent.turn"},
		{"vscode", "unknown", "x.vscode.otel.edit.feedback"},
		{"vscode", "vsc_2", "x.vscode.otel.edit.feedback"},
		{"codex", "unknown", "x.codex.otel.unknown"},
	}
	for _, c := range checks {
		evs := e.events(t, c.agent, c.session)
		if len(evs) != 1 || evs[0].Type != c.typ {
			t.Errorf("%s/%s: %v, want [%s]", c.agent, c.session, types(evs), c.typ)
		}
	}
	// A fixed vendor takes every resource.
	e2 := newEnv(t, Config{Vendor: "vscode"})
	e2.post(t, PathLogs, typeProto, "", protoBody(t, logsOf(codexRes, codexRec("c1", "codex.user_prompt"))))
	if evs := e2.events(t, "vscode", "unknown"); len(evs) != 1 || evs[0].Type != "x.vscode.otel.unknown" {
		t.Errorf("vendor vscode: %v", types(evs))
	}
}

func TestRetryIsDeduplicated(t *testing.T) {
	e := newEnv(t, Config{})
	body := protoBody(t, logsOf(codexRes, numbered("conv", 0, 3)...))
	for i := 0; i < 3; i++ {
		if status, b, _ := e.post(t, PathLogs, typeProto, "", body); status != 200 {
			t.Fatalf("attempt %d: status %d %s", i, status, b)
		}
	}
	// The same records in a JSON re-encoding are the same records.
	e.post(t, PathLogs, typeJSON, "gzip", gzipped(jsonBody(t, logsOf(codexRes, numbered("conv", 0, 3)...))))
	if n := len(e.events(t, "codex", "conv")); n != 3 {
		t.Errorf("%d events after retries, want 3", n)
	}
	if st := e.r.Stats(); st.Duplicates != 9 || st.Records != 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestWindowIsBounded(t *testing.T) {
	e := newEnv(t, Config{DedupeWindow: 4})
	e.post(t, PathLogs, typeProto, "", protoBody(t, logsOf(codexRes, numbered("conv", 0, 10)...)))
	if n := e.r.seen.len(); n != 4 {
		t.Errorf("window holds %d keys, want 4", n)
	}
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t, Config{MaxRequestBytes: 64 << 10})
	good := protoBody(t, logsOf(codexRes, numbered("c", 0, 2)...))
	bomb := gzipped(make([]byte, 4<<20)) // 4 MiB of zeros in ~4 KiB: 64x the limit
	cases := []struct {
		name, method, path, ctype, enc string
		body                           []byte
		want                           int
	}{
		{"truncated protobuf", "POST", PathLogs, typeProto, "", good[:len(good)-5], 400},
		{"invalid json", "POST", PathLogs, typeJSON, "", []byte(`{"resourceLogs":[{`), 400},
		{"json of the wrong shape", "POST", PathLogs, typeJSON, "", []byte(`{"resourceLogs":"x"}`), 400},
		{"oversized body", "POST", PathLogs, typeProto, "", bytes.Repeat([]byte{0}, 65<<10), 413},
		{"gzip bomb", "POST", PathLogs, typeProto, "gzip", bomb, 413},
		{"bad gzip", "POST", PathLogs, typeProto, "gzip", []byte("not gzip"), 400},
		{"unknown encoding", "POST", PathLogs, typeProto, "br", good, 415},
		{"unknown content type", "POST", PathLogs, "text/plain", "", good, 415},
		{"no content type", "POST", PathLogs, "", "", good, 415},
		{"GET", "GET", PathLogs, typeProto, "", nil, 405},
		{"oversized trace export", "POST", PathTraces, typeProto, "gzip", bomb, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.srv.URL+c.path, bytes.NewReader(c.body))
			req.Header.Set("Content-Type", c.ctype)
			if c.enc != "" {
				req.Header.Set("Content-Encoding", c.enc)
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("status %d, want %d", resp.StatusCode, c.want)
			}
		})
	}
	// The server is unharmed: a good request still lands.
	if status, b, _ := e.post(t, PathLogs, typeProto, "", good); status != 200 {
		t.Fatalf("after bad requests: %d %s", status, b)
	}
	if n := len(e.events(t, "codex", "c")); n != 2 {
		t.Errorf("%d events, want 2", n)
	}
}

func TestErrorBodies(t *testing.T) {
	e := newEnv(t, Config{})
	status, b, ct := e.post(t, PathLogs, typeJSON, "", []byte(`{`))
	var st struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if status != 400 || ct != typeJSON || json.Unmarshal(b, &st) != nil || st.Code != 3 || st.Message == "" {
		t.Errorf("json error: %d %s %s", status, ct, b)
	}
	status, b, ct = e.post(t, PathLogs, typeProto, "", []byte{0xff})
	// google.rpc.Status: field 1 varint 3, field 2 message.
	if status != 400 || ct != typeProto || len(b) < 4 || b[0] != 0x08 || b[1] != 3 || b[2] != 0x12 {
		t.Errorf("proto error: %d %s %x", status, ct, b)
	}
}

func TestEncoderMatchesPdata(t *testing.T) {
	// The hand-written partial-success body decodes with pdata's own types.
	for _, asJSON := range []bool{false, true} {
		b := exportResponse(asJSON, "rejectedLogRecords", 7, "unreadable log records")
		resp := plogotlp.NewExportResponse()
		var err error
		if asJSON {
			err = resp.UnmarshalJSON(b)
		} else {
			err = resp.UnmarshalProto(b)
		}
		if err != nil || resp.PartialSuccess().RejectedLogRecords() != 7 || resp.PartialSuccess().ErrorMessage() != "unreadable log records" {
			t.Errorf("json=%v: %v %x", asJSON, err, b)
		}
	}
}

func TestIgnoredSignalsAndHealth(t *testing.T) {
	e := newEnv(t, Config{})
	for _, p := range []string{PathTraces, PathMetrics} {
		for _, ct := range []string{typeProto, typeJSON} {
			if status, b, _ := e.post(t, p, ct, "", []byte(`{}`)); status != 200 {
				t.Errorf("%s %s: %d %s", p, ct, status, b)
			}
		}
	}
	resp, err := e.srv.Client().Get(e.srv.URL + PathHealth)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Status string `json:"status"`
		Stats
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != 200 || h.Status != "ok" || h.IgnoredTraces != 2 || h.IgnoredMetrics != 2 {
		t.Errorf("healthz %d %+v %v", resp.StatusCode, h, err)
	}
}

func TestBusy(t *testing.T) {
	e := newEnv(t, Config{MaxConcurrent: 1})
	e.r.sem <- struct{}{} // one request in flight
	status, _, _ := e.post(t, PathLogs, typeProto, "", protoBody(t, logsOf(codexRes, numbered("c", 0, 1)...)))
	if status != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", status)
	}
	<-e.r.sem
	if status, _, _ := e.post(t, PathLogs, typeProto, "", protoBody(t, logsOf(codexRes, numbered("c", 0, 1)...))); status != 200 {
		t.Errorf("after release: %d", status)
	}
}

// flakySink fails the write numbered failAt (1-based) once.
type flakySink struct {
	mu     sync.Mutex
	n      int
	failAt int
	lines  [][]byte
}

func (f *flakySink) Write(_, _ string, lines [][]byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n == f.failAt {
		return errors.New("disk full")
	}
	f.lines = append(f.lines, lines...)
	return nil
}

func memEmitter(sink shim.Sink) *shim.Emitter {
	return &shim.Emitter{Host: "h", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs()}
}

func TestEmitFailureIsRetryable(t *testing.T) {
	sink := &flakySink{failAt: 1}
	r, err := New(Config{}, memEmitter(sink), nil)
	if err != nil {
		t.Fatal(err)
	}
	ld := logsOf(codexRes, numbered("c", 0, 3)...)
	if _, err := r.ConsumeLogs(ld); err == nil {
		t.Fatal("want a retryable error")
	}
	if _, err := r.ConsumeLogs(ld); err != nil {
		t.Fatal(err)
	}
	if len(sink.lines) != 3 {
		t.Errorf("%d events after the retry, want 3 (no duplicate, none lost)", len(sink.lines))
	}
	srv := newEnvWith(t, &flakySink{failAt: 1})
	if status, _, _ := srv.post(t, PathLogs, typeProto, "", protoBody(t, ld)); status != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", status)
	}
}

func newEnvWith(t *testing.T, sink shim.Sink) *testEnv {
	r, err := New(Config{}, memEmitter(sink), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, r.Handler())
	return &testEnv{r: r, srv: srv}
}

func TestConcurrentExportsKeepOneSequence(t *testing.T) {
	e := newEnv(t, Config{MaxConcurrent: 64})
	const clients, batches, per = 8, 6, 5
	var wg sync.WaitGroup
	errc := make(chan error, clients*batches)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				body := protoBody(t, logsOf(codexRes, numbered("shared", (c*batches+b)*per, per)...))
				for attempt := 0; attempt < 2; attempt++ { // every batch is also retried
					req, _ := http.NewRequest("POST", e.srv.URL+PathLogs, bytes.NewReader(body))
					req.Header.Set("Content-Type", typeProto)
					resp, err := e.srv.Client().Do(req)
					if err != nil {
						errc <- err
						return
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errc <- fmt.Errorf("status %d", resp.StatusCode)
					}
				}
			}
		}(c)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	evs := e.events(t, "codex", "shared")
	if len(evs) != clients*batches*per {
		t.Fatalf("%d events, want %d", len(evs), clients*batches*per)
	}
	seen := map[any]bool{}
	for i, ev := range evs {
		if *ev.Seq != int64(i) || *ev.Epoch != *evs[0].Epoch {
			t.Fatalf("line %d has (epoch %d, seq %d)", i, *ev.Epoch, *ev.Seq)
		}
		d := ev.Data["duration_ms"]
		if seen[d] {
			t.Fatalf("record %v emitted twice", d)
		}
		seen[d] = true
	}
}

// blockingSink holds its first write until released.
type blockingSink struct {
	entered, release chan struct{}
	once             sync.Once
	n                int
	mu               sync.Mutex
	flushed          bool
}

func (b *blockingSink) Write(_, _ string, lines [][]byte) error {
	b.once.Do(func() { close(b.entered); <-b.release })
	b.mu.Lock()
	b.n += len(lines)
	b.mu.Unlock()
	return nil
}

func (b *blockingSink) Flush() error { b.mu.Lock(); b.flushed = true; b.mu.Unlock(); return nil }

func TestGracefulShutdown(t *testing.T) {
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	r, err := New(Config{ShutdownTimeout: 20 * time.Second}, memEmitter(shim.Sinks{sink}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, ln, nil) }()
	type result struct {
		status int
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+PathLogs, typeProto,
			bytes.NewReader(protoBody(t, logsOf(codexRes, numbered("c", 0, 3)...))))
		if err != nil {
			got <- result{0, err}
			return
		}
		resp.Body.Close()
		got <- result{resp.StatusCode, nil}
	}()
	<-sink.entered // the request is in flight
	cancel()       // SIGINT/SIGTERM
	close(sink.release)
	res := <-got
	if res.err != nil || res.status != 200 {
		t.Fatalf("in-flight request: %d %v", res.status, res.err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sink.n != 3 || !sink.flushed {
		t.Errorf("sink got %d events, flushed %v", sink.n, sink.flushed)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("listener still open after shutdown")
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{{Vendor: "claude"}, {Mode: "both"}} {
		if _, err := New(c, memEmitter(&flakySink{}), nil); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	if _, err := New(Config{}, nil, nil); err == nil {
		t.Error("New without emitter accepted")
	}
	r, _ := New(Config{}, memEmitter(&flakySink{}), nil)
	if err := r.Run(context.Background(), nil, nil); err == nil {
		t.Error("Run with no listener accepted")
	}
}
