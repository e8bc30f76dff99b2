// Package wss is the TLS side of a hook's connection to a wss:// relay.
//
// It is apart from package control because crypto/tls and the X.509 and
// elliptic-curve packages under it initialise in every process that links
// them, and every hook firing is a process: the hook-only build leaves
// this package out and hands a wss:// relay to the full binary.
package wss

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// Client runs a TLS 1.2+ client handshake over c for serverName, the
// relay URL's host, verifying its certificate against the system's roots.
func Client(ctx context.Context, c net.Conn, serverName string) (net.Conn, error) {
	tc := tls.Client(c, &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("relay TLS handshake: %w", err)
	}
	return tc, nil
}
