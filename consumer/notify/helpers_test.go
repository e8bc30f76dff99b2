package notify

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRelay is the part of a relay a notifier uses: GET /stream (the
// snapshot it is given, or a live stream fed by push) and POST /events.
type fakeRelay struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	snapshot []string
	lives    []chan string
	live     chan struct{} // a live stream opened
	posted   chan []byte
	queries  []string
}

func newFakeRelay(t *testing.T, snapshot ...string) *fakeRelay {
	f := &fakeRelay{t: t, snapshot: snapshot, live: make(chan struct{}, 16), posted: make(chan []byte, 256)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRelay) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/events":
		if r.Header.Get("AEP-Version") != "0.1" {
			http.Error(w, "version", http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f.posted <- []byte(l)
		}
		w.WriteHeader(http.StatusAccepted)
	case "/stream":
		f.mu.Lock()
		f.queries = append(f.queries, r.URL.RawQuery)
		snap := append([]string(nil), f.snapshot...)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		if r.URL.Query().Get("live") == "0" {
			for _, ev := range snap {
				fmt.Fprintf(w, "event: x\ndata: %s\n\n", ev)
			}
			return
		}
		ch := make(chan string, 64)
		f.mu.Lock()
		f.lives = append(f.lives, ch)
		f.mu.Unlock()
		fl.Flush()
		f.live <- struct{}{}
		for {
			select {
			case <-r.Context().Done():
				return
			case ev, ok := <-ch:
				if !ok {
					return
				}
				fmt.Fprintf(w, ": ping\n\nid: s:0:1\ndata: %s\n\n", ev)
				fl.Flush()
			}
		}
	default:
		http.NotFound(w, r)
	}
}

// push sends ev on every open live stream.
func (f *fakeRelay) push(ev string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.lives {
		ch <- ev
	}
}

// nextPosted waits for the next posted record.
func (f *fakeRelay) nextPosted() map[string]any {
	f.t.Helper()
	select {
	case b := <-f.posted:
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			f.t.Fatalf("posted %q: %v", b, err)
		}
		return m
	case <-time.After(20 * time.Second):
		f.t.Fatal("no attention.routed was posted")
	}
	return nil
}

// sink is a push service or webhook receiver that records what it gets;
// fail, when set, decides a status for each request (0: 200).
type sink struct {
	srv  *httptest.Server
	got  chan []byte
	mu   sync.Mutex
	n    int
	fail func(n int) int
	hold chan struct{} // when set, the first request waits for it
}

func newSink(t *testing.T) *sink {
	s := &sink{got: make(chan []byte, 64)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.n++
		n, fail, hold := s.n, s.fail, s.hold
		s.mu.Unlock()
		if hold != nil && n == 1 {
			<-hold
		}
		if fail != nil {
			if code := fail(n); code != 0 {
				w.WriteHeader(code)
				return
			}
		}
		s.got <- append(b, []byte("\x00"+r.URL.Path+"\x00"+r.Header.Get("Authorization"))...)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// next waits for the next delivery: its body, path and Authorization.
func (s *sink) next(t *testing.T) (map[string]any, string, string) {
	t.Helper()
	select {
	case b := <-s.got:
		parts := strings.SplitN(string(b), "\x00", 3)
		var m map[string]any
		if err := json.Unmarshal([]byte(parts[0]), &m); err != nil {
			t.Fatalf("delivery %q: %v", parts[0], err)
		}
		return m, parts[1], parts[2]
	case <-time.After(20 * time.Second):
		t.Fatal("nothing was delivered")
	}
	return nil, "", ""
}

// none checks that nothing more arrives while the notifier handles one
// more event: settled is signalled by the caller's own barrier.
func (s *sink) none(t *testing.T) {
	t.Helper()
	select {
	case b := <-s.got:
		t.Fatalf("unexpected delivery %q", b)
	default:
	}
}

// requested is an attention.requested as a hook writes it at redacted.
func requested(id, session, kind, prompt string, at time.Time) string {
	return fmt.Sprintf(`{"aep":"0.1","id":%q,"type":"attention.requested","subject":"Bash","time":%q,"source":"aep://host-a/agent/claude-code/session/%s","agent":"claude-code","session":%q,"run":"r1","seq":3,"capture":"redacted","data":{"kind":%q,"prompt":%q,"options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}],"respond_via":["oob"]}}`,
		id, at.UTC().Format(time.RFC3339Nano), session, session, kind, prompt)
}

// resolved is the request's attention.resolved.
func resolved(id, session string) string {
	return fmt.Sprintf(`{"aep":"0.1","id":"%s-res","type":"attention.resolved","subject":%q,"time":"2026-01-01T00:00:00.000Z","source":"aep://host-a/agent/claude-code/session/%s","agent":"claude-code","session":%q,"seq":9,"data":{"resolution":"answered"}}`,
		id, id, session, session)
}

// settings builds checked settings for a relay and routes.
func settings(t *testing.T, relay string, routes ...RouteFile) *Settings {
	t.Helper()
	cf := &File{Relay: relay, Token: "notifier-token-0123456789", Routes: routes}
	s, err := cf.Check()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start runs a notifier until the test ends; settled receives every
// settled delivery attempt.
func start(t *testing.T, s *Settings, home string) (*Notifier, chan string) {
	t.Helper()
	return run(t, s, Options{Home: home})
}

// run starts a notifier with o (a router-host, a plain client, a 1 ms
// backoff) until the test ends; settled receives every settled delivery
// attempt.
func run(t *testing.T, s *Settings, o Options) (*Notifier, chan string) {
	t.Helper()
	o.Host, o.Client = "router-host", &http.Client{}
	o.Backoff = func(int) time.Duration { return time.Millisecond }
	n, err := New(s, o)
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 64)
	n.onSettled = func(route string, err error) {
		msg := route
		if err != nil {
			msg += ": " + err.Error()
		}
		settled <- msg
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return n, settled
}

func waitSettled(t *testing.T, settled chan string, want string) {
	t.Helper()
	select {
	case got := <-settled:
		if !strings.HasPrefix(got, want) {
			t.Fatalf("settled %q, want %q", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no delivery attempt settled (want %s)", want)
	}
}

func lines(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// pendingKeys is the ids of the requests the loop holds, sorted.
func pendingKeys(t *testing.T, n *Notifier) []string {
	t.Helper()
	out := make(chan []string)
	n.probe <- func() {
		var ids []string
		for _, r := range n.pending {
			ids = append(ids, r.ID)
		}
		sort.Strings(ids)
		out <- ids
	}
	return <-out
}

func readErrors(t *testing.T, home string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	return string(b)
}

// fakeClock is a Clock moved by hand: its timers fire, in order, only
// when Advance passes their time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock(now time.Time) *fakeClock { return &fakeClock{now: now} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

// Advance moves the clock by d and runs the timers that fall due,
// returning how many did.
func (c *fakeClock) Advance(d time.Duration) int {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	keep := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.stopped:
		case !tm.at.After(c.now):
			tm.stopped = true
			due = append(due, tm.f)
		default:
			keep = append(keep, tm)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
	return len(due)
}

// armed is how many timers are set and not stopped.
func (c *fakeClock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, tm := range c.timers {
		if !tm.stopped {
			n++
		}
	}
	return n
}

// startClocked runs a notifier on clock; events are handed to its loop
// directly (onLoop), not over a relay stream.
func startClocked(t *testing.T, s *Settings, clock Clock) (*Notifier, chan string) {
	t.Helper()
	return run(t, s, Options{Home: t.TempDir(), Clock: clock})
}

// onLoop runs f on the notifier's loop and returns once it has run.
func onLoop(n *Notifier, f func()) {
	done := make(chan struct{})
	n.probe <- func() { f(); close(done) }
	<-done
}
