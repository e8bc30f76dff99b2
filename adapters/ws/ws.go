// Package ws is the WebSocket client the stream bridges share (the Kimi
// web and OpenHands bridges): a connection reading one bounded text frame at
// a time and writing JSON frames one writer at a time, on
// github.com/coder/websocket (RFC 6455 framing, ping/pong and close
// handshakes are that library's, never hand-written here), and the REST
// read those bridges make beside their sockets (Get).
package ws

import (
	"bytes"
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
	"github.com/tidwall/gjson"
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
	// is skipped (read through, its head and tail kept; see TooBigError)
	// and the connection goes on.
	MaxFrame int64
	// Client makes the handshake request (nil: http.DefaultClient).
	Client *http.Client
}

// Conn is one open WebSocket connection. Read must be called from one
// goroutine; WriteJSON and Close are safe from any.
type Conn struct {
	c   *websocket.Conn
	max int64
	mu  sync.Mutex
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
	// The library would close the connection at a frame over its limit,
	// and a server that replays from the bridge's cursor would send that
	// frame again on every reconnect: Read enforces the bound itself, so
	// an oversized frame is skipped instead.
	c.SetReadLimit(-1)
	return &Conn{c: c, max: max, Protocol: c.Subprotocol()}, nil
}

// Kept of an oversized frame: its first HeadBytes (where a frame's
// routing fields sit: type, ids, sequence) and its last TailBytes (fields
// a sender puts after the payload).
const (
	HeadBytes = 64 << 10
	TailBytes = 4 << 10
)

// TooBigError reports a frame over the bound, read through and skipped:
// the connection stays usable. Head and Tail are its first and last bytes,
// for the bridge to learn which message it was.
type TooBigError struct {
	Size       int64 // the frame's whole size
	Head, Tail []byte
}

// Field returns the frame's top-level member key as far as the kept bytes
// show it: its raw JSON from the head (read as the start of an object),
// else a string member found last in the tail (a field after the payload:
// a string is all a tail can be read for). "" when neither shows it.
func (e *TooBigError) Field(key string) string {
	if r := gjson.GetBytes(e.Head, gjson.Escape(key)); r.Exists() && gjson.Valid(r.Raw) {
		return r.String()
	}
	pat := []byte(`"` + key + `":"`)
	i := bytes.LastIndex(e.Tail, pat)
	if i < 0 {
		return ""
	}
	v := e.Tail[i+len(pat):]
	j := bytes.IndexByte(v, '"')
	if j < 0 || bytes.IndexByte(v[:j], '\\') >= 0 {
		return ""
	}
	return string(v[:j])
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("websocket: a frame of %d bytes over the bound was skipped", e.Size)
}

// ErrBinary reports a binary frame where text (JSON) was expected.
var ErrBinary = errors.New("websocket: a binary frame where JSON text was expected")

// Read returns the next text frame. It returns an error when the
// connection ends (a close frame, a broken socket) or ctx does; a frame
// over the bound returns a *TooBigError and a binary frame ErrBinary, and
// the connection goes on in both cases (the frame was read through).
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	typ, r, err := c.c.Reader(ctx)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(r, c.max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > c.max {
		tb := &TooBigError{Head: append([]byte(nil), b[:min(len(b), HeadBytes)]...)}
		tail := &tailWriter{keep: TailBytes, b: append([]byte(nil), b[max(0, len(b)-TailBytes):]...)}
		n, err := io.Copy(tail, r)
		if err != nil {
			return nil, err
		}
		tb.Size, tb.Tail = int64(len(b))+n, tail.b
		return nil, tb
	}
	if typ != websocket.MessageText {
		return nil, ErrBinary
	}
	return b, nil
}

// Skipped reports a Read error after which the connection goes on: a
// frame over the bound or a binary one, read through.
func Skipped(err error) bool {
	var tb *TooBigError
	return errors.As(err, &tb) || errors.Is(err, ErrBinary)
}

// tailWriter keeps the last keep bytes written to it.
type tailWriter struct {
	keep int
	b    []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.keep {
		t.b = append(t.b[:0], p[len(p)-t.keep:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - t.keep; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
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
