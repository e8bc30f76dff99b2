package control

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"
)

// On Linux this package dials a relay by itself, with the socket system
// calls and the runtime's poller through *os.File, so that the hook-only
// build need not link package net. It dials what needs no resolver: an IP
// address, and localhost; the hook-only build hands a relay named by any
// other host to the full binary.

// selfDials reports whether dialSelf can reach host: an IP address
// without a zone (a zone names an interface, which takes package net to
// look up), or localhost.
func selfDials(host string) bool {
	_, ok := selfAddrs(host)
	return ok
}

// selfAddrs is host's addresses in the order to try them: localhost's
// loopback addresses IPv4 first, as the systems' hosts files list them.
func selfAddrs(host string) ([]netip.Addr, bool) {
	if host == "localhost" {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return nil, false
	}
	return []netip.Addr{a.Unmap()}, true
}

// dialSelf connects to host:port by deadline, trying host's addresses in
// turn (a refusal on loopback is immediate) while the deadline allows.
func dialSelf(ctx context.Context, host, port string, deadline time.Time) (Conn, error) {
	ips, _ := selfAddrs(host)
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("relay URL: port %q is not a number", port)
	}
	var first error
	for _, ip := range ips {
		c, err := dialAddr(ctx, netip.AddrPortFrom(ip, uint16(p)), deadline)
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			break
		}
	}
	return nil, first
}

// dialAddr connects one nonblocking TCP socket to ap and waits for the
// connection in the poller, bounded by deadline and ctx. Errors read as
// package net's do ("dial tcp ADDR: connect: connection refused", "dial
// tcp ADDR: i/o timeout"); the connection's own name the relay ("read
// tcp ADDR: connection reset by peer").
func dialAddr(ctx context.Context, ap netip.AddrPort, deadline time.Time) (Conn, error) {
	addr := ap.String()
	if !time.Now().Before(deadline) {
		return nil, fmt.Errorf("dial tcp %s: %w", addr, os.ErrDeadlineExceeded)
	}
	var family int
	var sa syscall.Sockaddr
	if ap.Addr().Is4() {
		family, sa = syscall.AF_INET, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family, sa = syscall.AF_INET6, &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, fmt.Errorf("dial tcp %s: socket: %w", addr, err)
	}
	// As Go's dialer does: a hook's messages are small and each waits for
	// its answer, so Nagle's delay would only add to every round trip.
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	switch err := syscall.Connect(fd, sa); err {
	case nil, syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
	default:
		syscall.Close(fd)
		return nil, fmt.Errorf("dial tcp %s: connect: %w", addr, err)
	}
	// The descriptor is nonblocking, so the file is in the poller and its
	// deadlines work as a socket's.
	f := os.NewFile(uintptr(fd), "tcp "+addr)
	if err := f.SetWriteDeadline(deadline); err != nil {
		f.Close()
		return nil, fmt.Errorf("dial tcp %s: %w", addr, err)
	}
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
	err = waitConnected(f)
	if !stop() {
		// ctx ended meanwhile: the dial failed, or succeeded just in time
		// but is no longer wanted.
		f.Close()
		return nil, fmt.Errorf("dial tcp %s: %w", addr, context.Cause(ctx))
	}
	if err != nil {
		f.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("dial tcp %s: %w", addr, os.ErrDeadlineExceeded)
		}
		return nil, fmt.Errorf("dial tcp %s: connect: %w", addr, err)
	}
	f.SetWriteDeadline(time.Time{})
	return f, nil
}

// waitConnected waits, in the poller, for f's connect to finish, and
// returns its outcome.
func waitConnected(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	werr := rc.Write(func(fd uintptr) bool {
		// Connected once the socket has a peer; else SO_ERROR holds the
		// failure, and zero means still in progress.
		if _, err := syscall.Getpeername(int(fd)); err == nil {
			return true
		}
		n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		switch {
		case err != nil:
			cerr = err
			return true
		case n == 0, syscall.Errno(n) == syscall.EINPROGRESS, syscall.Errno(n) == syscall.EALREADY, syscall.Errno(n) == syscall.EINTR:
			return false
		}
		cerr = syscall.Errno(n)
		return true
	})
	if werr != nil {
		return werr
	}
	return cerr
}
