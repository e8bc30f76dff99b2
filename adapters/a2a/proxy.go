package a2a

import (
	"context"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/httptee"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Defaults for a Proxy's zero fields.
const (
	DefaultMaxEvent    = 8 << 20
	DefaultMaxBody     = 8 << 20
	DefaultQueueChunks = 1024
	// DefaultQueueBatches bounds the proxy's observation queue.
	DefaultQueueBatches = 4096
	// maxTasks bounds the task → context index the proxy keeps for
	// messages that name a task but not its context (a CancelTask).
	maxTasks = 4096
	// maxBatch bounds the moments handed to the handler at once.
	maxBatch = 256
)

// Stats counts what the proxy saw; read it with the atomic loads.
type Stats struct {
	Exchanges atomic.Int64 // JSON-RPC requests observed
	Streams   atomic.Int64 // event-stream answers observed
	Events    atomic.Int64 // stream events framed
	Lost      atomic.Int64 // answers whose observation was given up (queue full, over the bound)
	Invalid   atomic.Int64 // events or bodies that are not JSON-RPC, relayed unobserved
	Observed  atomic.Int64 // moments handed to the handler
	Failed    atomic.Int64 // handler errors
}

// Proxy is the A2A tee: an http.Handler forwarding every request to
// Upstream and relaying every answer unchanged, observing the JSON-RPC
// traffic on the side. Observation never holds up the relay: an answer
// whose observation falls behind (its queue full) or passes a bound is
// relayed in full and recorded as lost.
type Proxy struct {
	// Upstream is the A2A server's base URL; request paths are joined to
	// it.
	Upstream *url.URL
	// Handle receives the moments (shim.Emitter.Handler); nil only frames
	// and counts.
	Handle shim.Handler
	// Errors records internal failures; nil discards them.
	Errors shim.Recorder
	// Deltas keeps appended artifact chunks (the --deltas opt-in).
	Deltas bool
	// MaxEvent bounds one observed stream event's data.
	MaxEvent int
	// MaxBody bounds the JSON request and answer bodies observed; a longer
	// body is relayed unobserved.
	MaxBody int64
	// QueueChunks bounds each stream's backlog of relayed chunks waiting
	// to be observed.
	QueueChunks int
	// Transport reaches the upstream; nil uses a private clone of
	// http.DefaultTransport asking for no compression of its own.
	Transport http.RoundTripper
	// Nonce mints each moment's nonce; nil uses ULIDs.
	Nonce func() string
	// Instance is this tee's token (Facts.Instance): JSON-RPC ids are
	// the client's and repeat across clients and restarts.
	Instance string

	once     sync.Once
	rp       *httputil.ReverseProxy
	observed sync.WaitGroup
	stats    Stats
	tasks    taskIndex
	// q is the one ordered observation queue: every exchange's moments
	// reach the handler in the order they were queued, so a CancelTask
	// queued when it was forwarded precedes the cancellation the server's
	// stream reports after it.
	q chan []mapping.Moment
	// flush asks the queue's goroutine to say when it drained.
	flush chan chan struct{}
	// streams are the stream observers running (see catchUp).
	streamsMu sync.Mutex
	streams   map[*streamObserver]struct{}
	// waiting, when set (by tests), is called as a request starts
	// waiting for a stream's observer to catch up.
	waiting func()
}

// Stats returns the proxy's counters.
func (p *Proxy) Stats() *Stats { return &p.stats }

// Wait blocks until every answer relayed so far has been observed and
// its moments handed to the handler.
func (p *Proxy) Wait() {
	p.once.Do(p.init)
	p.observed.Wait()
	done := make(chan struct{})
	p.flush <- done
	<-done
}

// ServeHTTP forwards r to the upstream and relays the answer.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.once.Do(p.init)
	p.rp.ServeHTTP(w, r)
}

func (p *Proxy) init() {
	if p.Nonce == nil {
		p.Nonce = shim.NewIDs().Now
	}
	if p.Instance == "" {
		p.Instance = p.Nonce()
	}
	p.tasks.init(maxTasks)
	p.streams = map[*streamObserver]struct{}{}
	p.q = make(chan []mapping.Moment, DefaultQueueBatches)
	p.flush = make(chan chan struct{})
	go p.loop()
	p.rp = httptee.ReverseProxy(p.Upstream, p.Transport, func(pr *httputil.ProxyRequest) {
		if x := p.readRequest(pr.Out); x != nil {
			pr.Out = pr.Out.WithContext(context.WithValue(pr.Out.Context(), exchangeKey{}, x))
		}
	}, p.observe, p.record)
}

// exchangeKey carries a request's exchange from Rewrite to
// ModifyResponse.
type exchangeKey struct{}

// exchange is one observed JSON-RPC request and what its answer told
// about it.
type exchange struct {
	req        []byte
	method, id string
	ctx, task  string
	// client is the client's request context: done when it went away.
	client context.Context
	// sent says the request moment was handed over already.
	sent bool
}

// readRequest reads a JSON-RPC request body within MaxBody (forwarded from
// the bytes read: httptee.JSONBody); a longer body is relayed unobserved.
func (p *Proxy) readRequest(out *http.Request) *exchange {
	head, ok := httptee.JSONBody(out, p.maxBody())
	if !ok {
		if int64(len(head)) > p.maxBody() {
			p.stats.Lost.Add(1)
			p.record(shim.Failure{Stage: "parse", Bytes: len(head), Error: "request body over the bound relayed unobserved"})
		}
		return nil
	}
	r := gjson.GetManyBytes(head, "method", "id")
	if !gjson.ValidBytes(head) || r[0].Type != gjson.String {
		return nil // not a JSON-RPC request (a batch, another API): relayed only
	}
	x := &exchange{req: head, method: r[0].Str, id: wireID(r[1]), client: out.Context()}
	x.ctx, x.task = requestIDs(head)
	p.catchUp()
	if x.ctx == "" {
		x.ctx = p.tasks.get(x.task)
	}
	p.stats.Exchanges.Add(1)
	if x.ctx != "" && x.task != "" {
		// Everything the request belongs to is known: it is observed as
		// it is forwarded, before anything the server does about it.
		x.sent = true
		p.hand([]mapping.Moment{x.request()})
	}
	return x
}

// catchUpWait bounds a request's wait in catchUp: the observers only
// parse and queue, so only one stuck recording a failure (a hung disk)
// could hold a request that long.
const catchUpWait = time.Second

// catchUp waits until every stream's observer has handed over what the
// relay passed on so far: a request a client sends after reading an
// answer (the answer to an input-required task, a cancel) is observed
// after it, in the order the client saw them, and the tasks index knows
// what it told. The wait is the parsing of a backlog, rarely any at all.
func (p *Proxy) catchUp() {
	type mark struct {
		s   *streamObserver
		fed int
	}
	p.streamsMu.Lock()
	marks := make([]mark, 0, len(p.streams))
	for s := range p.streams {
		marks = append(marks, mark{s, s.queued()})
	}
	p.streamsMu.Unlock()
	if len(marks) == 0 {
		return
	}
	if p.waiting != nil {
		p.waiting()
	}
	giveUp := time.NewTimer(catchUpWait)
	defer giveUp.Stop()
	for _, m := range marks {
		if !m.s.caughtUp(m.fed, giveUp.C) {
			return
		}
	}
}

func (p *Proxy) maxBody() int64 {
	if p.MaxBody > 0 {
		return p.MaxBody
	}
	return DefaultMaxBody
}

// observe wraps the answer to an observed request with its observer.
func (p *Proxy) observe(resp *http.Response) error {
	x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if x == nil || resp.Body == nil {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var o observer
	p.observed.Add(1) // done when the observer has handed everything over
	switch mt {
	case "text/event-stream":
		p.stats.Streams.Add(1)
		o = newStreamObserver(p, x)
	case "application/json":
		o = &bodyObserver{p: p, x: x, limit: p.maxBody()}
	default:
		// Not an answer the table can read (an HTTP error page): the
		// request alone is handed over.
		o = &bodyObserver{p: p, x: x, limit: -1}
	}
	resp.Body = &httptee.Body{RC: resp.Body, Feed: o.feed, End: o.end}
	return nil
}

// record keeps an internal failure, without content.
func (p *Proxy) record(f shim.Failure) {
	f.Adapter = "a2a"
	if p.Errors != nil {
		p.Errors.Record(f)
	}
}

// observer sees an answer's bytes as they are relayed.
type observer interface {
	// feed takes the next relayed bytes; it must not block.
	feed(b []byte)
	// end is called once when the body ended (err nil at its end,
	// httptee.ErrClosed when closed first, else why it broke).
	end(err error)
}

// hand queues moments for the handler without waiting; a full queue
// drops them and records the loss.
func (p *Proxy) hand(ms []mapping.Moment) {
	if len(ms) == 0 {
		return
	}
	for i := range ms {
		ms[i].Nonce = p.Nonce()
		ms[i].Deltas = p.Deltas
		ms[i].Facts.Instance = p.Instance
	}
	select {
	case p.q <- ms:
	default:
		p.stats.Lost.Add(int64(len(ms)))
		p.record(shim.Failure{Stage: "queue", Lost: len(ms), Error: "observation queue full: moments relayed but not observed"})
	}
}

// loop hands the queued moments to the handler in order, a batch at a
// time.
func (p *Proxy) loop() {
	for {
		select {
		case ms := <-p.q:
		gather:
			for len(ms) < maxBatch {
				select {
				case more := <-p.q:
					ms = append(ms, more...)
				default:
					break gather
				}
			}
			p.deliver(ms)
		case done := <-p.flush:
			for {
				select {
				case ms := <-p.q:
					p.deliver(ms)
					continue
				default:
				}
				break
			}
			close(done)
		}
	}
}

// deliver gives moments to the handler, recording failures without
// content.
func (p *Proxy) deliver(ms []mapping.Moment) {
	if p.Handle == nil {
		return
	}
	p.stats.Observed.Add(int64(len(ms)))
	p.Handle.Deliver(ms, func(m mapping.Moment, err error) {
		p.stats.Failed.Add(1)
		p.record(shim.Failure{Hook: mapping.A2AMethod(m.Facts.Method), Stage: "emit", Bytes: len(m.Raw), Error: err.Error()})
	})
}

// request is the exchange's request moment, with the context and task its
// answer named when the request did not.
func (x *exchange) request() mapping.Moment {
	return mapping.Moment{Raw: x.req, Facts: mapping.Facts{Kind: mapping.KindRequest,
		Method: x.method, ID: x.id, Session: x.ctx, Run: x.task}}
}

// answer builds the moment of one JSON-RPC answer (a whole JSON answer,
// or one stream event) and learns the exchange's context and task from
// it; ok is false when msg is not a JSON-RPC answer.
func (p *Proxy) answer(x *exchange, kind mapping.Kind, msg []byte) (mapping.Moment, bool) {
	if !gjson.ValidBytes(msg) {
		return mapping.Moment{}, false
	}
	r := gjson.GetManyBytes(msg, "result", "error")
	if !r[0].IsObject() && !r[1].Exists() {
		return mapping.Moment{}, false
	}
	f := mapping.Facts{Kind: kind, Method: x.method, ID: x.id}
	if r[0].IsObject() {
		f.Name, f.Session, f.Run = resultIDs(r[0])
	}
	if f.Run == "" && f.Name != CaseMessage {
		f.Run = x.task
	}
	if f.Session == "" {
		f.Session = firstSet(x.ctx, p.tasks.get(f.Run))
	}
	if f.Session != "" && f.Run != "" {
		p.tasks.put(f.Run, f.Session)
	}
	if x.ctx == "" {
		x.ctx = f.Session
	}
	if x.task == "" && f.Name != CaseMessage {
		x.task = f.Run
	}
	return mapping.Moment{Raw: msg, Facts: f}, true
}

func firstSet(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// bodyObserver keeps a JSON answer (within its limit) and hands the
// request and the answer over at its end.
type bodyObserver struct {
	p     *Proxy
	x     *exchange
	limit int64 // < 0: the answer is not observed, only the request
	buf   []byte
	over  bool
}

func (o *bodyObserver) feed(b []byte) {
	if o.limit < 0 || o.over {
		return
	}
	if int64(len(o.buf)+len(b)) > o.limit {
		o.over, o.buf = true, nil
		return
	}
	o.buf = append(o.buf, b...)
}

func (o *bodyObserver) end(err error) {
	p, x := o.p, o.x
	var ms []mapping.Moment
	var ans mapping.Moment
	ok := false
	switch {
	case o.over:
		p.stats.Lost.Add(1)
		p.record(shim.Failure{Hook: x.method, Stage: "parse", Error: "answer over the bound relayed unobserved"})
	case o.limit >= 0 && err == nil:
		if ans, ok = p.answer(x, mapping.KindResponse, o.buf); !ok {
			p.stats.Invalid.Add(1)
			p.record(shim.Failure{Hook: x.method, Stage: "parse", Bytes: len(o.buf), Error: "answer is not a JSON-RPC response; relayed unobserved"})
		}
	}
	if !x.sent {
		ms = append(ms, x.request())
	}
	if ok {
		ms = append(ms, ans)
	}
	p.hand(ms)
	p.observed.Done()
}
