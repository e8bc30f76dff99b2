//go:build unix

package hook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

// TestHeldWaitEndsOnSignal: a hook that ignores the termination signals
// (IgnoreSignals, as the installed hook runs) still catches them once a
// relay takes its held moment, so the agent giving up ends the wait (else
// it would run its minute-long budget out) with the neutral reply, and Run
// reports it.
func TestHeldWaitEndsOnSignal(t *testing.T) {
	offered := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		if _, _, err := c.Read(r.Context()); err != nil { // the hook's hello
			return
		}
		c.Write(r.Context(), websocket.MessageText, []byte(`{"type":"hello","versions":["0.1"],"role":"relay"}`))
		if _, _, err := c.Read(r.Context()); err != nil { // the request
			return
		}
		close(offered)
		c.Read(r.Context()) // until the hook goes
	}))
	defer srv.Close()
	v, _ := mapping.Lookup("claude-code")
	r := &Runner{Vendor: v, Emitter: memEmitter(&discard{}), Deadline: roomy, IgnoreSignals: true,
		Control: &control.Config{URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket", Token: "t", Budget: time.Minute}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-offered:
			// The request is out, so the runner is catching the signals.
			syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		case <-ctx.Done():
		}
	}()
	var out bytes.Buffer
	if code := r.Run("", bytes.NewReader(heldPerm), &out); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out.Len() != 0 {
		t.Errorf("reply %q, want the neutral one", out.String())
	}
	if !r.Interrupted() {
		t.Error("Run does not report the signal")
	}
}
