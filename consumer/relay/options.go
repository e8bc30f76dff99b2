package relay

import (
	"net/http"
	"time"

	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/consumer/relay/buffer"
)

// DefaultListen is the relay's default address (the reference relay's).
const DefaultListen = "127.0.0.1:8787"

// Defaults for the zero fields of Options.
const (
	DefaultMaxBody     = 16 << 20
	DefaultMaxBatch    = 10000
	DefaultMaxFrame    = 4 << 20
	DefaultMaxSubs     = 64
	DefaultMaxConns    = 1024
	DefaultQueue       = 32 << 20
	DefaultPing        = 15 * time.Second
	DefaultPongTimeout = 90 * time.Second
	DefaultDrain       = 5 * time.Second
	DefaultWriteWait   = 10 * time.Second
)

// Options configure a Server. Zero fields take the defaults.
type Options struct {
	// Home is $AEP_HOME: the local logs are Home/logs, the relay's own
	// state (store, cursors, audit log, lock) Home/relay.
	Home string
	// Tokens, when set, require a bearer token of every request except a
	// bare /healthz (auth.User: the user's own token alone, the relay's
	// default); nil is the open loopback posture, watch and post only.
	Tokens *auth.Tokens
	// NoFollow serves only what arrives over the network, leaving the
	// local logs alone.
	NoFollow bool

	Buffer      int   // events per session buffer (advertised); 0: buffer.DefaultDepth
	MaxSessions int   // session buffers kept; 0: buffer.DefaultMaxSessions
	MaxBytes    int64 // bytes across buffers; 0: buffer.DefaultMaxBytes
	MaxBody     int64 // POST body bytes; 0: DefaultMaxBody
	MaxBatch    int   // events per POST; 0: DefaultMaxBatch
	MaxFrame    int64 // WebSocket frame bytes; 0: DefaultMaxFrame
	MaxFrom     int   // resume positions per request; 0: MaxSessions
	MaxSubs     int   // subscriptions per WebSocket connection; 0: DefaultMaxSubs
	MaxConns    int   // concurrent SSE and WebSocket connections; 0: DefaultMaxConns
	Queue       int64 // bytes queued per connection before it is cut; 0: DefaultQueue or 2 x MaxBody

	Ping        time.Duration // SSE ": ping" and WebSocket ping interval; 0: DefaultPing
	PongTimeout time.Duration // silence after which a WebSocket peer is dropped; 0: DefaultPongTimeout
	Drain       time.Duration // shutdown bound; 0: DefaultDrain
	WriteWait   time.Duration // one write to a peer; 0: DefaultWriteWait

	// Hosts are extra names requests may give in Host (a reverse
	// proxy's); Origins are extra browser origins allowed (guard.Guard).
	Hosts, Origins []string
	// Sync makes the store wait for the disk before acknowledging.
	Sync bool
	// Console, when set, is served at / and every path the relay's
	// bindings do not claim. It is reached without a token (the page
	// signs in); it reads the caller's grant with GrantFrom and sets the
	// sign-in cookie with SetSignInCookie.
	Console http.Handler
	// Now is the clock of the audit log; nil: time.Now.
	Now func() time.Time
}

func or[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

func (o *Options) defaults() {
	o.Buffer = or(o.Buffer, buffer.DefaultDepth)
	o.MaxSessions = or(o.MaxSessions, buffer.DefaultMaxSessions)
	o.MaxBytes = or(o.MaxBytes, int64(buffer.DefaultMaxBytes))
	o.MaxBody = or(o.MaxBody, int64(DefaultMaxBody))
	o.MaxBatch = or(o.MaxBatch, DefaultMaxBatch)
	o.MaxFrame = or(o.MaxFrame, int64(DefaultMaxFrame))
	o.MaxFrom = or(o.MaxFrom, o.MaxSessions)
	o.MaxSubs = or(o.MaxSubs, DefaultMaxSubs)
	o.MaxConns = or(o.MaxConns, DefaultMaxConns)
	// One batch as large as the relay takes never cuts a consumer that
	// is reading.
	o.Queue = or(o.Queue, max(int64(DefaultQueue), 2*o.MaxBody))
	o.Ping = or(o.Ping, DefaultPing)
	o.PongTimeout = or(o.PongTimeout, DefaultPongTimeout)
	o.Drain = or(o.Drain, DefaultDrain)
	o.WriteWait = or(o.WriteWait, DefaultWriteWait)
	if o.Now == nil {
		o.Now = time.Now
	}
}
