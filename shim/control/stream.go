package control

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Stream is a long-running follower's control link (a stream bridge in
// primary mode): one emitter connection to the relay, dialled again after
// every drop, that carries every event the follower writes (so the relay
// routes a session's commands here) and answers the requests it holds
// with the same Loop a hook uses. A moment is held only while the link is
// live: respond_via says control exactly then.
type Stream struct {
	Config  *Config
	Vendor  mapping.Vendor
	Emitter *shim.Emitter
	// Identity is the hello's (the follower's agent and instance).
	Identity Identity
	// Accepts is the declaration: control.attention.respond, and
	// control.cancel where Handlers carry it out.
	Accepts  []string
	Handlers map[string]Handler
	// Failed records an internal failure (never content).
	Failed func(stage string, err error)
	// Status, when set, gets one line per change of the link.
	Status func(line string)

	once sync.Once
	loop *Loop
	// ready is closed once the first dial has settled (see Ready).
	ready     chan struct{}
	readyOnce sync.Once

	mu       sync.Mutex
	live     bool
	pending  map[string][]byte // held request id -> its event, offered again on a new link
	sessions map[string]bool   // sessions whose events went to the relay
}

// Defaults of the link's redial.
const (
	minRedial = 250 * time.Millisecond
	maxRedial = 15 * time.Second
	// maxHeld bounds the requests a link holds at once; maxSessions the
	// sessions it remembers speaking for.
	maxHeld, maxSessions = 1024, 4096
)

func (s *Stream) init() {
	s.once.Do(func() {
		s.loop = &Loop{Emitter: s.Emitter, Vendor: s.Vendor, Accepts: s.Accepts, Handlers: s.Handlers,
			Failed: s.Failed, Nonce: func() string { return shim.NewIDs().New(time.Now()) }, Sessions: s.speaksFor}
		s.pending, s.sessions = map[string][]byte{}, map[string]bool{}
		s.ready = make(chan struct{})
	})
}

// Ready is closed once Run's first dial has settled: the link is up (a
// moment mapped from then on is held), or the relay could not be reached
// (requests are answered in the agent's own UI until it is), or Run has
// stopped. Only a moment mapped while the link is live is ever held, so a
// follower waits for Ready before it reads its stream: a server that
// replays its pending requests on connect (kimi web does, from the
// cursor) would otherwise hand them over before the link is up, and a
// request the operator could answer over the relay would say oob.
func (s *Stream) Ready() <-chan struct{} {
	s.init()
	return s.ready
}

func (s *Stream) settled() { s.readyOnce.Do(func() { close(s.ready) }) }

// Live reports whether the link is up: a moment mapped now is held.
func (s *Stream) Live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

func (s *Stream) speaksFor(session string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[session]
}

// Run keeps the link up until ctx ends: dial, offer the requests still
// held, serve the relay's commands; after a drop (or a relay that is not
// there) dial again, backing off.
func (s *Stream) Run(ctx context.Context) {
	s.init()
	defer s.settled()
	wait := minRedial
	down := false
	for ctx.Err() == nil {
		link, err := Dial(ctx, s.Config.URL, s.Config.Token, s.Identity,
			Offer{Accepts: s.Accepts, AckWindow: AckWindow}, s.Config.ConnectWait(), s.Config.Secure)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !down {
				s.status("control link down: " + err.Error() + "; requests are answered in the agent's own UI")
				down = true
			}
			if !Absent(err) {
				s.fail("relay", err)
			}
			s.settled()
			if !sleepCtx(ctx, jitter(wait)) {
				return
			}
			wait = min(2*wait, maxRedial)
			continue
		}
		wait, down = minRedial, false
		s.loop.Attach(link)
		s.mu.Lock()
		s.live = true
		var again [][]byte
		for _, line := range s.pending {
			again = append(again, line)
		}
		s.sessions = map[string]bool{} // the new connection claims afresh
		s.mu.Unlock()
		s.status("control link up: permission and question requests are answered over the relay")
		for _, line := range again {
			s.loop.send(line)
		}
		s.settled()
		err = s.loop.Serve(ctx, func() bool { return false })
		s.mu.Lock()
		s.live = false
		s.mu.Unlock()
		s.loop.Attach(nil)
		if ctx.Err() != nil {
			link.Close("the follower is stopping")
			return
		}
		link.Close("reconnecting")
		s.status("control link dropped: " + errText(err) + "; reconnecting")
	}
}

// Deliverer hands the vendor the reply of an answer to the request m
// raised (the server's own reply call); nil: the moment is not held.
type Deliverer func(m mapping.Moment, hold *mapping.Hold) func(reply []byte) error

// Handler wraps next (the follower's emitter) so that while the link is
// live the moments the vendor's table holds are mapped as held (their
// requests say respond_via control) and their requests offered to the
// relay, every event written goes to the relay too, and a request that
// settled in the record (answered in the agent's own UI, dismissed) is
// no longer held.
func (s *Stream) Handler(next shim.Handler, deliver Deliverer) shim.Handler {
	s.init()
	return func(ms []mapping.Moment) ([]shim.Result, error) {
		holds := make([]*mapping.Hold, len(ms))
		dels := make([]func([]byte) error, len(ms))
		if s.Live() && s.Vendor.Hold != nil {
			for i := range ms {
				h := s.Vendor.Hold(ms[i], s.Config.Gate)
				if h == nil {
					continue
				}
				if d := deliver(ms[i], h); d != nil {
					holds[i], dels[i] = h, d
					ms[i].Control = true
				}
			}
		}
		res, err := next(ms)
		s.after(res, holds, dels)
		return res, err
	}
}

// after sends a batch's events to the relay and offers its held requests.
func (s *Stream) after(res []shim.Result, holds []*mapping.Hold, dels []func([]byte) error) {
	live := s.Live()
	for i := range res {
		for j := range res[i].Events {
			ev := &res[i].Events[j]
			if ev.Type == "attention.resolved" && ev.Subject != "" {
				s.forget(ev.Subject)
			}
			if !live {
				continue
			}
			line, err := ev.MarshalLine()
			if err != nil {
				s.fail("encode", err)
				continue
			}
			if i < len(holds) && holds[i] != nil && ev.Type == "attention.requested" {
				s.offer(&Request{ID: ev.ID, Session: res[i].Session, Hold: holds[i], Deliver: dels[i]}, line)
				continue
			}
			s.mu.Lock()
			if len(s.sessions) < maxSessions {
				s.sessions[res[i].Session] = true
			}
			s.mu.Unlock()
			s.loop.send(line)
		}
	}
}

// offer holds r and sends its request event.
func (s *Stream) offer(r *Request, line []byte) {
	s.mu.Lock()
	if len(s.pending) >= maxHeld {
		s.mu.Unlock()
		s.fail("hold", errors.New("too many requests held at once; this one is answered in the agent's own UI"))
		s.loop.send(line)
		return
	}
	s.pending[r.ID] = line
	if len(s.sessions) < maxSessions {
		s.sessions[r.Session] = true
	}
	s.mu.Unlock()
	if err := s.loop.Offer(r, line); err != nil {
		s.fail("send", err)
	}
}

// forget stops holding request id (it settled).
func (s *Stream) forget(id string) {
	s.mu.Lock()
	_, ok := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ok {
		s.loop.Forget(id)
	}
}

func (s *Stream) status(line string) {
	if s.Status != nil {
		s.Status(line)
	}
}

func (s *Stream) fail(stage string, err error) {
	if s.Failed != nil {
		s.Failed(stage, err)
	}
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// jitter spreads d by up to a fifth either way.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + time.Duration(rand.Int64N(int64(d)/5+1))
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
