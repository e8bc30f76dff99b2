package agui

import (
	"context"
	"errors"
	"io"
	"log"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/aep-hook/aep-hook/adapters/httptee"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Defaults for a Proxy's zero fields.
const (
	DefaultMaxEvent    = 8 << 20
	DefaultQueueEvents = 1024
	DefaultMaxInput    = 1 << 20
)

// Stats counts what the proxy saw; read it with the atomic loads.
type Stats struct {
	Streams  atomic.Int64 // event-stream responses observed
	Events   atomic.Int64 // events framed
	Dropped  atomic.Int64 // events the full queue could not take
	TooLong  atomic.Int64 // events over the bound, relayed unobserved
	Invalid  atomic.Int64 // events that are not JSON objects, relayed unobserved
	Observed atomic.Int64 // events handed to the handler
	Failed   atomic.Int64 // handler errors
}

// Proxy is the AG-UI tee: an http.Handler forwarding to Upstream.
type Proxy struct {
	// Upstream is the AG-UI agent's base URL; request paths are joined to
	// it.
	Upstream *url.URL
	// Handle receives the observed events as AG-UI moments, a batch at a
	// time per stream (shim.Emitter.Handler); nil only frames and counts.
	Handle shim.Handler
	// Errors records internal failures; nil discards them.
	Errors shim.Recorder
	// Deltas keeps token-delta events (the --deltas opt-in).
	Deltas bool
	// MaxEvent bounds one observed event's data; a longer event passes
	// through unobserved and is recorded as a failure.
	MaxEvent int
	// QueueEvents bounds each stream's observation backlog; an event that
	// does not fit is dropped from observation (never from the stream).
	QueueEvents int
	// MaxInput bounds how much of a JSON request body (the run input) is
	// read for its threadId and runId.
	MaxInput int64
	// Transport reaches the upstream; nil uses a private clone of
	// http.DefaultTransport (its own connection pool).
	Transport http.RoundTripper
	// Nonce mints each moment's nonce; nil uses ULIDs.
	Nonce func() string

	once    sync.Once
	rp      *httputil.ReverseProxy
	streams sync.WaitGroup
	mu      sync.Mutex
	last    map[string]*stream // each thread's latest stream
	stats   Stats
}

// Stats returns the proxy's counters.
func (p *Proxy) Stats() *Stats { return &p.stats }

// Wait blocks until every stream opened so far has been observed to its
// end (its body closed and its queue drained).
func (p *Proxy) Wait() { p.streams.Wait() }

// ServeHTTP forwards r to the upstream and relays the response.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.once.Do(p.init)
	p.rp.ServeHTTP(w, r)
}

// scopeKey carries a request's stream scope from Rewrite to ModifyResponse.
type scopeKey struct{}

// scope is the identity a stream's events inherit: from the run input,
// then from RUN_STARTED, and the stream's own token.
type scope struct {
	thread, run string
	stream      string
}

func (p *Proxy) init() {
	if p.Nonce == nil {
		p.Nonce = shim.NewIDs().Now
	}
	p.rp = httptee.ReverseProxy(p.Upstream, p.Transport, func(pr *httputil.ProxyRequest) {
		sc := p.readInput(pr.Out)
		pr.Out = pr.Out.WithContext(context.WithValue(pr.Out.Context(), scopeKey{}, sc))
	}, p.observe, p.record)
	// A stream the upstream cuts is recorded by its observer (the run it
	// leaves open is closed); the proxy's own log line would only reach
	// the operator's console.
	p.rp.ErrorLog = log.New(io.Discard, "", 0)
}

// record keeps an internal failure, without content.
func (p *Proxy) record(f shim.Failure) {
	f.Adapter = "agui"
	if p.Errors != nil {
		p.Errors.Record(f)
	}
}

// readInput reads a JSON request body (the AG-UI run input) for its
// threadId and runId. A body within MaxInput is forwarded from the bytes
// read, so the transport never reads the live body again: the server
// closes it once the response starts, and a transport reading a closed
// body tears the upstream connection down, cutting the stream short. A
// longer body is forwarded as the bytes read followed by the rest.
func (p *Proxy) readInput(out *http.Request) scope {
	limit := p.MaxInput
	if limit <= 0 {
		limit = DefaultMaxInput
	}
	head, ok := httptee.JSONBody(out, limit)
	if !ok {
		return scope{}
	}
	return scope{thread: mapping.Str(head, "threadId"), run: mapping.Str(head, "runId")}
}

// observe wraps an event-stream response body with the stream's observer.
func (p *Proxy) observe(resp *http.Response) error {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" || resp.Body == nil {
		return nil
	}
	sc, _ := resp.Request.Context().Value(scopeKey{}).(scope)
	sc.stream = p.Nonce()
	p.stats.Streams.Add(1)
	s := newStream(p, sc)
	p.mu.Lock()
	if p.last == nil {
		p.last = map[string]*stream{}
	}
	s.prev, p.last[sc.thread] = p.last[sc.thread], s
	p.mu.Unlock()
	p.streams.Add(1)
	go func() {
		defer p.streams.Done()
		s.run()
		p.mu.Lock()
		if p.last[sc.thread] == s {
			delete(p.last, sc.thread)
		}
		p.mu.Unlock()
	}()
	ctx := resp.Request.Context() // done when the UI went away
	resp.Body = &httptee.Body{RC: resp.Body, Feed: s.feed, End: func(err error) {
		switch {
		case err == nil:
			s.end = endUpstreamEnded
		case errors.Is(err, httptee.ErrClosed) || ctx.Err() != nil:
			// Closed before its end: the proxy stops reading when it
			// cannot write to the UI.
			s.end = endClientAborted
		default:
			s.end = endUpstreamDropped
		}
		close(s.done)
	}}
	return nil
}
