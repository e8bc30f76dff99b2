// Package wss is what the full binary lends a hook's connection to the
// relay (a control.Secure): Go's dialer and resolver, and TLS for a wss://
// relay.
//
// It is apart from package control because crypto/tls and the X.509 and
// elliptic-curve packages under it, and package net, initialise in every
// process that links them, and every hook firing is a process: the
// hook-only build leaves this package out and hands a wss:// relay, or one
// named by a host name, to the full binary.
package wss

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/aep-hook/aep-hook/shim/control"
)

// Client dials with Go's dialer and runs TLS 1.2+ client handshakes,
// verifying the relay's certificate against the system's roots.
var Client control.Secure = network{}

type network struct{}

// Dial connects over TCP as Go's dialer does, resolving host names.
func (network) Dial(ctx context.Context, addr string, deadline time.Time) (control.Conn, error) {
	d := net.Dialer{Deadline: deadline}
	return d.DialContext(ctx, "tcp", addr)
}

// Client runs a TLS client handshake over c for serverName, the relay
// URL's host.
func (network) Client(ctx context.Context, c control.Conn, serverName string) (control.Conn, error) {
	nc, ok := c.(net.Conn)
	if !ok {
		return nil, errors.New("relay TLS handshake: not a connection this package dialled")
	}
	tc := tls.Client(nc, &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("relay TLS handshake: %w", err)
	}
	return tc, nil
}
