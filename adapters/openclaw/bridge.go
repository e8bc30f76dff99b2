package openclaw

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/ws"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// ProtocolVersion is the gateway wire protocol the bridge speaks.
const ProtocolVersion = 4

// handshakeTimeout bounds the challenge / connect exchange.
const handshakeTimeout = 30 * time.Second

// Bridge follows a gateway's broadcast events.
type Bridge struct {
	// Base is the gateway's URL (http://127.0.0.1:18789 or ws://...).
	Base *url.URL
	// Token is the gateway's shared token (gateway.auth.token).
	Token string
	// Password is the gateway's password (auth mode password), if any.
	Password string
	// Version names the bridge in the connect request.
	Version string
	// Deltas keeps the token-delta frames (the --deltas opt-in).
	Deltas bool
	// Nonce mints each moment's nonce.
	Nonce func() string
	// MaxFrame bounds one frame read (0: the ws default).
	MaxFrame int64
	// Errors keeps what the bridge notices itself (a frame over the bound,
	// skipped), without content; nil drops it.
	Errors shim.Recorder
}

// ConnectParams is the connect request's params: a backend operator client
// asking for read access only.
func (b *Bridge) ConnectParams() map[string]any {
	auth := map[string]any{}
	if b.Token != "" {
		auth["token"] = b.Token
	}
	if b.Password != "" {
		auth["password"] = b.Password
	}
	v := b.Version
	if v == "" {
		v = "dev"
	}
	return map[string]any{
		"minProtocol": ProtocolVersion, "maxProtocol": ProtocolVersion,
		"client": map[string]any{"id": "gateway-client", "version": v, "platform": "aep-hook", "mode": "backend"},
		"role":   "operator", "scopes": []string{"operator.read"}, "caps": []string{},
		"auth": auth, "userAgent": "aep-hook/" + v,
	}
}

// Open connects, answers the challenge, and subscribes to the session
// index.
func (b *Bridge) Open(ctx context.Context) (follow.Stream, error) {
	c, err := ws.Dial(ctx, ws.URL(b.Base, nil), ws.Options{MaxFrame: b.MaxFrame})
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := b.handshake(hctx, c); err != nil {
		c.CloseNow()
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	return &stream{b: b, c: c, ctx: rctx, stop: stop}, nil
}

// handshake waits for connect.challenge, sends connect, and waits for
// hello-ok; then it subscribes to sessions.
func (b *Bridge) handshake(ctx context.Context, c *ws.Conn) error {
	for {
		f, err := c.Read(ctx)
		if err != nil {
			return fmt.Errorf("gateway handshake: %w", err)
		}
		r := gjson.GetManyBytes(f, "type", "event", "id", "ok", "error.code", "error.message")
		switch {
		case r[0].String() == "event" && r[1].String() == "connect.challenge":
			if err := c.WriteJSON(ctx, map[string]any{"type": "req", "id": "aep-connect", "method": "connect", "params": b.ConnectParams()}); err != nil {
				return fmt.Errorf("gateway connect: %w", err)
			}
		case r[0].String() == "res" && r[2].String() == "aep-connect":
			if !r[3].Bool() {
				return fmt.Errorf("gateway refused the connect: %s %s", r[4].String(), clip(r[5].String(), 200))
			}
			return c.WriteJSON(ctx, map[string]any{"type": "req", "id": "aep-subscribe", "method": "sessions.subscribe", "params": map[string]any{}})
		}
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// stream is one open gateway connection.
type stream struct {
	b    *Bridge
	c    *ws.Conn
	ctx  context.Context
	stop context.CancelFunc
}

// Next reads the next frame: an event frame is one moment; a response
// (the subscription's) and a tick are keep-alives.
func (s *stream) Next() (follow.Item, error) {
	f, err := s.c.Read(s.ctx)
	var big *ws.TooBigError
	if errors.As(err, &big) {
		// The gateway replays nothing, so skipping the frame costs that
		// frame alone: say so, and go on.
		if s.b.Errors != nil {
			s.b.Errors.Record(shim.Failure{Adapter: "openclaw", Stage: "oversized", Lost: 1, Error: fmt.Sprintf(
				"openclaw frame of %d bytes (event %s) is over the bound: skipped, following goes on after it",
				big.Size, printable.Clip(big.Field("event"), 128))})
		}
		return follow.Item{}, nil
	}
	if errors.Is(err, ws.ErrBinary) {
		return follow.Item{}, nil
	}
	if err != nil {
		if ws.IsClosed(err) {
			return follow.Item{}, errors.Join(errEnded, err)
		}
		return follow.Item{}, err
	}
	if gjson.GetBytes(f, "type").String() != "event" {
		return follow.Item{}, nil
	}
	m := mapping.Moment{Raw: f, Facts: frameFacts(f), Deltas: s.b.Deltas}
	if s.b.Nonce != nil {
		m.Nonce = s.b.Nonce()
	}
	if m.Facts.Name == "tick" || strings.HasPrefix(m.Facts.Name, "connect.") {
		return follow.Item{}, nil
	}
	return follow.Item{Moments: []mapping.Moment{m}}, nil
}

var errEnded = errors.New("the gateway closed the connection")

func (s *stream) Close() error {
	s.stop()
	return s.c.Close()
}

// CatchUp has nothing to replay: the gateway does not replay broadcast
// events to a new connection.
func (b *Bridge) CatchUp(context.Context, string) ([]mapping.Moment, error) { return nil, nil }
