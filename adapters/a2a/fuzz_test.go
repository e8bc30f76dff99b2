package a2a

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

// FuzzDecode: any input line decodes or fails without panicking, and a
// decoded moment keeps the line as its payload.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","parts":[{"text":"x"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		`{"kind":"end","reason":"x"}`,
		`{"result":{"kind":"status-update"}}`,
		`{"result":[]}`, `null`, `{"id":{"a":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ms, err := Decode(line)
		if err != nil {
			return
		}
		for _, m := range ms {
			if !bytes.Equal(m.Raw, line) {
				t.Fatalf("payload rewritten")
			}
			// The table takes whatever Decode gives it.
			v := mapping.A2A()
			v.Identify(m)
			v.Map(m, &mapping.State{})
		}
	})
}

// FuzzProxyStream relays an arbitrary upstream stream through the tee: the
// client gets exactly the upstream's bytes, and observing them neither
// panics nor blocks.
func FuzzProxyStream(f *testing.F) {
	f.Add([]byte("data: " + evTask + "\n\ndata: " + evWorking + "\r\n\r\ndata: " + evDone + "\n\n"))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"result\":{\"task\":{}}}\n\ndata: not json\n\n: c\n\ndata:"))
	f.Add([]byte("event: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(body)
		}))
		defer up.Close()
		u, _ := url.Parse(up.URL)
		c := &collector{}
		p := &Proxy{Upstream: u, Handle: c.handle, MaxEvent: 256}
		srv := httptest.NewServer(p)
		defer srv.Close()
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}`)))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p.Wait()
		if !bytes.Equal(got, body) {
			t.Fatalf("relayed %q, upstream sent %q", got, body)
		}
	})
}

// FuzzFollower serves arbitrary answers to the follower's GetTask and
// SubscribeToTask: reading them never panics, and every moment it makes
// is one the table takes.
func FuzzFollower(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`),
		[]byte("data: "+evWorking+"\n\ndata: "+evDone+"\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","error":{"code":-32001}}`), []byte("data: {}\n\ndata: [\n\n"))
	f.Fuzz(func(t *testing.T, snapshot, stream []byte) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte("SubscribeToTask")) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(stream)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(snapshot)
		}))
		defer srv.Close()
		u, _ := url.Parse(srv.URL)
		fl := &Follower{Endpoint: u, Task: "t", MaxEvent: 512}
		v := mapping.A2A()
		st := &mapping.State{}
		ms, _ := fl.CatchUp(t.Context(), "")
		s, err := fl.Open(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for i := 0; i < 1000; i++ {
			it, err := s.Next()
			if err != nil {
				break
			}
			ms = append(ms, it.Moments...)
		}
		for _, m := range ms {
			v.Identify(m)
			v.Map(m, st)
		}
	})
}
