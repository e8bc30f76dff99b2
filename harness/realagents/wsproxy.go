package realagents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// RecordingProxy stands between a WebSocket bridge (aep-hook follow) and
// its server: it relays REST requests and WebSocket connections unchanged
// and records every frame and REST exchange as StreamLines (one file,
// ws.jsonl, in the run's folder), the stream fixture that replay serves
// back. Drop cuts the live connections, as a network failure would.
type RecordingProxy struct {
	// URL is the proxy's base URL (http://127.0.0.1:PORT).
	URL string

	upstream *url.URL
	srv      *http.Server
	ln       net.Listener
	mu       sync.Mutex
	out      *os.File
	conns    int
	live     map[int]func()
	hold     bool
	// calling counts the bridge's calls in flight (any REST request but a
	// read); while one is, frames are kept in deferred and written after
	// its exchange, so the recording never has the server's report of a
	// call (its broadcast of a decision) ahead of the call itself, which
	// the proxy only sees answered after the server has broadcast.
	calling  int
	deferred [][]byte
}

// Hold, while on, refuses new WebSocket connections (503), as a network
// that is down would; REST requests still pass.
func (p *RecordingProxy) Hold(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = on
}

// StartRecordingProxy relays to upstream and records into path.
func StartRecordingProxy(upstream, path string) (*RecordingProxy, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, err
	}
	p := &RecordingProxy{URL: "http://" + ln.Addr().String(), upstream: u, out: f, ln: ln, live: map[int]func(){}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = p.recordREST
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			p.mu.Lock()
			held := p.hold
			p.mu.Unlock()
			if held {
				http.Error(w, "held", http.StatusServiceUnavailable)
				return
			}
			p.relayWS(w, r)
			return
		}
		if r.Method != http.MethodGet {
			p.mu.Lock()
			p.calling++
			p.mu.Unlock()
			defer p.callDone()
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln)
	return p, nil
}

// record appends one line; a frame waits while a call is in flight.
func (p *RecordingProxy) record(l StreamLine) {
	b, _ := json.Marshal(l)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calling > 0 && l.HTTP == nil {
		p.deferred = append(p.deferred, append(b, '\n'))
		return
	}
	p.out.Write(append(b, '\n'))
}

// callDone ends a call in flight (its exchange already recorded) and,
// the last one done, writes the frames kept meanwhile.
func (p *RecordingProxy) callDone() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calling--
	if p.calling > 0 {
		return
	}
	for _, b := range p.deferred {
		p.out.Write(b)
	}
	p.deferred = nil
}

// recordREST keeps a REST exchange (the body is read and put back).
func (p *RecordingProxy) recordREST(resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	p.mu.Lock()
	conn := p.conns
	p.mu.Unlock()
	req := resp.Request
	ex := &HTTPExchange{Method: req.Method, Path: req.URL.RequestURI(), Status: resp.StatusCode}
	if json.Valid(body) {
		ex.Body = body
	}
	p.record(StreamLine{Conn: conn, HTTP: ex})
	return nil
}

// relayWS relays one WebSocket connection, recording its frames.
func (p *RecordingProxy) relayWS(w http.ResponseWriter, r *http.Request) {
	var protos []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, s := range strings.Split(h, ",") {
			protos = append(protos, strings.TrimSpace(s))
		}
	}
	up := *p.upstream
	up.Scheme = strings.Replace(up.Scheme, "http", "ws", 1)
	up.Path, up.RawQuery = r.URL.Path, r.URL.RawQuery
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server, _, err := websocket.Dial(ctx, up.String(), &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protos})
	if err != nil {
		server.CloseNow()
		return
	}
	server.SetReadLimit(64 << 20)
	client.SetReadLimit(64 << 20)
	p.mu.Lock()
	p.conns++
	n := p.conns
	p.live[n] = cancel
	p.mu.Unlock()
	var endOnce sync.Once
	ended := "in" // the server's side ended first (or the proxy dropped it)
	pump := func(from, to *websocket.Conn, dir string) {
		for {
			typ, b, err := from.Read(ctx)
			if err != nil {
				endOnce.Do(func() {
					if ctx.Err() == nil && dir == "out" {
						ended = "out" // the bridge closed its connection
					}
				})
				cancel()
				return
			}
			if json.Valid(b) {
				p.record(StreamLine{Conn: n, Dir: dir, Data: append(json.RawMessage(nil), b...)})
			}
			if err := to.Write(ctx, typ, b); err != nil {
				cancel()
				return
			}
		}
	}
	go pump(client, server, "out")
	pump(server, client, "in")
	client.CloseNow()
	server.CloseNow()
	p.mu.Lock()
	delete(p.live, n)
	p.mu.Unlock()
	p.record(StreamLine{Conn: n, Dir: ended, End: true})
}

// Drop cuts every live WebSocket connection.
func (p *RecordingProxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cancel := range p.live {
		cancel()
	}
}

// Conns is the number of WebSocket connections relayed so far.
func (p *RecordingProxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}

// Close stops the proxy and the recording.
func (p *RecordingProxy) Close() error {
	p.srv.Close()
	p.Drop()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Close()
}

func (p *RecordingProxy) String() string {
	return fmt.Sprintf("recording proxy %s → %s", p.URL, p.upstream)
}
