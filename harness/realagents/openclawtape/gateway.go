package openclawtape

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"
)

// Gateway stands in for the OpenClaw Gateway in a replay: the first
// connection gets the handshake (connect.challenge, hello-ok for the
// connect request, a response to each later request) and then every
// recorded frame, and is closed; later connections are refused, and the
// first refusal closes Done (the bridge is reconnecting: the replay is
// over).
type Gateway struct {
	Frames []json.RawMessage
	Done   chan struct{}

	mu     sync.Mutex
	served bool
	done   bool
	// Connect is the connect request the bridge sent (its params).
	Connect json.RawMessage
}

// NewGateway serves frames.
func NewGateway(frames []json.RawMessage) *Gateway {
	return &Gateway{Frames: frames, Done: make(chan struct{})}
}

// ServeHTTP plays the gateway.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	if g.served {
		if !g.done {
			g.done = true
			close(g.Done)
		}
		g.mu.Unlock()
		http.Error(w, "replay over", http.StatusServiceUnavailable)
		return
	}
	g.served = true
	g.mu.Unlock()
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := r.Context()
	send := func(v any) error {
		b, _ := json.Marshal(v)
		return c.Write(ctx, websocket.MessageText, b)
	}
	if send(map[string]any{"type": "event", "event": "connect.challenge", "payload": map[string]any{"nonce": "replay", "ts": 0}}) != nil {
		return
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		id, method := gjson.GetBytes(b, "id").String(), gjson.GetBytes(b, "method").String()
		if method == "connect" {
			g.mu.Lock()
			g.Connect = json.RawMessage(gjson.GetBytes(b, "params").Raw)
			g.mu.Unlock()
			send(map[string]any{"type": "res", "id": id, "ok": true, "payload": map[string]any{"type": "hello-ok", "protocol": 4,
				"auth": map[string]any{"role": "operator", "scopes": []string{"operator.read"}}}})
			continue
		}
		send(map[string]any{"type": "res", "id": id, "ok": true, "payload": map[string]any{"subscribed": true}})
		break
	}
	for _, f := range g.Frames {
		if c.Write(ctx, websocket.MessageText, f) != nil {
			return
		}
	}
	c.Close(websocket.StatusNormalClosure, "replay over")
}

// Served reports whether the bridge connected.
func (g *Gateway) Served() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.served
}
