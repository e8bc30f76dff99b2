package answer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/consumer/answer"
)

// fakeRelay is just enough of a relay's WebSocket binding for one sender
// connection: it answers hello, subscribe, roster and ping, acknowledges
// every command, and sends an answer's outcome events at once, except
// for the request held, whose outcome waits for release.
type fakeRelay struct {
	t    *testing.T
	held string
	// acked is sent the held request's command id once it is accepted.
	acked chan string
	// release lets the held request's outcome go out.
	release chan struct{}
	// pingFirst sends a ping right after the hello and reports the pong's
	// t on pong.
	pingFirst bool
	pong      chan string
}

func (f *fakeRelay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ctx := r.Context()
	send := func(v any) {
		b, _ := json.Marshal(v)
		ws.Write(ctx, websocket.MessageText, b)
	}
	outcome := func(subject, source string) {
		send(map[string]any{"type": "attention.answered", "id": subject + "-ans", "subject": subject, "source": source})
		send(map[string]any{"type": "attention.resolved", "id": subject + "-res", "subject": subject, "source": source})
	}
	hello := false
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			Type    string          `json:"type"`
			ID      string          `json:"id"`
			T       json.RawMessage `json:"t"`
			Subject string          `json:"subject"`
			Source  string          `json:"source"`
		}
		json.Unmarshal(b, &m)
		switch {
		case !hello:
			hello = true
			send(map[string]any{"type": "hello", "versions": []string{"0.1"}, "role": "both"})
			if f.pingFirst {
				send(map[string]any{"type": "ping", "t": "idle"})
			}
		case m.Type == "subscribe":
			send(map[string]any{"type": "subscribed", "id": m.ID})
		case m.Type == "roster":
			send(map[string]any{"type": "roster", "id": m.ID, "entries": []any{}})
		case m.Type == "ping":
			send(map[string]any{"type": "pong", "t": m.T})
		case m.Type == "pong":
			var t string
			json.Unmarshal(m.T, &t)
			f.pong <- t
		case m.Type == "control.attention.respond":
			send(map[string]any{"type": "control.accepted", "id": m.ID + "-ack", "cause": m.ID, "subject": m.Subject, "source": "aep://target/agent/t"})
			if m.Subject != f.held {
				outcome(m.Subject, "aep://target/agent/t")
				continue
			}
			f.acked <- m.ID
			go func() {
				<-f.release
				outcome(m.Subject, "aep://target/agent/t")
			}()
		}
	}
}

func dialFake(t *testing.T, f *fakeRelay) *answer.Conn {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cl := &answer.Client{URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket", Agent: "tester", Host: "h", Window: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cn, err := cl.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close() })
	return cn
}

// A Respond still waiting for its outcome must not take the messages the
// calls beside it on the same connection wait for: each sees every
// message. (With one shared inbox the waiting Respond swallowed a later
// Respond's "subscribed", which then never sent its command: the target
// waited out its budget and the answer was never known applied.)
func TestConcurrentCallsSeeEveryMessage(t *testing.T) {
	f := &fakeRelay{t: t, held: "req-held", acked: make(chan string, 1), release: make(chan struct{})}
	cn := dialFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	type result struct {
		out answer.Outcome
		err error
	}
	heldDone := make(chan result, 1)
	go func() {
		out, err := cn.Respond(ctx, answer.Request{ID: "req-held", Session: "s-held", Source: "aep://target/agent/t"}, answer.Answer{Option: "allow"})
		heldDone <- result{out, err}
	}()
	<-f.acked // the held Respond is accepted and now waits for its outcome

	// Each round's calls must finish on their own messages while the held
	// Respond reads beside them; a bound, not a synchronisation.
	for i := range 20 {
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		if _, err := cn.Pending(rctx); err != nil {
			rcancel()
			t.Fatalf("round %d: Pending beside a waiting Respond: %v", i, err)
		}
		id := "req-" + string(rune('a'+i))
		out, err := cn.Respond(rctx, answer.Request{ID: id, Session: "s-" + id, Source: "aep://target/agent/t"}, answer.Answer{Option: "allow"})
		rcancel()
		if err != nil || out.Ack != answer.Accepted || out.Sent != 1 || out.Answered == nil || out.Resolved == nil {
			t.Fatalf("round %d: Respond beside a waiting Respond: %+v, %v; want accepted on the first send with both outcome events", i, out, err)
		}
	}

	close(f.release)
	r := <-heldDone
	if r.err != nil || r.out.Ack != answer.Accepted || r.out.Answered == nil || r.out.Resolved == nil {
		t.Fatalf("held Respond: %+v, %v; want accepted with both outcome events", r.out, r.err)
	}
}

// The relay's pings are answered while no call runs: an idle sender
// (a console between answers) must not be cut as silent.
func TestIdleConnAnswersPing(t *testing.T) {
	f := &fakeRelay{t: t, pingFirst: true, pong: make(chan string, 1)}
	dialFake(t, f)
	select {
	case got := <-f.pong:
		if got != "idle" {
			t.Fatalf("pong t = %q, want the ping's", got)
		}
	case <-time.After(10 * time.Second): // a bound on a failure, not a synchronisation
		t.Fatal("no pong to the relay's ping on an idle connection")
	}
}
