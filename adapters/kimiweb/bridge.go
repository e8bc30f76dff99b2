package kimiweb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/ws"
	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Bridge follows a `kimi web` server: a follow.Source for the shared
// Runner. On every connect it lists the server's sessions over REST
// (/api/v1/sessions), opens the WebSocket stream (/api/v1/ws, subprotocol
// kimi-code.bearer.<token>), says client_hello and subscribes to every
// session with the cursor ({seq, epoch}) it reached, so the server replays
// what the bridge missed while it was away. It answers the server's pings,
// subscribes to a session it first hears of on the stream (a new one, or
// one a global event names), and, when the server says a session is
// not_found (a restarted server loads sessions lazily), loads it with a
// read (its pending approvals) and subscribes again, so a session's events
// are journaled before anyone acts in it. A resync_required (the cursor
// fell out of the server's buffer, or the session was recreated) is
// recorded with the number of events it cost, and following goes on from
// the server's position. The only writes are the protocol's own frames
// (client_hello, subscribe, pong) and that read: the bridge never answers
// an approval or a question, never submits or aborts a prompt.
type Bridge struct {
	// Base is the server's URL (http://127.0.0.1:58627); the REST API and
	// the stream are under /api/v1.
	Base *url.URL
	// Token is the server's bearer token (<KIMI_CODE_HOME>/server.token).
	Token string
	// Mode and Deltas are the channel posture of every moment.
	Mode   mapping.Mode
	Deltas bool
	// Nonce mints each moment's nonce.
	Nonce func() string
	// Client makes REST requests and the handshake (nil: a client with a
	// 30 s timeout for REST).
	Client *http.Client
	// Errors keeps what the bridge itself notices (lost events), without
	// content; nil drops it.
	Errors shim.Recorder
	// MaxSessions bounds the sessions listed at connect (0: 1000).
	MaxSessions int

	mu      sync.Mutex
	cursors follow.Positions[cursor] // per session: the last frame handled
	ids     int
}

// cursor is a session's stream position.
type cursor struct {
	Seq   int64  `json:"seq"`
	Epoch string `json:"epoch,omitempty"`
}

// globalSession is the server's own pseudo-session, whose frames
// (workspaces, configuration, plugins) belong to no session: they are not
// followed and not recorded.
const globalSession = "__global__"

// Resume takes the cursor a Runner saved (Item.Cursor of the last frame
// handled before the bridge stopped), so the first connect subscribes from
// there. A malformed cursor is ignored.
func (b *Bridge) Resume(saved string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cursors.Load(saved)
}

// api is the URL of a REST resource under /api/v1, named by its path
// segments.
func (b *Bridge) api(q url.Values, segs ...string) string {
	return ws.PathURL(b.Base, q, append([]string{"api", "v1"}, segs...)...).String()
}

// wsURL is the stream's URL.
func (b *Bridge) wsURL() string { return ws.URL(b.Base, nil, "api", "v1", "ws") }

// getJSON GETs a REST resource (its path segments under /api/v1) and
// returns the {code, msg, data} envelope's data.
func (b *Bridge) getJSON(ctx context.Context, q url.Values, segs ...string) (gjson.Result, error) {
	path := "/" + strings.Join(segs, "/")
	h := http.Header{}
	h.Set("Authorization", "Bearer "+b.Token)
	status, body, err := ws.Get(ctx, b.Client, b.api(q, segs...), h, "GET "+path)
	if err != nil {
		return gjson.Result{}, err
	}
	env := gjson.ParseBytes(body)
	if status != http.StatusOK || env.Get("code").Int() != 0 {
		return gjson.Result{}, fmt.Errorf("GET %s: HTTP %d, code %d", path, status, env.Get("code").Int())
	}
	return env.Get("data"), nil
}

// sessions lists the server's (unarchived) sessions, newest first.
func (b *Bridge) sessions(ctx context.Context) ([]string, error) {
	max := b.MaxSessions
	if max <= 0 {
		max = 1000
	}
	var out []string
	q := url.Values{"page_size": {"100"}}
	for len(out) < max {
		data, err := b.getJSON(ctx, q, "sessions")
		if err != nil {
			return out, err
		}
		items := data.Get("items").Array()
		for _, it := range items {
			if id := it.Get("id").String(); id != "" {
				out = append(out, id)
			}
		}
		if !data.Get("has_more").Bool() || len(items) == 0 {
			break
		}
		q.Set("before_id", items[len(items)-1].Get("id").String())
	}
	return out, nil
}

// Open connects: lists the sessions, dials the stream, says hello and
// subscribes to every session with its cursor.
func (b *Bridge) Open(ctx context.Context) (follow.Stream, error) {
	listed, err := b.sessions(ctx)
	if err != nil {
		return nil, err
	}
	c, err := ws.Dial(ctx, b.wsURL(), ws.Options{
		Subprotocols: []string{"kimi-code.bearer." + b.Token}, Client: b.Client,
	})
	if err != nil {
		return nil, err
	}
	s := &stream{b: b, c: c, ctx: ctx, followed: map[string]bool{}, loading: map[string]bool{}}
	if err := s.write(map[string]any{"type": "client_hello", "id": b.nextID(), "payload": map[string]any{"client_id": "aep-hook"}}); err != nil {
		c.CloseNow()
		return nil, err
	}
	b.mu.Lock()
	listed = append(listed, b.cursors.Keys()...)
	b.mu.Unlock()
	if err := s.subscribe(listed...); err != nil {
		c.CloseNow()
		return nil, err
	}
	return s, nil
}

// CatchUp has nothing to add: the server replays from each cursor itself.
func (b *Bridge) CatchUp(context.Context, string) ([]mapping.Moment, error) { return nil, nil }

func (b *Bridge) nextID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids++
	return fmt.Sprintf("aep-%d", b.ids)
}

func (b *Bridge) fail(stage, msg string, lost int) {
	if b.Errors != nil {
		b.Errors.Record(shim.Failure{Adapter: "kimi-web", Stage: stage, Error: msg, Lost: lost})
	}
}

// stream is one open connection.
type stream struct {
	b        *Bridge
	c        *ws.Conn
	ctx      context.Context
	mu       sync.Mutex
	followed map[string]bool // sessions subscribed (or asked for)
	loading  map[string]bool // not_found sessions being loaded
}

func (s *stream) write(v any) error { return s.c.WriteJSON(s.ctx, v) }

// subscribe asks for the sessions not yet followed on this connection,
// each from its cursor when the bridge has one.
func (s *stream) subscribe(sids ...string) error {
	s.mu.Lock()
	var ask []string
	for _, sid := range sids {
		if sid != "" && sid != globalSession && !s.followed[sid] {
			s.followed[sid] = true
			ask = append(ask, sid)
		}
	}
	s.mu.Unlock()
	if len(ask) == 0 {
		return nil
	}
	sort.Strings(ask)
	curs := map[string]cursor{}
	s.b.mu.Lock()
	for _, sid := range ask {
		if c, ok := s.b.cursors.Get(sid); ok {
			curs[sid] = c
		}
	}
	s.b.mu.Unlock()
	p := map[string]any{"session_ids": ask}
	if len(curs) > 0 {
		p["cursors"] = curs
	}
	return s.write(map[string]any{"type": "subscribe", "id": s.b.nextID(), "payload": p})
}

// Next returns the next frame as an Item: a session event's moment (its
// dedupe key session/epoch/seq), or an empty item for the protocol's own
// frames (a keep-alive for the Runner's stall watch).
func (s *stream) Next() (follow.Item, error) {
	raw, err := s.c.Read(s.ctx)
	var big *ws.TooBigError
	if errors.As(err, &big) {
		return s.oversized(big), nil
	}
	if errors.Is(err, ws.ErrBinary) {
		return follow.Item{}, nil
	}
	if err != nil {
		if ws.IsClosed(err) {
			return follow.Item{}, io.EOF
		}
		return follow.Item{}, err
	}
	f := gjson.ParseBytes(raw)
	if !f.IsObject() {
		return follow.Item{}, nil
	}
	if f.Get("seq").Exists() && f.Get("payload").Exists() {
		// A session event (an agent's "error" event among them: the
		// protocol's own error frame has no seq).
		return s.event(raw, f)
	}
	switch f.Get("type").String() {
	case "ping":
		return follow.Item{}, s.write(map[string]any{"type": "pong", "payload": map[string]any{"nonce": f.Get("payload.nonce").String()}})
	case "server_hello":
		return follow.Item{}, nil
	case "ack":
		return follow.Item{}, s.ack(f)
	case "resync_required":
		s.resync(f.Get("payload"))
		return follow.Item{}, nil
	case "error":
		if f.Get("payload.fatal").Bool() {
			return follow.Item{}, fmt.Errorf("kimi web: fatal stream error %d", f.Get("payload.code").Int())
		}
		s.b.fail("stream", fmt.Sprintf("kimi web stream error %d", f.Get("payload.code").Int()), 0)
		return follow.Item{}, nil
	}
	return follow.Item{}, nil
}

// event turns a session event frame into an Item and moves its session's
// cursor.
func (s *stream) event(raw []byte, f gjson.Result) (follow.Item, error) {
	raw = append([]byte(nil), raw...)
	ms, err := Decode(raw)
	if err != nil {
		return follow.Item{}, nil
	}
	sid := ms[0].Facts.Session
	if sid == globalSession {
		return follow.Item{}, nil
	}
	if sid != "" && !s.isFollowed(sid) {
		// A session first heard of on the stream (created, or named by a
		// global event): follow it from its beginning in the buffer.
		s.b.mu.Lock()
		if _, ok := s.b.cursors.Get(sid); !ok {
			s.b.cursors.Set(sid, cursor{Seq: 0, Epoch: f.Get("epoch").String()})
		}
		s.b.mu.Unlock()
		if err := s.subscribe(sid); err != nil {
			return follow.Item{}, err
		}
	}
	for i := range ms {
		if s.b.Nonce != nil {
			ms[i].Nonce = s.b.Nonce()
		}
		ms[i].Mode, ms[i].Deltas = s.b.Mode, s.b.Deltas
	}
	it := follow.Item{Moments: ms}
	if f.Get("volatile").Bool() || sid == "" {
		return it, nil
	}
	seq, epoch := f.Get("seq").Int(), f.Get("epoch").String()
	it.Key = sid + "/" + epoch + "/" + f.Get("seq").Raw
	s.b.mu.Lock()
	if c, ok := s.b.cursors.Get(sid); !ok || c.Epoch != epoch || seq > c.Seq {
		s.b.cursors.Set(sid, cursor{Seq: seq, Epoch: epoch})
	}
	it.Cursor = s.b.cursors.Cursor()
	s.b.mu.Unlock()
	return it, nil
}

// oversized records a frame over the bound, skipped, and moves its
// session's cursor past it: the server replays from the cursor on every
// reconnect, so a cursor left before the frame would have it sent again
// for good. The routing fields come before the payload (type, seq,
// session_id) and the epoch after it, so the frame's head and tail name
// it; a frame they do not name moves no cursor.
func (s *stream) oversized(big *ws.TooBigError) follow.Item {
	seq := gjson.Parse(big.Field("seq"))
	sid, epoch := big.Field("session_id"), big.Field("epoch")
	it := follow.Item{}
	where := "an unnamed frame"
	if seq.Type == gjson.Number && sid != "" && sid != globalSession {
		s.b.mu.Lock()
		c, ok := s.b.cursors.Get(sid)
		if epoch == "" && ok {
			epoch = c.Epoch
		}
		if !ok || c.Epoch != epoch || seq.Int() > c.Seq {
			s.b.cursors.Set(sid, cursor{Seq: seq.Int(), Epoch: epoch})
		}
		it.Cursor = s.b.cursors.Cursor()
		s.b.mu.Unlock()
		it.Key = sid + "/" + epoch + "/" + seq.Raw
		where = fmt.Sprintf("session %s seq %d", printable.Clip(sid, 128), seq.Int())
	}
	s.b.fail("oversized", fmt.Sprintf("kimi web frame of %d bytes (%s) is over the %d-byte bound: skipped, following goes on after it", big.Size, where, ws.DefaultMaxFrame), 1)
	return it
}

func (s *stream) isFollowed(sid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.followed[sid]
}

// ack handles a subscribe acknowledgement: sessions the server does not
// have loaded are loaded and asked for again; a session accepted without a
// cursor of ours starts at the server's position.
func (s *stream) ack(f gjson.Result) error {
	p := f.Get("payload")
	s.b.mu.Lock()
	p.Get("cursors").ForEach(func(k, v gjson.Result) bool {
		if _, ok := s.b.cursors.Get(k.String()); !ok {
			s.b.cursors.Set(k.String(), cursor{Seq: v.Get("seq").Int(), Epoch: v.Get("epoch").String()})
		}
		return true
	})
	s.b.mu.Unlock()
	for _, nf := range p.Get("not_found").Array() {
		sid := nf.String()
		s.mu.Lock()
		delete(s.followed, sid)
		busy := s.loading[sid]
		s.loading[sid] = true
		s.mu.Unlock()
		if busy {
			continue // loaded once on this connection; it stays lazy
		}
		go s.load(sid)
	}
	return nil
}

// load makes a restarted server load a session it knows only on disk (a
// read: its pending approvals), then subscribes to it again.
func (s *stream) load(sid string) {
	if _, err := s.b.getJSON(s.ctx, url.Values{"status": {"pending"}}, "sessions", sid, "approvals"); err != nil {
		if s.ctx.Err() == nil {
			s.b.fail("load", fmt.Sprintf("load session: %v", err), 0)
		}
		return
	}
	s.subscribe(sid)
}

// resync records what a resync_required cost and goes on from the server's
// position.
func (s *stream) resync(p gjson.Result) {
	sid := p.Get("session_id").String()
	cur := cursor{Seq: p.Get("current_seq").Int(), Epoch: p.Get("epoch").String()}
	s.b.mu.Lock()
	old, had := s.b.cursors.Get(sid)
	s.b.cursors.Set(sid, cur)
	s.b.mu.Unlock()
	lost := 0
	if had && old.Epoch == cur.Epoch && cur.Seq > old.Seq {
		lost = int(cur.Seq - old.Seq)
	}
	s.b.fail("resync", fmt.Sprintf("kimi web cannot replay a session's events (%s): following goes on from seq %d", p.Get("reason").String(), cur.Seq), lost)
}

// Close ends the connection.
func (s *stream) Close() error { return s.c.Close() }
