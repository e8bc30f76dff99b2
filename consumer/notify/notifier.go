package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// Options wire a Notifier to its surroundings.
type Options struct {
	// Home is the AEP home: the state lives in Home/notify, failures go
	// to Home's internal error log.
	Home string
	// Host is the {host} of the routed records' source.
	Host string
	// Client makes every HTTP request (the relay, ntfy, webhooks).
	Client *http.Client
	// Log receives one line per notable happening (started, delivered,
	// gave up); nil discards them.
	Log io.Writer
	// Backoff is the wait before retry n (1, 2, ...); nil: jittered
	// exponential from 1 s up to 5 min.
	Backoff func(n int) time.Duration
	// MaxAttempts is how many times a delivery is tried before the route
	// gives up on the request (default 8).
	MaxAttempts int
	// Buttons, when set, are the answer buttons of the routes with
	// actions: it is told of every request and its settling, and makes
	// each notification's buttons.
	Buttons *Buttons
	// Clock is the notifier's time (nil: the wall clock).
	Clock Clock
}

// Request is what a notifier knows of a pending attention request.
type Request struct {
	ID, Source, Agent, Session, Run, Subject, Kind, Tenant string
	At                                                     time.Time
	Options                                                []Option
	RespondVia                                             []string
}

// Notifier routes attention requests read from a relay to its routes.
type Notifier struct {
	s    *Settings
	o    Options
	errs *shim.ErrorLog
	ids  *shim.IDs
	st   *state
	rec  *recorder

	events  chan [][]byte // batches: a snapshot whole, live events one by one
	results chan result
	due     chan dueItem

	pending map[string]*request
	closed  *recent
	sem     map[string]chan struct{}
	ctx     context.Context
	wg      sync.WaitGroup

	// Hooks for tests and the bench: when set, called on each settled
	// delivery attempt (from the notifier's loop).
	onSettled func(route string, err error)
	// probe runs functions on the loop (tests: a look at the loop's own
	// state between events).
	probe chan func()
}

// request is one attention.requested being routed.
type request struct {
	Request
	key     string
	expires time.Time
	ev      map[string]any // the event as read, for down-leveling per route
	routes  map[string]*delivery
}

// delivery is one route's progress with one request.
type delivery struct {
	route    *Route
	sent     int // deliveries made (the first, then reminders)
	attempts int // failed attempts since the last success
	inflight bool
	stop     func() bool // the pending timer's, if any
}

type result struct {
	r        *request
	route    string
	err      error
	reminder int
	at       time.Time
}

type dueItem struct{ key, route string }

// New checks the options and loads the state.
func New(s *Settings, o Options) (*Notifier, error) {
	if o.Client == nil {
		return nil, errors.New("notify: no HTTP client")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Backoff == nil {
		o.Backoff = Backoff
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 8
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	n := &Notifier{s: s, o: o, errs: shim.NewErrorLog(o.Home), ids: shim.NewIDs(),
		events: make(chan [][]byte, 1024), results: make(chan result, 64), due: make(chan dueItem, 64),
		pending: map[string]*request{}, closed: newRecent(50000), sem: map[string]chan struct{}{}, probe: make(chan func())}
	st, err := loadState(filepath.Join(o.Home, "notify", "state.json"))
	if st == nil {
		return nil, err
	}
	if err != nil {
		n.fail("state", err.Error())
	}
	n.st = st
	if o.Buttons != nil && o.Buttons.fail == nil {
		o.Buttons.fail = n.fail
	}
	ev := *s.Relay
	ev.Path = strings.TrimSuffix(ev.Path, "/") + "/events"
	n.rec = &recorder{queue: st.Outbox, wake: make(chan struct{}, 1),
		client: &deliver.AEPClient{Endpoint: ev.String(), Token: s.Token, Client: o.Client},
		fail:   n.fail, saved: n.saveSoon}
	for _, r := range s.Routes {
		n.sem[r.Name] = make(chan struct{}, routeConcurrency)
	}
	return n, nil
}

// routeConcurrency is how many deliveries one route makes at once: a slow
// request does not hold the next one back, and a route is never flooded.
const routeConcurrency = 4

// Backoff is the default retry wait: 1 s doubling to 5 min, with jitter.
func Backoff(n int) time.Duration {
	d := time.Second << min(n-1, 9)
	d = min(d, 5*time.Minute)
	return d/2 + rand.N(d/2+1)
}

// fail records a failure in the internal error log (never content: route
// names, statuses, transport errors).
func (n *Notifier) fail(stage, msg string) {
	n.errs.Record(shim.Failure{Adapter: "notify", Stage: stage, Error: msg})
	fmt.Fprintf(n.o.Log, "aep-hook notify: %s: %s\n", stage, redact.Diagnostic(msg))
}

// ceiling is the capture level the notifier subscribes at: the highest
// its routes show.
func (n *Notifier) ceiling() redact.Level {
	l := redact.Metadata
	for _, r := range n.s.Routes {
		l = max(l, r.Capture)
	}
	return l
}

// Run reads the relay and delivers until ctx ends, reconnecting with
// backoff whenever the stream drops.
func (n *Notifier) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n.ctx = ctx
	n.wg.Add(2)
	go func() { defer n.wg.Done(); n.rec.run(ctx, n.o.Backoff) }()
	go func() { defer n.wg.Done(); n.read(ctx) }()
	defer n.wg.Wait()
	for {
		// Events first: a resolution already read is handled before a
		// delivery of its request falls due.
		select {
		case batch := <-n.events:
			n.onBatch(batch)
			continue
		default:
		}
		select {
		case <-ctx.Done():
			n.save()
			return nil
		case batch := <-n.events:
			n.onBatch(batch)
		case it := <-n.due:
			n.onDue(it)
		case res := <-n.results:
			n.onResult(res)
		case f := <-n.probe:
			f()
		}
	}
}

// read keeps a subscription open: the live stream first, then a snapshot
// of what the relay's buffers hold (so nothing falls between the two),
// the snapshot's events handed on before the live ones.
func (n *Notifier) read(ctx context.Context) {
	capture := n.ceiling().String()
	liveURL, err := n.s.streamURL(capture, false)
	if err != nil {
		n.fail("config", err.Error())
		return
	}
	snapURL, _ := n.s.streamURL(capture, true)
	for attempt := 0; ; {
		err := n.readOnce(ctx, liveURL, snapURL, &attempt)
		if ctx.Err() != nil {
			return
		}
		attempt++
		n.fail("relay", "the relay stream: "+err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(n.o.Backoff(attempt)):
		}
	}
}

func (n *Notifier) readOnce(ctx context.Context, liveURL, snapURL string, attempt *int) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	live, err := openStream(sctx, n.o.Client, liveURL, n.s.Token)
	if err != nil {
		return err
	}
	defer live.Close()
	held := make(chan []byte, 4096)
	liveErr := make(chan error, 1)
	go func() {
		liveErr <- readSSE(live, MaxEvent, func(b []byte) error {
			select {
			case held <- b:
				return nil
			case <-sctx.Done():
				return sctx.Err()
			}
		}, n.skipped)
	}()
	snap, err := openStream(sctx, n.o.Client, snapURL, n.s.Token)
	if err != nil {
		return err
	}
	// The snapshot is handed on whole, so the loop knows every resolution
	// in it before any of its requests falls due.
	var batch [][]byte
	err = readSSE(snap, MaxEvent, func(b []byte) error { batch = append(batch, b); return nil }, n.skipped)
	snap.Close()
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := n.hand(sctx, batch...); err != nil {
		return err
	}
	*attempt = 0
	fmt.Fprintf(n.o.Log, "aep-hook notify: reading %s\n", n.relayName())
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b := <-held:
			if err := n.hand(sctx, b); err != nil {
				return err
			}
		case err := <-liveErr:
			for len(held) > 0 {
				n.hand(sctx, <-held)
			}
			if errors.Is(err, io.EOF) {
				return errors.New("the relay ended the stream")
			}
			return err
		}
	}
}

// hand gives the loop a batch of events.
func (n *Notifier) hand(ctx context.Context, b ...[]byte) error {
	if b == nil {
		b = [][]byte{}
	}
	select {
	case n.events <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n *Notifier) skipped() {
	n.fail("read", fmt.Sprintf("an event over %d bytes on the relay stream was skipped", MaxEvent))
}

// relayName is the relay's address for messages.
func (n *Notifier) relayName() string { return n.s.Relay.Scheme + "://" + n.s.Relay.Host }

// lifecycle is what the loop reads of an attention event.
type lifecycle struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Subject string `json:"subject"`
	Time    string `json:"time"`
	Source  string `json:"source"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Run     string `json:"run"`
	Tenant  string `json:"tenant"`
	Data    struct {
		Kind       string   `json:"kind"`
		ExpiresAt  string   `json:"expires_at"`
		Options    []Option `json:"options"`
		RespondVia []string `json:"respond_via"`
	} `json:"data"`
}

func (n *Notifier) onBatch(batch [][]byte) {
	if batch == nil { // the recorder's queue moved
		n.save()
		return
	}
	for _, b := range batch {
		n.onEvent(b)
	}
}

func (n *Notifier) onEvent(b []byte) {
	var ev lifecycle
	if json.Unmarshal(b, &ev) != nil || ev.Source == "" || ev.ID == "" {
		return
	}
	switch ev.Type {
	case "attention.requested":
		n.onRequest(b, &ev)
	case "attention.answered", "attention.resolved", "attention.timeout":
		if ev.Subject == "" {
			return
		}
		key := ev.Source + "\x00" + ev.Subject
		n.closed.add(key)
		if n.o.Buttons != nil {
			n.o.Buttons.settle(ev.Source, ev.Subject)
		}
		if r, ok := n.pending[key]; ok {
			n.drop(r)
		}
	}
}

func (n *Notifier) onRequest(b []byte, ev *lifecycle) {
	key := ev.Source + "\x00" + ev.ID
	if n.closed.has(key) || n.pending[key] != nil || ev.Session == "" {
		return
	}
	now := n.o.Clock.Now()
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		return
	}
	if now.Sub(at) > n.s.MaxAge {
		return
	}
	r := &request{key: key, routes: map[string]*delivery{}, Request: Request{ID: ev.ID, Source: ev.Source,
		Agent: ev.Agent, Session: ev.Session, Run: ev.Run, Subject: ev.Subject, Kind: ev.Data.Kind,
		Tenant: ev.Tenant, At: at, Options: ev.Data.Options, RespondVia: ev.Data.RespondVia}}
	if ev.Data.ExpiresAt != "" {
		if exp, err := time.Parse(time.RFC3339Nano, ev.Data.ExpiresAt); err == nil {
			if !exp.After(now) {
				return
			}
			r.expires = exp
		}
	}
	if json.Unmarshal(b, &r.ev) != nil {
		return
	}
	if n.o.Buttons != nil {
		// Before deciding what to deliver: a button sent before a restart
		// answers as long as the request is pending.
		n.o.Buttons.track(r.Request)
	}
	for _, rt := range n.s.Routes {
		if !rt.Takes(r.Kind) {
			continue
		}
		d := &delivery{route: rt}
		next := at.Add(n.s.Delay)
		if s, ok := n.st.Delivered[deliveryKey(rt.Name, key)]; ok {
			// Delivered before a restart or a reconnect: only a reminder
			// may be due.
			d.sent = s.N
			if d.sent > rt.Reminders || rt.Remind == 0 {
				continue
			}
			next = s.Last.Add(rt.Remind)
		}
		r.routes[rt.Name] = d
		n.schedule(r, d, next)
	}
	if len(r.routes) > 0 {
		n.pending[key] = r
	}
}

// schedule makes d due at t (at once when t has passed).
func (n *Notifier) schedule(r *request, d *delivery, t time.Time) {
	it := dueItem{key: r.key, route: d.route.Name}
	wait := t.Sub(n.o.Clock.Now())
	if d.stop != nil {
		d.stop()
		d.stop = nil
	}
	if wait <= 0 {
		select {
		case n.due <- it:
			return
		default:
		}
		wait = 0
	}
	ctx := n.ctx
	d.stop = n.o.Clock.AfterFunc(wait, func() {
		select {
		case n.due <- it:
		case <-ctx.Done():
		}
	})
}

// settle ends route's part in r; a request with nothing left to do is
// forgotten (the state remembers what was delivered).
func (n *Notifier) settle(r *request, route string) {
	delete(r.routes, route)
	if len(r.routes) == 0 && n.pending[r.key] == r {
		delete(n.pending, r.key)
	}
}

// drop forgets a request: resolved, expired or settled everywhere.
func (n *Notifier) drop(r *request) {
	for _, d := range r.routes {
		if d.stop != nil {
			d.stop()
		}
	}
	delete(n.pending, r.key)
}

func (n *Notifier) onDue(it dueItem) {
	r := n.pending[it.key]
	if r == nil {
		return
	}
	d := r.routes[it.route]
	if d == nil || d.inflight {
		return
	}
	now := n.o.Clock.Now()
	if !r.expires.IsZero() && !r.expires.After(now) {
		n.drop(r)
		return
	}
	m, err := newMessage(r, d.route.Capture, now, d.sent)
	if err != nil {
		n.fail("render", fmt.Sprintf("route %s: %v", d.route.Name, err))
		n.settle(r, it.route)
		return
	}
	if d.route.Actions && n.o.Buttons != nil {
		m.Actions = n.o.Buttons.actions(r.Request, m.Options)
	}
	d.inflight = true
	sem := n.sem[d.route.Name]
	ctx := n.ctx
	reminder := d.sent
	go func() {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		err := d.route.Send(ctx, n.o.Client, m)
		<-sem
		select {
		case n.results <- result{r: r, route: d.route.Name, err: err, reminder: reminder, at: n.o.Clock.Now()}:
		case <-ctx.Done():
		}
	}()
}

func (n *Notifier) onResult(res result) {
	r := res.r
	d := r.routes[res.route]
	if d == nil {
		return
	}
	d.inflight = false
	if n.onSettled != nil {
		defer n.onSettled(res.route, res.err)
	}
	if res.err == nil {
		d.sent++
		d.attempts = 0
		n.st.Delivered[deliveryKey(res.route, r.key)] = sent{N: d.sent, Last: res.at}
		line, err := routedEvent(n.ids, n.o.Host, n.s.Agent, r, d.route, res.at)
		if err != nil {
			n.fail("record", err.Error())
		} else {
			n.rec.add(line)
		}
		n.save()
		what := "delivered"
		if res.reminder > 0 {
			what = "reminded"
		}
		fmt.Fprintf(n.o.Log, "aep-hook notify: %s %s %s to %s\n", what, r.Kind, r.ID, res.route)
		if n.pending[r.key] == r && d.route.Remind > 0 && d.sent <= d.route.Reminders {
			n.schedule(r, d, res.at.Add(d.route.Remind))
		} else {
			n.settle(r, res.route)
		}
		return
	}
	d.attempts++
	var se *SendError
	permanent := errors.As(res.err, &se) && se.Permanent
	if permanent || d.attempts >= n.o.MaxAttempts {
		n.fail("deliver", fmt.Sprintf("route %s gave up on request %s after %d attempts: %v", res.route, r.ID, d.attempts, res.err))
		n.settle(r, res.route)
		return
	}
	n.fail("deliver", fmt.Sprintf("route %s, request %s, attempt %d: %v (retrying)", res.route, r.ID, d.attempts, res.err))
	if n.pending[r.key] != r {
		return // resolved meanwhile: nothing more to send
	}
	wait := n.o.Backoff(d.attempts)
	if se != nil && se.RetryAfter > wait {
		wait = se.RetryAfter
	}
	n.schedule(r, d, res.at.Add(wait))
}

// save writes the state now; saveSoon asks the loop's next turn to (the
// recorder calls it from its own goroutine).
func (n *Notifier) save() {
	n.st.Outbox = n.rec.pending()
	n.st.prune(n.o.Clock.Now())
	if err := n.st.save(); err != nil {
		n.fail("state", err.Error())
	}
}

func (n *Notifier) saveSoon() {
	// The state is the loop's; the recorder's queue is read under its own
	// lock, so a save from here only races with the loop's map writes.
	// Hand the loop a no-op event instead, whose handling saves.
	select {
	case n.events <- nil:
	default:
	}
}

// recent is a bounded set of keys, the oldest forgotten first.
type recent struct {
	max  int
	keys map[string]struct{}
	ring []string
	next int
}

func newRecent(max int) *recent { return &recent{max: max, keys: map[string]struct{}{}} }

func (s *recent) has(k string) bool { _, ok := s.keys[k]; return ok }

func (s *recent) add(k string) {
	if s.has(k) {
		return
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, k)
	} else {
		delete(s.keys, s.ring[s.next])
		s.ring[s.next] = k
		s.next = (s.next + 1) % s.max
	}
	s.keys[k] = struct{}{}
}
