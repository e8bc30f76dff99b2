//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"
)

// kimiFrames returns the server's session frames of a recorded kimi web
// scenario's first connection (raw, key order kept) and their session.
func kimiFrames(t *testing.T, scenario string) (frames []string, sid string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "fixtures", "kimi-web", "recorded", scenario, "stream.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := gjson.ParseBytes(sc.Bytes())
		d := l.Get("data")
		if l.Get("conn").Int() != 1 || l.Get("dir").String() != "in" || !d.Get("seq").Exists() || d.Get("session_id").String() == "__global__" {
			continue
		}
		sid = d.Get("session_id").String()
		frames = append(frames, d.Raw)
	}
	return frames, sid
}

// kimiServer is a stand-in kimi web server that replays frames from each
// subscription's cursor, as the real one does, and counts connections.
type kimiServer struct {
	sid    string
	frames []string
	// dropAfter, when positive, is the seq after whose frame the first
	// connection breaks, so the bridge reconnects and resubscribes.
	dropAfter int64
	conns     atomic.Int32
	done      chan struct{} // closed when the bridge answered the last ping
	once      sync.Once
	mu        sync.Mutex
	from      []int64 // the cursor of each subscription
}

func (k *kimiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/v1/sessions" {
		fmt.Fprintf(w, `{"code":0,"msg":"success","data":{"items":[{"id":%q}],"has_more":false}}`, k.sid)
		return
	}
	conn := k.conns.Add(1)
	if conn > 5 {
		http.Error(w, "reconnecting for good", http.StatusServiceUnavailable)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"kimi-code.bearer.tok"}})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	ctx := r.Context()
	send := func(s string) error { return c.Write(ctx, websocket.MessageText, []byte(s)) }
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		m := gjson.ParseBytes(b)
		switch m.Get("type").String() {
		case "client_hello":
			send(`{"type":"server_hello","payload":{"protocol_version":2}}`)
		case "subscribe":
			from := m.Get("payload.cursors." + gjson.Escape(k.sid) + ".seq").Int()
			k.mu.Lock()
			k.from = append(k.from, from)
			k.mu.Unlock()
			send(fmt.Sprintf(`{"type":"ack","id":%q,"code":0,"payload":{"accepted_subscriptions":[%q],"cursors":{}}}`, m.Get("id").String(), k.sid))
			for _, f := range k.frames {
				if seq := gjson.Get(f, "seq").Int(); seq > from {
					if send(f) != nil {
						return
					}
					if conn == 1 && seq == k.dropAfter {
						c.CloseNow() // the network breaks
						return
					}
				}
			}
			send(`{"type":"ping","payload":{"nonce":"last"}}`)
		case "pong":
			if m.Get("payload.nonce").String() == "last" {
				k.once.Do(func() { close(k.done) })
			}
		}
	}
}

// followKimi runs `aep-hook follow kimi-web` against frames until the
// bridge has read them all, and returns the events recorded and the
// connections it made.
func followKimi(t *testing.T, frames []string, sid string, dropAfter int64) (types []string, k *kimiServer, home string) {
	t.Helper()
	k = &kimiServer{sid: sid, frames: frames, dropAfter: dropAfter, done: make(chan struct{})}
	srv := httptest.NewServer(k)
	defer srv.Close()
	home, tmp := t.TempDir(), t.TempDir()
	tok := filepath.Join(tmp, "server.token")
	os.WriteFile(tok, []byte("tok\n"), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a safety net
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "follow", "kimi-web", "--url", srv.URL, "--token-file", tok, "--mode", "primary")
	cmd.Env = hookEnv(home, tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.done:
	case <-ctx.Done():
	}
	stopProcess(cmd)
	for _, p := range logsUnder(t, home) {
		for _, e := range readLog(t, p) {
			types = append(types, e["type"].(string))
		}
	}
	return types, k, home
}

// One kimi web frame over 16 MiB dropped the connection; the server
// replayed from the cursor and sent it again, for good, and nothing after
// it was ever recorded. Now the frame is skipped and recorded, the cursor
// moves past it and following goes on.
func TestAttackKimiWebOversizedFrame(t *testing.T) {
	frames, sid := kimiFrames(t, "tools")
	clean, _, _ := followKimi(t, frames, sid, 0)
	// The first tool result becomes a frame of 17 MiB (its payload padded;
	// the envelope's routing fields keep their places around it).
	big := -1
	for i, f := range frames {
		if gjson.Get(f, "type").String() == "tool.result" {
			big = i
			break
		}
	}
	if big < 0 || len(clean) == 0 {
		t.Fatalf("fixture: tool.result at %d, %d events", big, len(clean))
	}
	pad, _ := json.Marshal(strings.Repeat("x", 17<<20))
	withBig := append([]string(nil), frames...)
	withBig[big] = strings.Replace(frames[big], `"payload":{`, `"payload":{"pad":`+string(pad)+`,`, 1)
	got, k, home := followKimi(t, withBig, sid, 0)
	if conns := k.conns.Load(); conns != 1 {
		t.Errorf("%d connections, want 1 (the frame must not cost a reconnect)", conns)
	}
	// Everything after the frame is recorded: the record ends as the
	// clean one does, short only of what that one frame meant.
	if len(got) == 0 || got[len(got)-1] != clean[len(clean)-1] || len(got) < len(clean)-2 {
		t.Fatalf("recorded %d events ending %v; without the big frame %d ending %v", len(got), tailOf(got), len(clean), tailOf(clean))
	}
	bigSeq := gjson.Get(frames[big], "seq").Int()
	if n := oversizedFailures(t, home, bigSeq); n != 1 {
		t.Errorf("the skipped frame was recorded %d times, want once", n)
	}
	// The connection breaks right after the big frame: the bridge
	// resubscribes from past it, so the server does not send it again.
	got, k, home = followKimi(t, withBig, sid, bigSeq)
	if k.conns.Load() != 2 || len(k.from) != 2 || k.from[1] < bigSeq {
		t.Errorf("%d connections, subscribed from %v: want the second from seq %d or later", k.conns.Load(), k.from, bigSeq)
	}
	if len(got) == 0 || got[len(got)-1] != clean[len(clean)-1] {
		t.Errorf("after the reconnect, recorded %d events ending %v; without the big frame %d ending %v", len(got), tailOf(got), len(clean), tailOf(clean))
	}
	if n := oversizedFailures(t, home, bigSeq); n != 1 {
		t.Errorf("after the reconnect, the skipped frame was recorded %d times, want once", n)
	}
}

// oversizedFailures counts the failures under home that record the frame
// of seq skipped as oversized (one lost event each).
func oversizedFailures(t *testing.T, home string, seq int64) int {
	t.Helper()
	n := 0
	for _, f := range failuresIn(t, filepath.Join(home, "internal", "errors.jsonl")) {
		if f.Stage == "oversized" && f.Lost == 1 && strings.Contains(f.Error, fmt.Sprintf("seq %d)", seq)) {
			n++
		}
	}
	return n
}

func tailOf(s []string) []string { return s[max(0, len(s)-3):] }

// stopProcess ends a follower or tee gracefully and waits for it.
func stopProcess(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}
