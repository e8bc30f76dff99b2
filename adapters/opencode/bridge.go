package opencode

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/sse"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Profile is what differs between the OpenCode server and its Kilo Code
// fork on the wire.
type Profile struct {
	// Name is the follow and plugin verbs' vendor word ("opencode", "kilo").
	Name string
	// Table is the SSE channel's mapping table; Plugin the forwarder's.
	Table, Plugin string
	// User is the HTTP Basic user name the server expects by default, and
	// UserEnv / PasswordEnv the server's own variables for them.
	User, UserEnv, PasswordEnv string
}

// Profiles are the two servers.
var Profiles = map[string]Profile{
	"opencode": {Name: "opencode", Table: "opencode-sse", Plugin: "opencode", User: "opencode",
		UserEnv: "OPENCODE_SERVER_USERNAME", PasswordEnv: "OPENCODE_SERVER_PASSWORD"},
	"kilo": {Name: "kilo", Table: "kilocode-sse", Plugin: "kilocode", User: "kilo",
		UserEnv: "KILO_SERVER_USERNAME", PasswordEnv: "KILO_SERVER_PASSWORD"},
}

// ProfileNames lists the vendor words, sorted.
func ProfileNames() []string {
	ns := make([]string, 0, len(Profiles))
	for n := range Profiles {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Defaults of the bridge.
const (
	// MaxEvent bounds one event's data (a tool part with a large output).
	MaxEvent = 16 << 20
	// catchUpMargin widens a catch-up window before the cursor's time, for
	// clocks and writes that land out of order.
	catchUpMargin = 5 * time.Second
	// catchUpMessages bounds the messages fetched per session.
	catchUpMessages = 200
	// maxBusy bounds the sessions remembered as busy, and maxDirs the
	// directories the global stream has named.
	maxBusy, maxDirs = 4096, 256
	// maxREST bounds one REST body.
	maxREST = 64 << 20
	// DefaultConnectTimeout is how long Open first waits for the stream's
	// headers. A serving server answers /event at once (it sends
	// server.connected first); one still booting after a restart accepts
	// the connection and never answers it, so Open gives up and the Runner
	// dials again. Each consecutive give-up doubles the wait, up to
	// maxConnectTimeout (the client's own header timeout), for a machine
	// where bootstrapping a directory's instance is slow.
	DefaultConnectTimeout = 5 * time.Second
	maxConnectTimeout     = 30 * time.Second
)

// Bridge is the OpenCode / Kilo Code SSE bridge: a follow.Source over a
// server's event stream and REST surface.
type Bridge struct {
	// Base is the server's URL (http://127.0.0.1:4096).
	Base *url.URL
	// User and Password are the HTTP Basic credentials; no Password means
	// no Authorization header (an open local server).
	User, Password string
	// AllDirectories follows /global/event (every directory the server
	// serves) instead of /event (the server's own directory).
	AllDirectories bool
	// Client makes the requests; nil means a client with no overall
	// timeout (the stream lives long) and short dial and header timeouts.
	Client *http.Client
	// Mode and Deltas are given to every moment.
	Mode   mapping.Mode
	Deltas bool
	// Nonce mints the moments' nonces.
	Nonce func() string
	// Now is the clock the catch-up reads ids' times against; nil means
	// time.Now.
	Now func() time.Time
	// ConnectTimeout is the first wait for the stream's headers (0 means
	// DefaultConnectTimeout); see DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Errors keeps what the bridge notices itself (an event over the
	// bound, skipped), named Name ("opencode", "kilocode"); nil drops it.
	Errors shim.Recorder
	Name   string

	mu      sync.Mutex
	busy    map[string]bool   // sessions whose turn the stream saw start and not end
	dirs    map[string]bool   // directories the global stream named
	sessDir map[string]string // the directory the global stream last named per session
	waitFor time.Duration     // the current wait for headers; 0 before a give-up
}

func (b *Bridge) client() *http.Client {
	if b.Client != nil {
		return b.Client
	}
	return defaultClient
}

var defaultClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	ResponseHeaderTimeout: maxConnectTimeout,
	IdleConnTimeout:       90 * time.Second,
}}

// request builds a request to path with the credentials.
func (b *Bridge) request(ctx context.Context, path string, q url.Values) (*http.Request, error) {
	u := b.Base.JoinPath(path)
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if b.Password != "" {
		req.SetBasicAuth(b.User, b.Password)
	}
	return req, nil
}

// Open connects the event stream.
func (b *Bridge) Open(ctx context.Context) (follow.Stream, error) {
	path := "/event"
	if b.AllDirectories {
		path = "/global/event"
	}
	req, err := b.request(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	sctx, cancel := context.WithCancel(ctx)
	wait := b.headerWait()
	timer := time.AfterFunc(wait, cancel)
	resp, err := b.client().Do(req.WithContext(sctx))
	if !timer.Stop() {
		cancel()
		if err == nil {
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b.gaveUp(wait)
		return nil, fmt.Errorf("GET %s: no answer within %v (a server still booting holds early requests)", path, wait)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("GET %s: %w", path, redactURLError(err))
	}
	b.answered()
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return nil, fmt.Errorf("GET %s: 401 unauthorized (check --password-env and the user name)", path)
		}
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: content type %q is not text/event-stream", path, mt)
	}
	return &stream{b: b, body: resp.Body, cancel: cancel, rd: sse.NewReader(resp.Body, MaxEvent)}, nil
}

// headerWait is how long the next Open waits for the stream's headers.
func (b *Bridge) headerWait() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waitFor == 0 {
		return cmp.Or(b.ConnectTimeout, DefaultConnectTimeout)
	}
	return b.waitFor
}

// gaveUp doubles the wait after an Open that got no headers in wait.
func (b *Bridge) gaveUp(wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waitFor = max(min(2*wait, maxConnectTimeout), wait)
}

// answered resets the wait once a server answered.
func (b *Bridge) answered() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waitFor = 0
}

// redactURLError keeps a transport error's message without the URL's
// credentials (the URL never carries them here, but a user may pass them).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			ue.URL = u.Redacted()
		}
	}
	return err
}

// stream is one open event stream.
type stream struct {
	b      *Bridge
	body   io.ReadCloser
	cancel context.CancelFunc // ends the request
	rd     *sse.Reader
}

// Next decodes the next event into an item: the bus event as a moment,
// keyed and positioned by its evt_ id. Keep-alives (server.heartbeat, SSE
// comments) and the global stream's sync copies are items with no moments.
func (s *stream) Next() (follow.Item, error) {
	for {
		ev, err := s.rd.Next()
		var tl *sse.TooLongError
		if errors.As(err, &tl) {
			if s.b.Errors != nil {
				s.b.Errors.Record(tl.Failure(cmp.Or(s.b.Name, "opencode")))
			}
			return follow.Item{}, nil // counted as activity; too big to observe
		}
		if err != nil {
			return follow.Item{}, err
		}
		return s.b.item(ev.Data), nil
	}
}

func (s *stream) Close() error {
	err := s.body.Close()
	s.cancel()
	return err
}

// item turns one event's data into an item.
func (b *Bridge) item(data []byte) follow.Item {
	if !gjson.ValidBytes(data) {
		return follow.Item{}
	}
	ev, dir := data, ""
	if p := gjson.GetBytes(data, "payload"); p.IsObject() {
		ev, dir = []byte(p.Raw), gjson.GetBytes(data, "directory").String()
	}
	m := eventMoment(ev, dir)
	switch m.Facts.Name {
	case "sync", "server.heartbeat", "":
		return follow.Item{}
	}
	b.track(m, dir)
	m.Mode, m.Deltas = b.Mode, b.Deltas
	if b.Nonce != nil {
		m.Nonce = b.Nonce()
	}
	return follow.Item{Moments: []mapping.Moment{m}, Key: m.Facts.ID, Cursor: m.Facts.ID}
}

// track remembers the sessions the stream saw turn busy and not yet idle,
// and the directories the global stream named: what a catch-up checks.
func (b *Bridge) track(m mapping.Moment, dir string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy == nil {
		b.busy, b.dirs = map[string]bool{}, map[string]bool{}
	}
	if dir != "" && len(b.dirs) < maxDirs {
		b.dirs[dir] = true
	}
	sess := gjson.GetBytes(m.Raw, "properties.sessionID").String()
	if sess == "" {
		return
	}
	if dir != "" {
		if b.sessDir == nil {
			b.sessDir = map[string]string{}
		}
		if _, ok := b.sessDir[sess]; ok || len(b.sessDir) < maxBusy {
			b.sessDir[sess] = dir
		}
	}
	switch m.Facts.Name {
	case "session.status":
		if gjson.GetBytes(m.Raw, "properties.status.type").String() == "idle" {
			delete(b.busy, sess)
		} else if len(b.busy) < maxBusy {
			b.busy[sess] = true
		}
	case "session.idle", "session.deleted":
		delete(b.busy, sess)
	}
}

// directories are the directories to catch up in: the server's own ("")
// and, following every directory, each one the stream named.
func (b *Bridge) directories() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []string{""}
	if b.AllDirectories {
		for d := range b.dirs {
			out = append(out, d)
		}
		sort.Strings(out[1:])
	}
	return out
}

// busySessions takes the sessions believed busy.
func (b *Bridge) busySessions() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]bool, len(b.busy))
	for s := range b.busy {
		out[s] = true
	}
	return out
}

// CatchUp fetches what changed since cursor (an evt_ id, which encodes
// its time): the sessions updated since then or believed busy, their
// recent messages and tool parts, the asks still pending in busy
// sessions, and an end for each of those sessions that is idle now. With
// no cursor (a first start) there is nothing to catch up with.
func (b *Bridge) CatchUp(ctx context.Context, cursor string) ([]mapping.Moment, error) {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	since, ok := EventTime(cursor, now())
	if !ok {
		return nil, nil
	}
	cutoff := since.Add(-catchUpMargin).UnixMilli()
	believed := b.busySessions()
	var out []mapping.Moment
	var errs []error
	for _, dir := range b.directories() {
		ms, err := b.catchUpDir(ctx, dir, cutoff, believed)
		out = append(out, ms...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for i := range out {
		out[i].Mode, out[i].Deltas = b.Mode, b.Deltas
		if b.Nonce != nil {
			out[i].Nonce = b.Nonce()
		}
	}
	return out, errors.Join(errs...)
}

func (b *Bridge) catchUpDir(ctx context.Context, dir string, cutoff int64, believed map[string]bool) ([]mapping.Moment, error) {
	q := url.Values{}
	if dir != "" {
		q.Set("directory", dir)
	}
	var status map[string]json.RawMessage
	if err := b.getJSON(ctx, "/session/status", q, &status); err != nil {
		return nil, err
	}
	// The whole list, filtered here: the servers' own "start" filter
	// differs (Kilo's drops a session created before it but updated since).
	var sessions []json.RawMessage
	if err := b.getJSON(ctx, "/session", q, &sessions); err != nil {
		return nil, err
	}
	pick := map[string][]byte{}
	var order []string
	for _, s := range sessions {
		id := gjson.GetBytes(s, "id").String()
		upd := gjson.GetBytes(s, "time.updated").Int()
		if id == "" || (upd < cutoff && !believed[id] && status[id] == nil) {
			continue
		}
		if _, dup := pick[id]; !dup {
			order = append(order, id)
		}
		pick[id] = s
	}
	for id := range believed {
		if _, ok := pick[id]; !ok && dir == "" {
			order = append(order, id)
			pick[id] = nil
		}
	}
	var out []mapping.Moment
	for _, id := range order {
		if info := pick[id]; info != nil {
			out = append(out, recordMoment("session", id, info))
		}
		ms, err := b.messages(ctx, id, q, cutoff)
		if err != nil {
			return out, err
		}
		out = append(out, ms...)
	}
	asks, err := b.pendingAsks(ctx, q, status, dir)
	if err != nil {
		return out, err
	}
	out = append(out, asks...)
	for _, id := range order {
		if status[id] == nil || gjson.GetBytes(status[id], "type").String() == "idle" {
			out = append(out, endMoment(id, "idle_on_catch_up"))
		}
	}
	return out, nil
}

// messages are the session's messages (info, then tool parts) created or
// still changing since cutoff.
func (b *Bridge) messages(ctx context.Context, id string, q url.Values, cutoff int64) ([]mapping.Moment, error) {
	mq := url.Values{"limit": {strconv.Itoa(catchUpMessages)}}
	for k, v := range q {
		mq[k] = v
	}
	var msgs []json.RawMessage
	if err := b.getJSON(ctx, "/session/"+url.PathEscape(id)+"/message", mq, &msgs); err != nil {
		return nil, err
	}
	over := turnsOver(msgs)
	var out []mapping.Moment
	for i, m := range msgs {
		info := gjson.GetBytes(m, "info")
		created := info.Get("time.created").Int()
		done := info.Get("time.completed")
		recent := created >= cutoff || (info.Get("role").String() == "assistant" && (!done.Exists() || done.Int() >= cutoff))
		if !recent {
			continue
		}
		if over[i] {
			end := endMoment(id, "turn_over_on_catch_up")
			end.Facts.Run = info.Get("id").String()
			out = append(out, end)
		}
		out = append(out, recordMoment("message", id, []byte(info.Raw)))
		for _, p := range gjson.GetBytes(m, "parts").Array() {
			if p.Get("type").String() == "tool" {
				out = append(out, recordMoment("part", id, []byte(p.Raw)))
			}
		}
	}
	return out, nil
}

// turnsOver marks the user messages (by index into msgs, oldest first)
// that came after the turn before them was over: live, a turn's idle
// arrives before the next prompt, but one catch-up can hold several turns,
// and a prompt sent while a turn runs steers it. The turn before was over
// when its last assistant message had finished the turn (a finish other
// than tool-calls, or an error) before the prompt was created, or was cut
// (never completed, yet a later assistant message exists: the server
// stopped mid-reply and went on after a restart).
func turnsOver(msgs []json.RawMessage) map[int]bool {
	lastAssistant := -1
	for i, m := range msgs {
		if gjson.GetBytes(m, "info.role").String() == "assistant" {
			lastAssistant = i
		}
	}
	over := map[int]bool{}
	prev := -1 // the last assistant message since the last user message
	for i, m := range msgs {
		info := gjson.GetBytes(m, "info")
		switch info.Get("role").String() {
		case "assistant":
			prev = i
		case "user":
			if prev >= 0 {
				a := gjson.GetBytes(msgs[prev], "info")
				done := a.Get("time.completed")
				switch {
				case !done.Exists():
					over[i] = prev != lastAssistant
				case done.Int() <= info.Get("time.created").Int():
					f := a.Get("finish").String()
					over[i] = a.Get("error").Exists() || (f != "" && f != "tool-calls")
				}
			}
			prev = -1
		}
	}
	return over
}

// pendingAsks are the permission and question requests pending in busy
// sessions (an ask pending in an idle session was orphaned by an abort).
func (b *Bridge) pendingAsks(ctx context.Context, q url.Values, status map[string]json.RawMessage, dir string) ([]mapping.Moment, error) {
	var out []mapping.Moment
	for _, r := range []struct{ path, name string }{{"/permission", "permission"}, {"/question", "question"}} {
		var reqs []json.RawMessage
		if err := b.getJSON(ctx, r.path, q, &reqs); err != nil {
			return out, err
		}
		for _, req := range reqs {
			sess := gjson.GetBytes(req, "sessionID").String()
			if st := status[sess]; st != nil && gjson.GetBytes(st, "type").String() != "idle" {
				m := recordMoment(r.name, sess, req)
				m.Facts.Thread = dir // where its reply goes
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// getJSON GETs path and decodes its JSON body into v.
func (b *Bridge) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	req, err := b.request(ctx, path, q)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := b.client().Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, redactURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxREST+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if len(body) > maxREST {
		return fmt.Errorf("GET %s: body over %d bytes", path, maxREST)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// idTimeSpan is the span of milliseconds an OpenCode id's time field
// covers before it wraps (its 48 bits hold milliseconds×4096 + a counter).
const idTimeSpan = int64(1) << 36

// EventTime reads the time an OpenCode id encodes (evt_, msg_, ...: after
// the prefix, 12 hex digits holding the low 48 bits of milliseconds×4096
// plus a counter), taking the latest time not after now that fits; ok is
// false for anything else.
func EventTime(id string, now time.Time) (time.Time, bool) {
	_, rest, ok := strings.Cut(id, "_")
	if !ok || len(rest) < 12 {
		return time.Time{}, false
	}
	n, err := strconv.ParseUint(rest[:12], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	low := int64(n >> 12)
	cur := now.UnixMilli()
	back := ((cur-low)%idTimeSpan + idTimeSpan) % idTimeSpan
	return time.UnixMilli(cur - back), true
}
