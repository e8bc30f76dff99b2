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

	"github.com/aep-hook/aep-hook/shim/control/wss"
)

// TestWSSecure: a wss:// relay is reached through the caller's Secure,
// whose handshake is checked against the server's certificate; without
// one the dial is refused before any connection, and package wss's own
// client refuses a certificate the system does not trust.
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
	trusting := func(ctx context.Context, c net.Conn, name string) (net.Conn, error) {
		names = append(names, name)
		tc := tls.Client(c, &tls.Config{ServerName: name, RootCAs: roots, MinVersion: tls.VersionTLS12})
		return tc, tc.HandshakeContext(ctx)
	}
	ws, err := dialWS(context.Background(), url, "tok", 5*time.Second, 1<<20, trusting)
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
	if _, err := dialWS(context.Background(), url, "tok", 5*time.Second, 1<<20, wss.Client); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an untrusted certificate: %v, want a certificate error", err)
	}
}
