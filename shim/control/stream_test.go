package control

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestStreamReady: Ready settles only with the first dial, so a follower
// that waits for it reads its stream with the link already live when a
// relay is there (a request the server replays on connect is then held),
// and is not kept waiting when none is.
func TestStreamReady(t *testing.T) {
	const wait = 30 * time.Second // a failure bound against a hang, never a measure
	absent := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now: the dial is refused
		return "ws://" + addr + "/socket"
	}
	tests := []struct {
		name string
		// relay says whether one answers the hello (else none listens).
		relay    bool
		wantLive bool
	}{
		{name: "a relay answers: ready once live", relay: true, wantLive: true},
		{name: "no relay: ready at the refusal", relay: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			heard := make(chan struct{})   // the relay read the hello
			release := make(chan struct{}) // the relay may answer it
			url := absent(t)
			if tt.relay {
				url = server(t, func(ctx context.Context, c *websocket.Conn, _ *http.Request) {
					if _, _, err := c.Read(ctx); err != nil {
						return
					}
					close(heard)
					select {
					case <-release:
					case <-ctx.Done():
						return
					}
					if c.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","versions":["0.1"]}`)) != nil {
						return
					}
					c.Read(ctx) // hold the link open until the test ends it
				})
			}
			s := &Stream{Config: &Config{URL: url, Token: "tok", Connect: wait}, Accepts: []string{Respond}}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.Run(ctx)
			}()
			t.Cleanup(func() {
				cancel()
				<-done
			})
			if tt.relay {
				<-heard
				select {
				case <-s.Ready():
					t.Fatal("ready while the relay has not answered the hello")
				default:
				}
				close(release)
			}
			select {
			case <-s.Ready():
			case <-time.After(wait):
				t.Fatal("not ready")
			}
			if got := s.Live(); got != tt.wantLive {
				t.Errorf("live %v once ready, want %v", got, tt.wantLive)
			}
		})
	}
}

// TestDialHelloCancelled: a relay that takes the connection and never
// answers the hello does not hold up a caller that stops: Dial returns
// with the context's cause, not after its timeout.
func TestDialHelloCancelled(t *testing.T) {
	const timeout = time.Hour // Dial's own bound: only ctx can end it here
	heard := make(chan struct{})
	url := server(t, func(ctx context.Context, c *websocket.Conn, _ *http.Request) {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		close(heard)
		c.Read(ctx) // say nothing until the client goes
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		l, err := Dial(ctx, url, "tok", Identity{Agent: "kimi-code", Instance: "test"}, Offer{Accepts: []string{Respond}}, timeout, nil)
		if l != nil {
			l.Close("test over")
		}
		done <- err
	}()
	<-heard
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial ended with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // a failure bound against a hang, never a measure
		t.Fatal("Dial still waits for the hello after its context ended")
	}
}
