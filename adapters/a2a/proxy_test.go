package a2a

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// collector is a shim.Handler keeping every moment it is given.
type collector struct {
	mu sync.Mutex
	ms []mapping.Moment
}

func (c *collector) handle(ms []mapping.Moment) ([]shim.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ms = append(c.ms, ms...)
	return make([]shim.Result, len(ms)), nil
}

func (c *collector) summary() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.ms {
		f := m.Facts
		out = append(out, fmt.Sprintf("%s %s %s id=%s ctx=%s task=%s %s", f.Kind, f.Method, f.Name, f.ID, f.Session, f.Run, f.Reason))
	}
	return out
}

const (
	evTask    = `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}}`
	evWorking = `{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}`
	evDone    = `{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t1","contextId":"","status":{"state":"TASK_STATE_COMPLETED"}}}}`
)

// upstream answers like an A2A server: a stream for SendStreamingMessage
// (CRLF framing, a comment, the events), a JSON answer for anything else;
// "cut" in the request makes the stream end before its terminal.
func upstream(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"x"}`)
		case bytes.Contains(body, []byte(`"SendStreamingMessage"`)):
			w.Header().Set("Content-Type", "text/event-stream")
			fl := w.(http.Flusher)
			io.WriteString(w, ": keep-alive\r\n\r\n")
			for _, ev := range []string{evTask, evWorking} {
				io.WriteString(w, "data: "+ev+"\r\n\r\n")
				fl.Flush()
			}
			if bytes.Contains(body, []byte("cut")) {
				return
			}
			io.WriteString(w, "data: "+evDone+"\n\n")
		case bytes.Contains(body, []byte(`"CancelTask"`)):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_CANCELED"}}}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{"message":{"messageId":"a","contextId":"c2","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}`)
		}
	}))
}

func post(t *testing.T, base, body string) []byte {
	t.Helper()
	resp, err := http.Post(base+"/rpc", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProxyRelaysAndObserves(t *testing.T) {
	up := upstream(t)
	defer up.Close()
	u, _ := url.Parse(up.URL)
	c := &collector{}
	p := &Proxy{Upstream: u, Handle: c.handle, Instance: "tee1", Nonce: func() string { return "n" }}
	srv := httptest.NewServer(p)
	defer srv.Close()

	tests := []struct {
		name, body string
		want       []string
	}{
		{"stream", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"go"}]}}}`,
			[]string{
				"request SendStreamingMessage  id=1 ctx=c1 task=t1 ",
				"event SendStreamingMessage task id=1 ctx=c1 task=t1 ",
				"event SendStreamingMessage statusUpdate id=1 ctx=c1 task=t1 ",
				"event SendStreamingMessage statusUpdate id=1 ctx=c1 task=t1 ",
			}},
		{"cancel: named task, observed as forwarded", `{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"t1"}}`,
			[]string{
				"request CancelTask  id=2 ctx=c1 task=t1 ",
				"response CancelTask task id=2 ctx=c1 task=t1 ",
			}},
		{"cut stream", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"cut"}]}}}`,
			[]string{
				"request SendStreamingMessage  id=1 ctx=c1 task=t1 ",
				"event SendStreamingMessage task id=1 ctx=c1 task=t1 ",
				"event SendStreamingMessage statusUpdate id=1 ctx=c1 task=t1 ",
				"end SendStreamingMessage  id=1 ctx=c1 task=t1 upstream_ended",
			}},
		{"message only", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
			[]string{
				"request SendMessage  id=3 ctx=c2 task= ",
				"response SendMessage message id=3 ctx=c2 task= ",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.mu.Lock()
			c.ms = nil
			c.mu.Unlock()
			direct := post(t, up.URL, tt.body)
			teed := post(t, srv.URL, tt.body)
			if !bytes.Equal(direct, teed) {
				t.Errorf("relayed bytes differ:\ndirect %q\nteed   %q", direct, teed)
			}
			p.Wait()
			got := c.summary()
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("moments:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	// A path that is not JSON-RPC is relayed only.
	resp, err := http.Get(srv.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"name":"x"}` {
		t.Errorf("agent card relayed as %q", b)
	}
	p.Wait()
	if n := p.Stats().Exchanges.Load(); n != 4 {
		t.Errorf("exchanges %d, want 4", n)
	}
}

// TestProxyNoAcceptEncoding: the upstream gets the client's own headers;
// the tee adds no Accept-Encoding and no X-Forwarded-*.
func TestProxyHeadersAsSent(t *testing.T) {
	var got http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	srv := httptest.NewServer(&Proxy{Upstream: u})
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	tr := &http.Transport{DisableCompression: true}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, h := range []string{"Accept-Encoding", "X-Forwarded-For", "X-Forwarded-Host"} {
		if v := got.Get(h); v != "" {
			t.Errorf("upstream got %s: %q", h, v)
		}
	}
	if got.Get("A2A-Version") != "1.0" {
		t.Errorf("A2A-Version not relayed: %v", got)
	}
}

// gate is a failure recorder that holds whoever records until opened.
type gate struct {
	once sync.Once
	c    chan struct{}
}

func (g *gate) open()                    { g.once.Do(func() { close(g.c) }) }
func (g *gate) Record(shim.Failure) bool { <-g.c; return true }

// TestProxyAnswerAfterItsQuestion: a client answers an input-required task
// as soon as it has read the stream that asked, while the stream's
// observer is still behind (here held recording the stream's first,
// broken event). The answer names its context and task, so it is observed
// as it is forwarded: after the question, as the client saw them. The
// observer is let go once the answer reaches the server (too late), or
// once the request waits for it.
func TestProxyAnswerAfterItsQuestion(t *testing.T) {
	g := &gate{c: make(chan struct{})}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"SendStreamingMessage"`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: not json\n\n")
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}}`+"\n\n")
			return
		}
		g.open()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}`)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	c := &collector{}
	p := &Proxy{Upstream: u, Handle: c.handle, Errors: g, Instance: "tee1", Nonce: func() string { return "n" }, waiting: g.open}
	srv := httptest.NewServer(p)
	defer srv.Close()
	post(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"weather?"}]}}}`)
	post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m2","contextId":"c1","taskId":"t1","role":"ROLE_USER","parts":[{"text":"Paris"}]}}}`)
	p.Wait()
	want := []string{
		"request SendStreamingMessage  id=1 ctx=c1 task=t1 ",
		"event SendStreamingMessage task id=1 ctx=c1 task=t1 ",
		"request SendMessage  id=2 ctx=c1 task=t1 ",
		"response SendMessage task id=2 ctx=c1 task=t1 ",
	}
	if got := c.summary(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("moments:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
