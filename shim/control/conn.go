package control

import (
	"context"
	"errors"
	"io"
	"net/url"
	"time"
)

// Conn is the connection a relay link runs over: a TCP connection, or TLS
// over one. net.Conn satisfies it, and so does the *os.File over a socket
// that this package dials by itself, so that a build which needs nothing
// more does not link package net (its initialisation and tables cost every
// hook process).
type Conn interface {
	io.ReadWriteCloser
	SetDeadline(t time.Time) error
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
}

// Secure is what the full binary lends a relay connection from the packages
// the hook-only build leaves out (package wss's Client): Go's resolver and
// dialer, and TLS for a wss:// relay. Without one this package dials by
// itself where it can (on Linux an IP address or localhost, elsewhere any
// host; see [NeedsSecure]), and refuses a wss:// URL ([ErrNoTLS]) and any
// other host ([ErrNoResolver]).
type Secure interface {
	// Dial connects over TCP to addr (host:port) by deadline.
	Dial(ctx context.Context, addr string, deadline time.Time) (Conn, error)
	// Client runs a TLS client handshake over c, a connection Dial made,
	// for serverName.
	Client(ctx context.Context, c Conn, serverName string) (Conn, error)
}

// ErrNoTLS says a wss:// relay was dialled without a [Secure].
var ErrNoTLS = errors.New("this build does not speak TLS to a wss:// relay")

// ErrNoResolver says a relay named by a host this package cannot dial by
// itself was dialled without a [Secure].
var ErrNoResolver = errors.New("this build does not resolve the relay's host name")

// NeedsSecure reports whether dialling the relay at raw needs a [Secure]:
// a wss:// relay does, and so does one whose host this package does not
// dial by itself. A URL that does not parse needs none (the dial fails
// on its own).
func NeedsSecure(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "wss":
		return true
	case "ws":
		return !selfDials(u.Hostname())
	}
	return false
}

// dialTCP connects to host:port by deadline: through secure when there is
// one (the full binary: exactly as Go's dialer does), else by itself.
func dialTCP(ctx context.Context, secure Secure, host, port string, deadline time.Time) (Conn, error) {
	if secure != nil {
		return secure.Dial(ctx, joinHostPort(host, port), deadline)
	}
	if !selfDials(host) {
		return nil, ErrNoResolver
	}
	return dialSelf(ctx, host, port, deadline)
}

// joinHostPort is net.JoinHostPort.
func joinHostPort(host, port string) string {
	for i := 0; i < len(host); i++ {
		if host[i] == ':' {
			return "[" + host + "]:" + port
		}
	}
	return host + ":" + port
}
