//go:build !linux

package control

import (
	"context"
	"net"
	"time"
)

// Elsewhere than Linux this package dials with Go's dialer (and so links
// package net): every host is dialled by itself.

func selfDials(string) bool { return true }

func dialSelf(ctx context.Context, host, port string, deadline time.Time) (Conn, error) {
	d := net.Dialer{Deadline: deadline}
	return d.DialContext(ctx, "tcp", joinHostPort(host, port))
}
