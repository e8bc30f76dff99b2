// Package ohstub is a scripted OpenHands agent server for tests: nothing
// installable here runs the real one (it is a Python service), so this
// stand-in speaks the surface the bridge uses, as the agent-server sources
// and the design record describe it: GET /api/conversations/search (the
// X-Session-API-Key header), and the events socket
// /sockets/events/{conversation_id} with first-message auth
// ({"type":"auth","session_api_key":...}, close 4001 when wrong), close
// 4004 for an unknown conversation, and replay on connect (resend_mode=all,
// or since with after_timestamp: events at or after it), then every new
// event live. Events are the transport shape (kind, id, naive server-local
// timestamp, source, no parent_id). A test emits the events of its script
// and can drop every socket, as a network failure would.
//
// It is test equipment: nothing in the aep-hook binary links it.
package ohstub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Server is the stand-in agent server.
type Server struct {
	// URL is the server's base URL.
	URL string
	// APIKey, when set, is the one session API key accepted.
	APIKey string

	srv   *httptest.Server
	mu    sync.Mutex
	order []string
	convs map[string]*conv
	subs  map[*sub]bool
	got   []string // every frame a client wrote, in order
	clock time.Time
	n     int
}

type conv struct {
	events  []event
	deleted bool
}

type event struct {
	ts   string
	data []byte
}

type sub struct {
	conv string
	c    *websocket.Conn
	out  chan []byte
	kill context.CancelFunc
}

// Start serves a stub agent server on 127.0.0.1 with the given API key
// ("" accepts every client).
func Start(apiKey string) *Server {
	s := &Server{APIKey: apiKey, convs: map[string]*conv{}, subs: map[*sub]bool{},
		clock: time.Date(2026, 7, 12, 10, 15, 0, 0, time.UTC)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/conversations/search", s.search)
	mux.HandleFunc("/sockets/events/{id}", s.socket)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// Close stops the server and every socket.
func (s *Server) Close() {
	s.DropSockets()
	s.srv.Close()
}

// AddConversation makes conversation id known to search.
func (s *Server) AddConversation(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.convs[id] == nil {
		s.convs[id] = &conv{}
		s.order = append(s.order, id)
	}
}

// Emit appends an event to conversation id's log (with an id and the next
// server-local naive timestamp unless ev has them) and sends it to the
// conversation's sockets. It returns the event as sent.
func (s *Server) Emit(id string, ev map[string]any) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.convs[id]
	if c == nil {
		c = &conv{}
		s.convs[id] = c
		s.order = append(s.order, id)
	}
	s.n++
	s.clock = s.clock.Add(1500 * time.Microsecond)
	if _, ok := ev["id"]; !ok {
		ev["id"] = fmt.Sprintf("ev_%s_%d", id, s.n)
	}
	if _, ok := ev["timestamp"]; !ok {
		ev["timestamp"] = s.clock.Format("2006-01-02T15:04:05.000000")
	}
	b, _ := json.Marshal(ev)
	c.events = append(c.events, event{ts: ev["timestamp"].(string), data: b})
	for sb := range s.subs {
		if sb.conv == id {
			select {
			case sb.out <- b:
			default: // a subscriber that cannot keep up is dropped
				sb.kill()
			}
		}
	}
	return b
}

// Delete marks conversation id deleted: search no longer lists it, and its
// sockets close with 4004.
func (s *Server) Delete(id string) {
	s.mu.Lock()
	if c := s.convs[id]; c != nil {
		c.deleted = true
	}
	var close []*sub
	for sb := range s.subs {
		if sb.conv == id {
			close = append(close, sb)
		}
	}
	s.mu.Unlock()
	for _, sb := range close {
		sb.c.Close(4004, "Conversation not found")
		sb.kill()
	}
}

// DropSockets cuts every socket abruptly, as a network failure would.
func (s *Server) DropSockets() {
	s.mu.Lock()
	var all []*sub
	for sb := range s.subs {
		all = append(all, sb)
	}
	s.mu.Unlock()
	for _, sb := range all {
		sb.kill()
		sb.c.CloseNow()
	}
}

// Sockets is the number of sockets open now.
func (s *Server) Sockets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// Received is every frame clients wrote, in order.
func (s *Server) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func (s *Server) authorized(r *http.Request) bool {
	return s.APIKey == "" || r.Header.Get("X-Session-API-Key") == s.APIKey
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		http.Error(w, `{"detail":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	items := []map[string]any{}
	for _, id := range s.order {
		if c := s.convs[id]; !c.deleted {
			items = append(items, map[string]any{"id": id})
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"items": items, "next_page_id": nil})
}

func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer c.CloseNow()
	if s.APIKey != "" {
		actx, acancel := context.WithTimeout(ctx, 10*time.Second)
		_, b, err := c.Read(actx)
		acancel()
		if err != nil {
			c.Close(4001, "Authentication failed")
			return
		}
		s.mu.Lock()
		s.got = append(s.got, string(b))
		s.mu.Unlock()
		var a map[string]any
		if json.Unmarshal(b, &a) != nil || a["type"] != "auth" || a["session_api_key"] != s.APIKey {
			c.Close(4001, "Authentication failed")
			return
		}
	}
	s.mu.Lock()
	cv := s.convs[id]
	if cv == nil || cv.deleted {
		s.mu.Unlock()
		c.Close(4004, "Conversation not found")
		return
	}
	q := r.URL.Query()
	var replay [][]byte
	switch q.Get("resend_mode") {
	case "all":
		for _, e := range cv.events {
			replay = append(replay, e.data)
		}
	case "since":
		after := strings.TrimSuffix(q.Get("after_timestamp"), "Z")
		for _, e := range cv.events {
			if e.ts >= after {
				replay = append(replay, e.data)
			}
		}
	}
	sb := &sub{conv: id, c: c, out: make(chan []byte, 4096), kill: cancel}
	for _, b := range replay {
		sb.out <- b
	}
	s.subs[sb] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, sb)
		s.mu.Unlock()
	}()
	go func() {
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				cancel()
				return
			}
			s.mu.Lock()
			s.got = append(s.got, string(b))
			s.mu.Unlock()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-sb.out:
			if err := c.Write(ctx, websocket.MessageText, b); err != nil {
				return
			}
		}
	}
}
