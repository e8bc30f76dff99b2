package openhands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/ws"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Bridge follows an OpenHands agent server: a follow.Source for the shared
// Runner whose stream is every followed conversation's events socket at
// once. On every connect it lists the conversations
// (/api/conversations/search), opens /sockets/events/{id} for each
// (resend_mode=all the first time, resend_mode=since with the last vendor
// timestamp it handled afterwards; the overlap is dropped by event id), and
// keeps discovering new conversations every Poll. It is read-only: the
// first-message auth frame is the only frame it ever writes (none when the
// server has no key), and it calls no REST write.
type Bridge struct {
	// Base is the server's URL (http://127.0.0.1:8000).
	Base *url.URL
	// APIKey is the session API key ("" for a server without keys).
	APIKey string
	// Conversations, when set, are the only conversations followed.
	Conversations []string
	// Deltas asks for streaming deltas (StreamingDeltaEvent).
	Deltas bool
	// Nonce mints each moment's nonce.
	Nonce func() string
	// Poll is how often new conversations are looked for (0: 15 s).
	Poll time.Duration
	// Client makes REST requests and handshakes (nil: 30 s timeout).
	Client *http.Client
	// Errors keeps what the bridge notices itself, without content.
	Errors shim.Recorder

	mu    sync.Mutex
	since follow.Positions[string] // per conversation: the last vendor timestamp handled
}

// Resume takes a cursor a Runner saved.
func (b *Bridge) Resume(saved string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.since.Load(saved)
}

func (b *Bridge) fail(stage, msg string) {
	if b.Errors != nil {
		b.Errors.Record(shim.Failure{Adapter: "openhands", Stage: stage, Error: msg})
	}
}

// conversations lists the conversation ids to follow.
func (b *Bridge) conversations(ctx context.Context) ([]string, error) {
	if len(b.Conversations) > 0 {
		return b.Conversations, nil
	}
	var out []string
	q := url.Values{"limit": {"100"}}
	for pages := 0; pages < 20; pages++ {
		u := *b.Base
		u.Path = strings.TrimSuffix(u.Path, "/") + "/api/conversations/search"
		u.RawQuery = q.Encode()
		h := http.Header{}
		if b.APIKey != "" {
			h.Set("X-Session-API-Key", b.APIKey)
		}
		status, body, err := ws.Get(ctx, b.Client, u.String(), h, "GET /api/conversations/search")
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET /api/conversations/search: HTTP %d", status)
		}
		page := gjson.ParseBytes(body)
		for _, it := range page.Get("items").Array() {
			if id := it.Get("id").String(); id != "" {
				out = append(out, id)
			}
		}
		next := page.Get("next_page_id").String()
		if next == "" {
			break
		}
		q.Set("page_id", next)
	}
	return out, nil
}

// socketURL is conversation id's events socket, resending from the
// bridge's position.
func (b *Bridge) socketURL(id string) string {
	q := url.Values{}
	b.mu.Lock()
	since, ok := b.since.Get(id)
	b.mu.Unlock()
	if ok && since != "" {
		q.Set("resend_mode", "since")
		q.Set("after_timestamp", since)
	} else {
		q.Set("resend_mode", "all")
	}
	return ws.URL(b.Base, q, "sockets", "events", id)
}

// Open lists the conversations and opens a socket for each.
func (b *Bridge) Open(ctx context.Context) (follow.Stream, error) {
	ids, err := b.conversations(ctx)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &stream{b: b, ctx: sctx, cancel: cancel, frames: make(chan frame, 1024), open: map[string]bool{}}
	for _, id := range ids {
		if err := s.attach(id); err != nil {
			s.Close()
			return nil, err
		}
	}
	if len(b.Conversations) == 0 {
		go s.discover()
	}
	return s, nil
}

// CatchUp has nothing to add: each socket resends from its position.
func (b *Bridge) CatchUp(context.Context, string) ([]mapping.Moment, error) { return nil, nil }

// frame is one read off a conversation's socket, or the socket's end.
type frame struct {
	conv string
	data []byte
	err  error
}

// stream is the conversations' sockets, merged.
type stream struct {
	b      *Bridge
	ctx    context.Context
	cancel context.CancelFunc
	frames chan frame
	mu     sync.Mutex
	open   map[string]bool
	conns  []*ws.Conn
	closed bool
}

// attach opens conversation id's socket, sends the auth frame, and reads
// it into the merged stream.
func (s *stream) attach(id string) error {
	s.mu.Lock()
	if s.open[id] || s.closed {
		s.mu.Unlock()
		return nil
	}
	s.open[id] = true
	s.mu.Unlock()
	c, err := ws.Dial(s.ctx, s.b.socketURL(id), ws.Options{Client: s.b.Client})
	if err != nil {
		s.mu.Lock()
		delete(s.open, id)
		s.mu.Unlock()
		return fmt.Errorf("conversation %s: %w", id, err)
	}
	if s.b.APIKey != "" {
		// The one frame the bridge ever writes.
		if err := c.WriteJSON(s.ctx, map[string]string{"type": "auth", "session_api_key": s.b.APIKey}); err != nil {
			c.CloseNow()
			return fmt.Errorf("conversation %s: auth: %w", id, err)
		}
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	go func() {
		for {
			b, err := c.Read(s.ctx)
			select {
			case s.frames <- frame{conv: id, data: b, err: err}:
			case <-s.ctx.Done():
				return
			}
			if err != nil && !ws.Skipped(err) {
				return
			}
		}
	}()
	return nil
}

// discover looks for new conversations every Poll.
func (s *stream) discover() {
	every := s.b.Poll
	if every <= 0 {
		every = 15 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ids, err := s.b.conversations(s.ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				s.b.fail("discover", err.Error())
			}
			continue
		}
		for _, id := range ids {
			if err := s.attach(id); err != nil && s.ctx.Err() == nil {
				s.b.fail("connect", err.Error())
			}
		}
	}
}

// Next returns the next event of any conversation. A socket the server
// closed because its conversation is gone (4004) ends quietly; any other
// end of a socket ends the stream, so the Runner reconnects them all from
// their positions.
func (s *stream) Next() (follow.Item, error) {
	for {
		var f frame
		select {
		case f = <-s.frames:
		case <-s.ctx.Done():
			return follow.Item{}, io.EOF
		}
		var big *ws.TooBigError
		if errors.As(f.err, &big) {
			return s.oversized(f.conv, big), nil
		}
		if errors.Is(f.err, ws.ErrBinary) {
			continue
		}
		if f.err != nil {
			if websocket.CloseStatus(f.err) == 4004 {
				s.mu.Lock()
				delete(s.open, f.conv)
				s.mu.Unlock()
				continue
			}
			if ws.IsClosed(f.err) {
				return follow.Item{}, io.EOF
			}
			return follow.Item{}, fmt.Errorf("conversation %s: %w", f.conv, f.err)
		}
		ev := gjson.ParseBytes(f.data)
		if !ev.IsObject() || !ev.Get("kind").Exists() {
			return follow.Item{}, nil
		}
		m := mapping.Moment{Raw: f.data, Facts: eventFacts(ev, f.conv)}
		if s.b.Nonce != nil {
			m.Nonce = s.b.Nonce()
		}
		m.Deltas = s.b.Deltas
		it := follow.Item{Moments: []mapping.Moment{m}}
		if id := m.Facts.ID; id != "" {
			it.Key = f.conv + "/" + id
		}
		if ts := ev.Get("timestamp").String(); ts != "" {
			s.b.mu.Lock()
			if old, _ := s.b.since.Get(f.conv); ts > old {
				s.b.since.Set(f.conv, ts)
			}
			it.Cursor = s.b.since.Cursor()
			s.b.mu.Unlock()
		}
		return it, nil
	}
}

// oversized records an event frame over the bound, skipped, and moves
// its conversation's position to the frame's timestamp: the socket resends
// from that position on every reconnect, so a position left before the
// frame would have it sent again for good.
func (s *stream) oversized(conv string, big *ws.TooBigError) follow.Item {
	it := follow.Item{}
	id, ts := big.Field("id"), big.Field("timestamp")
	if id != "" {
		it.Key = conv + "/" + id
	}
	if ts != "" {
		s.b.mu.Lock()
		if old, _ := s.b.since.Get(conv); ts > old {
			s.b.since.Set(conv, ts)
		}
		it.Cursor = s.b.since.Cursor()
		s.b.mu.Unlock()
	}
	if s.b.Errors != nil {
		s.b.Errors.Record(shim.Failure{Adapter: "openhands", Stage: "oversized", Lost: 1, Error: fmt.Sprintf(
			"openhands event frame of %d bytes (conversation %s, event %s) is over the %d-byte bound: skipped, following goes on after it",
			big.Size, printable.Clip(conv, 128), printable.Clip(id, 128), ws.DefaultMaxFrame)})
	}
	return it
}

// Close ends every socket.
func (s *stream) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
	s.cancel()
	return nil
}
