// Package ws is the WebSocket client the stream bridges share (the Kimi
// web and OpenHands bridges): a connection reading one bounded text frame at
// a time and writing JSON frames one writer at a time, on
// github.com/coder/websocket (RFC 6455 framing, ping/pong and close
// handshakes are that library's, never hand-written here), and the REST
// read those bridges make beside their sockets (Get).
package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// DefaultMaxFrame bounds one frame a Conn reads: 16 MiB.
const DefaultMaxFrame = 16 << 20

// writeTimeout bounds one frame written.
const writeTimeout = 10 * time.Second

// Options are what Dial needs beyond the URL.
type Options struct {
	// Subprotocols are offered in the handshake (Kimi web's bearer token
	// rides one).
	Subprotocols []string
	// Header is sent with the handshake.
	Header http.Header
	// MaxFrame bounds one frame read (0: DefaultMaxFrame); a longer frame
	// ends the connection.
	MaxFrame int64
	// Client makes the handshake request (nil: http.DefaultClient).
	Client *http.Client
}

// Conn is one open WebSocket connection. Read must be called from one
// goroutine; WriteJSON and Close are safe from any.
type Conn struct {
	c  *websocket.Conn
	mu sync.Mutex
	// Protocol is the subprotocol the server chose.
	Protocol string
}

// Dial opens a connection to url (ws:// or wss://).
func Dial(ctx context.Context, url string, o Options) (*Conn, error) {
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient: o.Client, HTTPHeader: o.Header, Subprotocols: o.Subprotocols,
	})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("websocket handshake: HTTP %d", resp.StatusCode)
		}
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	max := o.MaxFrame
	if max <= 0 {
		max = DefaultMaxFrame
	}
	c.SetReadLimit(max)
	return &Conn{c: c, Protocol: c.Subprotocol()}, nil
}

// ErrBinary reports a binary frame where text (JSON) was expected.
var ErrBinary = errors.New("websocket: a binary frame where JSON text was expected")

// Read returns the next text frame. It returns an error when the
// connection ends (a close frame, a broken socket, a frame over the bound)
// or ctx does.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	typ, b, err := c.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, ErrBinary
	}
	return b, nil
}

// WriteJSON writes v as one text frame.
func (c *Conn) WriteJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.Write(ctx, websocket.MessageText, b)
}

// Close ends the connection with a normal close; it does not wait long
// for the peer's answer.
func (c *Conn) Close() error {
	return c.c.Close(websocket.StatusNormalClosure, "")
}

// CloseNow ends the connection at once, without the close handshake.
func (c *Conn) CloseNow() error { return c.c.CloseNow() }

// IsClosed reports whether err says the peer closed the connection
// normally.
func IsClosed(err error) bool {
	s := websocket.CloseStatus(err)
	return s == websocket.StatusNormalClosure || s == websocket.StatusGoingAway
}

// URL is the WebSocket URL under base, an http(s) URL (http becomes ws,
// https wss), of the path segments, with query q (see PathURL).
func URL(base *url.URL, q url.Values, segs ...string) string {
	u := PathURL(base, q, segs...)
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	case "http":
		u.Scheme = "ws"
	}
	return u.String()
}

// PathURL is base (its own path kept as a prefix, its user info dropped)
// with the path segments appended, each escaped as one segment (an
// untrusted id stays one segment), and query q.
func PathURL(base *url.URL, q url.Values, segs ...string) *url.URL {
	u := *base
	u.User = nil
	var raw strings.Builder
	raw.WriteString(strings.TrimSuffix(u.EscapedPath(), "/"))
	for _, s := range segs {
		raw.WriteString("/" + url.PathEscape(s))
	}
	u.RawPath = raw.String()
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = q.Encode()
	return &u
}

// MaxREST bounds the body Get reads: 32 MiB.
const MaxREST = 32 << 20

// restTimeout bounds one Get made without a client of the bridge's own.
const restTimeout = 30 * time.Second

// Get is a bridge's REST read: it GETs rawURL with header through c (nil:
// a client with a 30 s timeout) and returns the answer's status and body
// (at most MaxREST bytes of it). Its errors name what was asked (what:
// "GET /sessions"), never the URL: a query may carry a token.
func Get(ctx context.Context, c *http.Client, rawURL string, header http.Header, what string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if c == nil {
		c = &http.Client{Timeout: restTimeout}
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxREST))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s: %w", what, err)
	}
	return resp.StatusCode, body, nil
}
