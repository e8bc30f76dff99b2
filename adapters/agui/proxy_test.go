package agui_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/agui"
	"github.com/aep-hook/aep-hook/harness/sinktest"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// runEvents is a whole AG-UI run as the agent streams it; the first event
// comes before RUN_STARTED and inherits the run input's identity.
func runEvents() []string {
	huge := `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"` + strings.Repeat("y", 10<<20) + `"}`
	return []string{
		"data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{}}\n\n",
		"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n",
		": keep-alive comment\n\n",
		"event: message\r\ndata: {\"type\":\"STEP_STARTED\",\"stepName\":\"plan\"}\r\n\r\n",
		"data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}\n\n",
		"data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\n" + "data: \"delta\":\"Hello\"}\n\n",
		"data: " + huge + "\n\n",
		"data: this is not json\n\n",
		"data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\n",
		"data: {\"type\":\"TOOL_CALL_START\",\"toolCallId\":\"c1\",\"toolCallName\":\"search\"}\n\n",
		"data: {\"type\":\"TOOL_CALL_ARGS\",\"toolCallId\":\"c1\",\"delta\":\"{}\"}\n\n",
		"data: {\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"c1\"}\n\n",
		"data: {\"type\":\"TOOL_CALL_RESULT\",\"messageId\":\"m2\",\"toolCallId\":\"c1\",\"content\":\"three results\"}\n\n",
		"data: {\"type\":\"STATE_DELTA\",\"delta\":[{\"op\":\"add\",\"path\":\"/a\",\"value\":1}]}\n\n",
		"data: {\"type\":\"STEP_FINISHED\",\"stepName\":\"plan\"}\n\n",
		"data: {\"type\":\"REASONING_ENCRYPTED_VALUE\",\"value\":\"AAAB\"}\n\n",
		"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n",
	}
}

// upstream streams events, flushing each and waiting for the test's ack
// before the next, so a proxy that buffered would stall the test.
type upstream struct {
	events []string
	ack    chan struct{}
	body   chan []byte
	header chan http.Header
	gone   chan struct{} // closed when the handler returns
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer close(u.gone)
	b, _ := io.ReadAll(r.Body)
	u.body <- b
	u.header <- r.Header.Clone()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Agent", "stub")
	w.WriteHeader(http.StatusOK)
	for _, e := range u.events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
		select {
		case <-u.ack:
		case <-r.Context().Done():
			// The test is over (its servers closed) or the client left.
			return
		}
	}
}

func newEmitter(sink shim.Sink) shim.Handler {
	em := &shim.Emitter{Host: "test", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs()}
	return em.Handler(mapping.AGUI())
}

// readEvent reads one SSE event's bytes (through its blank line).
func readEvent(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			return b.String(), err
		}
		if line == "\n" || line == "\r\n" {
			return b.String(), nil
		}
	}
}

func runThrough(t *testing.T, sink *sinktest.Sink, queue int, release func()) (*agui.Proxy, *sinktest.Failures) {
	t.Helper()
	evs := runEvents()
	up := &upstream{events: evs, ack: make(chan struct{}), body: make(chan []byte, 1), header: make(chan http.Header, 1), gone: make(chan struct{})}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	u, _ := url.Parse(upSrv.URL)
	fails := &sinktest.Failures{}
	p := &agui.Proxy{Upstream: u, Handle: newEmitter(sink), Errors: fails, QueueEvents: queue}
	srv := httptest.NewServer(p)
	defer srv.Close()

	input := `{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"state":{}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/agent/run?x=1", strings.NewReader(input))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Ui", "copilotkit")
	// A UI that asks for no compression: the upstream must not be asked
	// for any either.
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := <-up.body; string(got) != input {
		t.Errorf("run input altered: %q", got)
	}
	if h := <-up.header; h.Get("X-Ui") != "copilotkit" || h.Get("X-Forwarded-For") != "" || h.Get("Accept-Encoding") != "" {
		t.Errorf("request headers: %v", h)
	}
	if resp.Header.Get("X-Agent") != "stub" {
		t.Errorf("response headers: %v", resp.Header)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for i, want := range evs {
		got, err := readEvent(br)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got != want {
			t.Fatalf("event %d altered (%d bytes, want %d)", i, len(got), len(want))
		}
		select {
		case up.ack <- struct{}{}:
		case <-up.gone:
			// The upstream's stream ended early: the next read fails.
		}
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("trailing bytes %q", rest)
	}
	resp.Body.Close()
	if release != nil {
		release()
	}
	p.Wait()
	return p, fails
}

func TestProxyRun(t *testing.T) {
	sink := &sinktest.Sink{}
	p, fails := runThrough(t, sink, 0, nil)
	var got []string
	for _, e := range sink.Events("t1") {
		got = append(got, e.Type+"|"+e.Run+"|"+e.Step+"|"+e.Subject)
	}
	want := []string{
		"state.snapshot|r1||",
		"run.started|r1||",
		"run.step.started|r1|plan|plan",
		"x.agui.text_message.start|r1|plan|m1",
		"x.agui.text_message.end|r1|plan|m1",
		"tool.requested|r1|plan|search",
		"tool.completed|r1|plan|c1",
		"state.delta|r1|plan|",
		"run.step.finished|r1|plan|plan",
		"run.finished|r1||",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log:\n got  %v\n want %v", got, want)
	}
	for _, e := range sink.Events("t1") {
		if e.Type == "tool.completed" {
			if tool, _ := e.Data["tool"].(map[string]any); tool["name"] != "search" {
				t.Errorf("tool name not joined: %v", e.Data)
			}
		}
	}
	if n := fails.Stages()["parse"]; n != 2 {
		t.Errorf("parse failures %d, want 2 (not JSON, 10 MB): %v", n, fails.All())
	}
	if n := p.Stats().Dropped.Load(); n != 0 {
		t.Errorf("dropped %d", n)
	}
}

func TestProxyBlockedSink(t *testing.T) {
	gate := make(chan struct{})
	sink := &sinktest.Sink{Gate: gate}
	p, fails := runThrough(t, sink, 1, func() { close(gate) })
	if p.Stats().Dropped.Load() == 0 {
		t.Error("a stuck sink with a 1-event queue dropped nothing")
	}
	if fails.Stages()["queue"] != 1 {
		t.Errorf("queue failure not recorded: %v", fails.All())
	}
}

func TestProxyUpstreamDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(dead.URL)
	dead.Close()
	fails := &sinktest.Failures{}
	srv := httptest.NewServer(&agui.Proxy{Upstream: u, Errors: fails})
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/run", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	if fails.Stages()["upstream"] != 1 {
		t.Errorf("failures: %v", fails.All())
	}
}

func TestProxyClientDisconnect(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(cancelled)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p := &agui.Proxy{Upstream: u}
	srv := httptest.NewServer(p)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{}`))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readEvent(bufio.NewReader(resp.Body)); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request not cancelled after the client left")
	}
	p.Wait()
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want mapping.Facts
	}{
		{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, mapping.Facts{Kind: mapping.KindEvent, Name: "RUN_STARTED", Thread: "t", Run: "r"}},
		{`{"type":"TEXT_MESSAGE_START"}`, mapping.Facts{Kind: mapping.KindEvent, Name: "TEXT_MESSAGE_START"}},
		{` { } `, mapping.Facts{Kind: mapping.KindEvent}},
	} {
		ms, err := agui.Decode([]byte(c.in))
		if err != nil || len(ms) != 1 || ms[0].Facts != c.want || string(ms[0].Raw) != c.in {
			t.Errorf("Decode(%s) = %+v, %v; want facts %+v", c.in, ms, err, c.want)
		}
	}
	for _, in := range []string{`[1]`, `"x"`, `{`} {
		if _, err := agui.Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s) accepted it", in)
		}
	}
}
