package a2atape

import (
	"io"
	"net/http"
	"sync"

	"github.com/tidwall/gjson"
)

// Player serves a tape as the A2A server: a request gets the next unused
// answer recorded for its JSON-RPC method (the last one again once all
// are used, so a reconnecting follower finds the task as it ended). A
// request the tape has nothing for gets a JSON-RPC "method not found".
type Player struct {
	mu       sync.Mutex
	answers  map[string][]Exchange
	Requests []string // every JSON-RPC method served, in order
}

// NewPlayer prepares a tape for serving.
func NewPlayer(t *Tape) *Player {
	p := &Player{answers: map[string][]Exchange{}}
	for _, x := range t.Exchanges {
		p.answers[x.Method] = append(p.answers[x.Method], x)
	}
	return p
}

// ServeHTTP answers from the tape.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	method := gjson.GetBytes(body, "method").String()
	p.mu.Lock()
	p.Requests = append(p.Requests, method)
	xs := p.answers[method]
	if len(xs) == 0 {
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"not on the tape"}}`)
		return
	}
	x := xs[0]
	if len(xs) > 1 {
		p.answers[method] = xs[1:]
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", x.Type)
	w.WriteHeader(x.Status)
	io.WriteString(w, x.Body)
}
