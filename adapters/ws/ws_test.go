package ws

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// echo serves one connection: it answers each text frame with the same
// bytes, then sends what the test asks for in its script.
func echo(t *testing.T, script func(ctx context.Context, c *websocket.Conn)) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"proto.b"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		script(r.Context(), c)
	}))
}

func wsURL(s *httptest.Server) string { return "ws" + strings.TrimPrefix(s.URL, "http") }

func TestConn(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		script  func(ctx context.Context, c *websocket.Conn)
		max     int64
		wantErr func(error) bool
		want    string
	}{
		{name: "a JSON frame written comes back", script: func(ctx context.Context, c *websocket.Conn) {
			_, b, _ := c.Read(ctx)
			c.Write(ctx, websocket.MessageText, b)
			c.Close(websocket.StatusNormalClosure, "")
		}, want: `{"type":"ping"}`},
		{name: "a frame over the bound is reported", max: 8, script: func(ctx context.Context, c *websocket.Conn) {
			c.Read(ctx)
			c.Write(ctx, websocket.MessageText, []byte(`{"pad":"0123456789"}`))
		}, wantErr: func(err error) bool {
			var tb *TooBigError
			return errors.As(err, &tb) && tb.Size == 20 && string(tb.Head) == `{"pad":"0` && string(tb.Tail) == `{"pad":"0123456789"}`
		}},
		{name: "a binary frame is refused", script: func(ctx context.Context, c *websocket.Conn) {
			c.Read(ctx)
			c.Write(ctx, websocket.MessageBinary, []byte{1, 2})
		}, wantErr: func(err error) bool { return errors.Is(err, ErrBinary) }},
		{name: "a normal close reads as closed", script: func(ctx context.Context, c *websocket.Conn) {
			c.Read(ctx)
			c.Close(websocket.StatusGoingAway, "bye")
		}, wantErr: IsClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := echo(t, tc.script)
			defer s.Close()
			c, err := Dial(ctx, wsURL(s), Options{Subprotocols: []string{"proto.a", "proto.b"}, MaxFrame: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if c.Protocol != "proto.b" {
				t.Errorf("subprotocol %q, want the server's choice proto.b", c.Protocol)
			}
			if err := c.WriteJSON(ctx, map[string]string{"type": "ping"}); err != nil {
				t.Fatal(err)
			}
			b, err := c.Read(ctx)
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("read: %v (%q)", err, b)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("read %q %v, want %q", b, err, tc.want)
			}
		})
	}
}

func TestDialRefused(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer s.Close()
	_, err := Dial(context.Background(), wsURL(s), Options{})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("dial: %v, want the handshake's HTTP 401", err)
	}
}

func TestURL(t *testing.T) {
	for _, c := range []struct {
		base string
		segs []string
		want string
	}{
		{"http://127.0.0.1:8000", []string{"sockets", "events", "c 1/../x"}, "ws://127.0.0.1:8000/sockets/events/c%201%2F..%2Fx?resend_mode=all"},
		{"https://u:p@host/pre%20fix/", []string{"api", "v1", "ws"}, "wss://host/pre%20fix/api/v1/ws?resend_mode=all"},
	} {
		b, _ := url.Parse(c.base)
		if got := URL(b, url.Values{"resend_mode": {"all"}}, c.segs...); got != c.want {
			t.Errorf("URL(%s, %q) = %s, want %s", c.base, c.segs, got, c.want)
		}
	}
}

func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	auth := http.Header{}
	auth.Set("Authorization", "Bearer t0k")
	tests := []struct {
		name   string
		url    string
		header http.Header
		status int
		body   string
		err    string
	}{
		{"answered", srv.URL + "/x", auth, http.StatusOK, `{"ok":true}`, ""},
		{"refused", srv.URL + "/x", nil, http.StatusUnauthorized, "", ""},
		{"no server: the error names what, never the URL", "http://127.0.0.1:1/x?token=s3cret", auth, 0, "", "GET /x: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, err := Get(context.Background(), nil, tt.url, tt.header, "GET /x")
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("err %v, want %q... without the URL", err, tt.err)
				}
				return
			}
			if err != nil || status != tt.status || string(body) != tt.body {
				t.Errorf("got %d %q %v, want %d %q", status, body, err, tt.status, tt.body)
			}
		})
	}
}

// A frame over the bound is skipped, not fatal: the frames after it on the
// same connection are read, and its head and tail are kept.
func TestConnSkipsOversizedFrame(t *testing.T) {
	ctx := context.Background()
	big := `{"type":"event","seq":7,"session_id":"s1","payload":"` + strings.Repeat("x", 200_000) + `","epoch":"ep_1"}`
	s := echo(t, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageText, []byte(big))
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"event","seq":8}`))
		c.Close(websocket.StatusNormalClosure, "")
	})
	defer s.Close()
	c, err := Dial(ctx, wsURL(s), Options{MaxFrame: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_, err = c.Read(ctx)
	var tb *TooBigError
	if !errors.As(err, &tb) || tb.Size != int64(len(big)) || len(tb.Head) != 100_001 && len(tb.Head) != HeadBytes ||
		!strings.HasPrefix(big, string(tb.Head)) || !strings.HasSuffix(big, string(tb.Tail)) || len(tb.Tail) != TailBytes {
		t.Fatalf("first read: %v", err)
	}
	b, err := c.Read(ctx)
	if err != nil || string(b) != `{"type":"event","seq":8}` {
		t.Fatalf("the next frame: %q %v", b, err)
	}
	if _, err := c.Read(ctx); !IsClosed(err) {
		t.Fatalf("then: %v, want closed", err)
	}
}

func TestTailWriter(t *testing.T) {
	w := &tailWriter{keep: 4}
	for _, p := range []string{"ab", "cde", "f", "0123456789", "x"} {
		w.Write([]byte(p))
	}
	if string(w.b) != "789x" {
		t.Fatalf("tail %q", w.b)
	}
}

func TestTooBigField(t *testing.T) {
	e := &TooBigError{Head: []byte(`{"type":"event","seq":7,"session_id":"s1","payload":{"epoch":"inner","text":"xxxx`),
		Tail: []byte(`xxxx"},"note":"a\"b","epoch":"ep_9"}`)}
	for key, want := range map[string]string{"seq": "7", "session_id": "s1", "type": "event", "epoch": "ep_9", "note": "", "missing": "", "payload": ""} {
		if got := e.Field(key); got != want {
			t.Errorf("Field(%q) = %q, want %q", key, got, want)
		}
	}
}
