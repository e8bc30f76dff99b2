package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// server is a WebSocket peer written with the library the relay uses, so
// the hand-written client is held to a real implementation.
func server(t *testing.T, handle func(ctx context.Context, c *websocket.Conn, r *http.Request)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		handle(r.Context(), c, r)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket"
}

func dial(t *testing.T, url, token string) *wsConn {
	t.Helper()
	ws, err := dialWS(context.Background(), url, token, 5*time.Second, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.conn.Close() })
	return ws
}

// TestWSMessages holds the client to RFC 6455 against coder/websocket:
// text both ways at every length class, a server ping answered, a close
// reported.
func TestWSMessages(t *testing.T) {
	sizes := []int{0, 1, 125, 126, 65535, 65536, 300000}
	url := server(t, func(ctx context.Context, c *websocket.Conn, _ *http.Request) {
		c.SetReadLimit(1 << 20)
		for range sizes {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if err := c.Write(ctx, typ, b); err != nil {
				return
			}
		}
		// A ping the client must answer (Ping waits for the pong).
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		go c.Read(ctx) // pongs are read by a reader
		if err := c.Ping(pctx); err != nil {
			c.Write(ctx, websocket.MessageText, []byte("no pong"))
			return
		}
		c.Write(ctx, websocket.MessageText, []byte("pong seen"))
		c.Close(websocket.StatusNormalClosure, "bye")
	})
	ws := dial(t, url, "tok")
	for _, n := range sizes {
		msg := bytes.Repeat([]byte("a"), n)
		if err := ws.WriteText(msg); err != nil {
			t.Fatal(err)
		}
		op, got, err := ws.ReadMessage()
		if err != nil || op != opText || !bytes.Equal(got, msg) {
			t.Fatalf("size %d: op %d len %d err %v", n, op, len(got), err)
		}
	}
	done := make(chan struct{})
	var got []byte
	var err error
	go func() {
		defer close(done)
		_, got, err = ws.ReadMessage()
	}()
	<-done
	if err != nil || string(got) != "pong seen" {
		t.Fatalf("after the ping: %q %v", got, err)
	}
	_, _, err = ws.ReadMessage()
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != 1000 || ce.Reason != "bye" {
		t.Fatalf("close: %v", err)
	}
}

// TestWSRefused: a relay that answers the upgrade with a status refuses.
func TestWSRefused(t *testing.T) {
	url := server(t, func(context.Context, *websocket.Conn, *http.Request) {})
	_, err := dialWS(context.Background(), url, "wrong", 5*time.Second, 1<<20, nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err %v", err)
	}
	_, err = dialWS(context.Background(), "ws://127.0.0.1:1/socket", "tok", 5*time.Second, 1<<20, nil)
	if !Absent(err) {
		t.Fatalf("a port nothing listens on: %v, want absent", err)
	}
	if _, err := dialWS(context.Background(), "http://x/socket", "", time.Second, 1, nil); err == nil {
		t.Fatal("an http URL dialled")
	}
}

// rawPeer serves one connection with a hand-made upgrade and frames, for
// what a library will not send (fragments, oversized and malformed
// frames, a bad accept key).
func rawPeer(t *testing.T, accept string, frames ...[]byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		key := ""
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if k, ok := strings.CutPrefix(l, "Sec-WebSocket-Key: "); ok {
				key = strings.TrimSpace(k)
			}
			if l == "\r\n" {
				break
			}
		}
		if accept == "" {
			accept = acceptKey(key)
		}
		c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n\r\n"))
		for _, f := range frames {
			c.Write(f)
		}
		time.Sleep(time.Second)
	}()
	return "ws://" + ln.Addr().String() + "/socket"
}

func frame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, byte(n))
	case n <= 0xFFFF:
		out = append(out, 126, byte(n>>8), byte(n))
	default:
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(n))
		out = append(append(out, 127), l[:]...)
	}
	return append(out, payload...)
}

func TestWSFrames(t *testing.T) {
	cases := []struct {
		name   string
		accept string
		frames [][]byte
		want   string // the message, or "error: part"
	}{
		{"fragments", "", [][]byte{frame(false, opText, []byte("he")), frame(false, opContinuation, []byte("ll")), frame(true, opContinuation, []byte("o"))}, "hello"},
		{"a ping between fragments", "", [][]byte{frame(false, opText, []byte("a")), frame(true, opPing, []byte("p")), frame(true, opContinuation, []byte("b"))}, "ab"},
		{"too large", "", [][]byte{frame(true, opText, make([]byte, 2048))}, "error: larger than"},
		{"too large in fragments", "", [][]byte{frame(false, opText, make([]byte, 600)), frame(true, opContinuation, make([]byte, 600))}, "error: larger than"},
		{"a long control frame", "", [][]byte{frame(true, opPing, make([]byte, 126))}, "error: malformed control"},
		{"a lone continuation", "", [][]byte{frame(true, opContinuation, []byte("x"))}, "error: continuation"},
		{"an unknown opcode", "", [][]byte{frame(true, 0x3, nil)}, "error: unknown opcode"},
		{"a bad accept key", "bad", nil, "error: not a WebSocket upgrade"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := rawPeer(t, c.accept, c.frames...)
			ws, err := dialWS(context.Background(), url, "", 5*time.Second, 1024, nil)
			if err == nil {
				defer ws.conn.Close()
				var msg []byte
				_, msg, err = ws.ReadMessage()
				if err == nil {
					if string(msg) != c.want {
						t.Fatalf("message %q, want %q", msg, c.want)
					}
					return
				}
			}
			want, ok := strings.CutPrefix(c.want, "error: ")
			if !ok || !strings.Contains(err.Error(), want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// FuzzReadMessage feeds the frame reader arbitrary bytes after a good
// upgrade: it returns a message or an error, bounded, never panics.
func FuzzReadMessage(f *testing.F) {
	f.Add(frame(true, opText, []byte(`{"type":"hello"}`)))
	f.Add(append(frame(false, opText, []byte("a")), frame(true, opContinuation, []byte("b"))...))
	f.Add(frame(true, opClose, []byte{0x03, 0xE8, 'x'}))
	f.Add([]byte{0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Add([]byte{0x81, 0x85, 1, 2, 3, 4, 'a', 'b', 'c', 'd', 'e'})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, z := net.Pipe()
		defer a.Close()
		defer z.Close()
		go func() {
			z.Write(b)
			z.Close()
		}()
		go func() { // the client's replies (pongs, close) are read and dropped
			buf := make([]byte, 256)
			for {
				if _, err := z.Read(buf); err != nil {
					return
				}
			}
		}()
		ws := &wsConn{conn: a, br: bufio.NewReader(a), max: 4096}
		for range 8 {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if len(msg) > 4096 {
				t.Fatalf("a message of %d bytes passed a 4096 bound", len(msg))
			}
		}
	})
}
