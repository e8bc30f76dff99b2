package control

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNeedsSecure: only a wss:// relay and one named by a host name need
// what the full binary lends; an IP address or localhost is dialled here.
func TestNeedsSecure(t *testing.T) {
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"ws://127.0.0.1:8787/socket", false},
		{"ws://localhost:8787/socket", false},
		{"ws://[::1]:8787/socket", false},
		{"ws://10.1.2.3/socket", false},
		{"ws://[::ffff:127.0.0.1]:9/socket", false},
		{"ws://relay.example:8787/socket", true},
		{"ws://localhost.:8787/socket", true},
		{"ws://[fe80::1%25eth0]:8787/socket", true},
		{"wss://127.0.0.1:8787/socket", true},
		{"wss://relay.example/socket", true},
		{"http://relay.example/", false},
		{"ws://%zz", false},
	} {
		if got := NeedsSecure(c.url); got != c.want {
			t.Errorf("NeedsSecure(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}

// TestDialSelf: this package's own dialer connects to an IP address and to
// localhost (IPv4 and IPv6 loopback), reads and writes, and reads a
// refusal as Go's dialer does; a host name is not dialled without a
// Secure.
func TestDialSelf(t *testing.T) {
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range []struct{ network, listen, host string }{
		{"tcp4", "127.0.0.1:0", "127.0.0.1"},
		{"tcp4", "127.0.0.1:0", "localhost"},
		{"tcp6", "[::1]:0", "::1"},
		{"tcp6", "[::1]:0", "localhost"},
	} {
		ln, err := net.Listen(c.network, c.listen)
		if err != nil {
			t.Logf("%s: %v (no such loopback here)", c.listen, err)
			continue
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		go func() {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			defer s.Close()
			io.Copy(s, s)
		}()
		conn, err := dialSelf(context.Background(), c.host, port, deadline)
		if err != nil {
			t.Fatalf("%s to %s: %v", c.host, c.listen, err)
		}
		if _, err := conn.Write([]byte("echo")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "echo" {
			t.Fatalf("%s: read %q, %v", c.host, buf, err)
		}
		// A read deadline ends a read that nothing answers.
		conn.SetReadDeadline(time.Now())
		if _, err := conn.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: read past its deadline: %v", c.host, err)
		}
		conn.Close()
		ln.Close()
	}

	_, err := dialSelf(context.Background(), "127.0.0.1", "1", deadline)
	if !Absent(err) || err.Error() != "dial tcp 127.0.0.1:1: connect: connection refused" {
		t.Errorf("a port nothing listens on: %v, want Go's refusal", err)
	}
	if _, err := dialTCP(context.Background(), nil, "relay.example", "80", deadline); !errors.Is(err, ErrNoResolver) {
		t.Errorf("a host name without a Secure: %v, want ErrNoResolver", err)
	}
	if _, err := dialSelf(context.Background(), "127.0.0.1", "1", time.Now().Add(-time.Second)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a deadline already past: %v", err)
	}
}

// TestDialSelfHangs: a relay host that never completes the connection
// (a listener whose queue is full drops further SYNs) costs the deadline
// and no more, and a context that ends stops the wait at once.
func TestDialSelfHangs(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := syscall.Getsockname(fd)
	port := strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	// Fill the accept queue (never accepted) until a connect no longer
	// completes.
	var held []Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 8 {
		c, err := dialSelf(context.Background(), "127.0.0.1", port, time.Now().Add(200*time.Millisecond))
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) || !strings.HasSuffix(err.Error(), ": i/o timeout") {
				t.Fatalf("a full queue: %v, want a timeout", err)
			}
			break
		}
		held = append(held, c)
	}
	if len(held) == 8 {
		t.Skip("this system's listener queue never filled")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := dialSelf(ctx, "127.0.0.1", port, time.Now().Add(time.Minute))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a dial whose context ended: %v, want context.Canceled", err)
	}
}
