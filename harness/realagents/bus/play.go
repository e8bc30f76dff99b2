package bus

import (
	"net/http"
	"strings"
	"sync"
)

// Player serves a tape: the Nth event-stream request gets the Nth
// recorded stream (then the stream ends, as the server's did); a REST
// request gets the next unused answer recorded for its method and path
// (the last one again once all are used). A request the tape has no
// answer for gets 404. Once every stream was served, the next stream
// request closes Done (the bridge is reconnecting: the replay is over)
// and gets 503.
type Player struct {
	Tape *Tape
	// Done is closed when a stream request finds no stream left.
	Done chan struct{}

	mu       sync.Mutex
	streams  []Exchange
	rest     map[string][]Exchange
	done     bool
	Requests []string // every request served, "METHOD path"
}

// NewPlayer prepares a tape for serving.
func NewPlayer(t *Tape) *Player {
	p := &Player{Tape: t, Done: make(chan struct{}), rest: map[string][]Exchange{}}
	for _, x := range t.Exchanges {
		if x.File != "" {
			p.streams = append(p.streams, x)
			continue
		}
		k := x.Method + " " + x.Path
		p.rest[k] = append(p.rest[k], x)
	}
	return p
}

func isStream(path string) bool {
	return path == "/event" || path == "/global/event"
}

// ServeHTTP answers from the tape.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.Requests = append(p.Requests, r.Method+" "+r.URL.Path)
	if isStream(r.URL.Path) {
		if len(p.streams) == 0 {
			if !p.done {
				p.done = true
				close(p.Done)
			}
			p.mu.Unlock()
			http.Error(w, "tape over", http.StatusServiceUnavailable)
			return
		}
		x := p.streams[0]
		p.streams = p.streams[1:]
		p.mu.Unlock()
		body, err := p.Tape.Stream(x)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		return
	}
	k := r.Method + " " + r.URL.Path
	xs := p.rest[k]
	if len(xs) == 0 {
		p.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	x := xs[0]
	if len(xs) > 1 {
		p.rest[k] = xs[1:]
	}
	p.mu.Unlock()
	ct := x.Type
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(x.Status)
	w.Write([]byte(strings.TrimSpace(string(x.Body))))
}
