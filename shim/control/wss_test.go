package control

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// trustingSecure is a Secure that trusts roots: Go's dialer, and TLS
// against the test server's certificate.
type trustingSecure struct {
	roots *x509.CertPool
	names *[]string
}

func (s trustingSecure) Dial(ctx context.Context, addr string, deadline time.Time) (Conn, error) {
	d := net.Dialer{Deadline: deadline}
	return d.DialContext(ctx, "tcp", addr)
}

func (s trustingSecure) Client(ctx context.Context, c Conn, name string) (Conn, error) {
	*s.names = append(*s.names, name)
	tc := tls.Client(c.(net.Conn), &tls.Config{ServerName: name, RootCAs: s.roots, MinVersion: tls.VersionTLS12})
	return tc, tc.HandshakeContext(ctx)
}

// TestWSSecure: a wss:// relay is reached through the caller's Secure,
// whose handshake is checked against the server's certificate; without
// one the dial is refused before any connection (package wss's tests
// hold its own client to the system's roots).
func TestWSSecure(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.Write(r.Context(), websocket.MessageText, []byte("over tls"))
		c.Read(r.Context())
	}))
	defer srv.Close()
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/socket"
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	var names []string
	ws, err := dialWS(context.Background(), url, "tok", 5*time.Second, 1<<20, trustingSecure{roots, &names})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.conn.Close()
	if _, ok := ws.conn.(*tls.Conn); !ok {
		t.Errorf("the connection is a %T, not TLS", ws.conn)
	}
	if len(names) != 1 || names[0] != "127.0.0.1" {
		t.Errorf("Secure was asked for %q, want the URL's host once", names)
	}
	if op, b, err := ws.ReadMessage(); err != nil || op != opText || string(b) != "over tls" {
		t.Errorf("read %d %q, %v", op, b, err)
	}

	if _, err := dialWS(context.Background(), url, "tok", 5*time.Second, 1<<20, nil); !errors.Is(err, ErrNoTLS) {
		t.Errorf("wss without Secure: %v, want ErrNoTLS", err)
	}
}
