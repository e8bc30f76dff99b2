package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/sse"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Follower follows one task of an A2A server (a follow.Source for the
// follow.Runner): Open subscribes to the task's event stream
// (SubscribeToTask; tasks/resubscribe for a v0.3 server), CatchUp reads the
// task as it is now (GetTask), so a follower attaching late or
// reconnecting records what it missed; the table applies snapshots
// idempotently. Done is closed once the follower saw the task reach a
// terminal state: nothing more will happen to it.
type Follower struct {
	// Endpoint is the server's JSON-RPC URL (the agent card's interface
	// url, e.g. http://127.0.0.1:41241/a2a/jsonrpc).
	Endpoint *url.URL
	// Task is the task followed.
	Task string
	// Legacy speaks v0.3 (tasks/resubscribe, tasks/get, no A2A-Version
	// header) instead of v1.0.
	Legacy bool
	// Header is added to every request (an Authorization header).
	Header http.Header
	// Client makes the requests; nil uses a client without timeouts (the
	// stream is long-lived; the Runner's stall watch bounds it).
	Client *http.Client
	// MaxEvent bounds one stream event's data; a longer event is skipped
	// and recorded in Errors.
	MaxEvent int
	// Errors keeps what the follower notices itself, without content;
	// nil drops it.
	Errors shim.Recorder

	seq      atomic.Int64
	mu       sync.Mutex
	ctx      string // the task's context, once known
	doneOnce sync.Once
	done     chan struct{}
	initOnce sync.Once
}

// Done is closed when the task reached a terminal state.
func (f *Follower) Done() <-chan struct{} {
	f.initOnce.Do(func() { f.done = make(chan struct{}) })
	return f.done
}

func (f *Follower) method(v1, v03 string) string {
	if f.Legacy {
		return v03
	}
	return v1
}

// call posts one JSON-RPC request and returns the answer.
func (f *Follower) call(ctx context.Context, method string, params any, accept string) (*http.Response, string, error) {
	id := fmt.Sprintf("aep-follow-%d", f.seq.Add(1))
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.Endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	for k, vs := range f.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if !f.Legacy {
		req.Header.Set("A2A-Version", "1.0")
	}
	c := f.Client
	if c == nil {
		c = &http.Client{}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", method, f.Endpoint.Redacted(), err)
	}
	return resp, id, nil
}

// moment is one answer of the follower's own requests as the table's
// moment; it learns the task's context and notices its terminal.
func (f *Follower) moment(kind mapping.Kind, method, id string, msg []byte) (mapping.Moment, bool) {
	r := gjson.GetManyBytes(msg, "result", "error")
	if !gjson.ValidBytes(msg) || (!r[0].IsObject() && !r[1].Exists()) {
		return mapping.Moment{}, false
	}
	fs := mapping.Facts{Kind: kind, Method: method, ID: id, Run: f.Task}
	if r[0].IsObject() {
		var task string
		fs.Name, fs.Session, task = resultIDs(r[0])
		if task != "" {
			fs.Run = task
		}
		switch mapping.A2AState(payload(r[0], fs.Name).Get("status.state").String()) {
		case "completed", "failed", "rejected", "canceled":
			f.Done()
			f.doneOnce.Do(func() { close(f.done) })
		}
	}
	f.mu.Lock()
	if fs.Session == "" {
		fs.Session = f.ctx
	} else {
		f.ctx = fs.Session
	}
	f.mu.Unlock()
	return mapping.Moment{Raw: msg, Facts: fs}, true
}

// CatchUp reads the task as the server has it now.
func (f *Follower) CatchUp(ctx context.Context, _ string) ([]mapping.Moment, error) {
	method := f.method("GetTask", "tasks/get")
	resp, id, err := f.call(ctx, method, map[string]any{"id": f.Task, "historyLength": 0}, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if len(b) > DefaultMaxBody {
		return nil, fmt.Errorf("%s: answer over %d bytes", method, DefaultMaxBody)
	}
	m, ok := f.moment(mapping.KindResponse, method, id, b)
	if !ok {
		return nil, fmt.Errorf("%s: HTTP %d, not a JSON-RPC answer", method, resp.StatusCode)
	}
	return []mapping.Moment{m}, nil
}

// Open subscribes to the task's events.
func (f *Follower) Open(ctx context.Context) (follow.Stream, error) {
	method := f.method("SubscribeToTask", "tasks/resubscribe")
	resp, id, err := f.call(ctx, method, map[string]any{"id": f.Task}, "text/event-stream")
	if err != nil {
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		// A refusal (the task ended, the server does not stream): the
		// JSON-RPC error is the stream's only message.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return &answerStream{f: f, method: method, id: id, body: b, status: resp.StatusCode}, nil
	}
	return &subscription{f: f, method: method, id: id, body: resp.Body,
		rd: sse.NewReader(resp.Body, maxOr(f.MaxEvent, DefaultMaxEvent))}, nil
}

// subscription is one open SubscribeToTask stream.
type subscription struct {
	f          *Follower
	method, id string
	body       io.ReadCloser
	rd         *sse.Reader
}

func (s *subscription) Next() (follow.Item, error) {
	for {
		ev, err := s.rd.Next()
		var tooLong *sse.TooLongError
		if errors.As(err, &tooLong) {
			if s.f.Errors != nil {
				s.f.Errors.Record(tooLong.Failure("a2a"))
			}
			continue
		}
		if err != nil {
			return follow.Item{}, err
		}
		m, ok := s.f.moment(mapping.KindEvent, s.method, s.id, ev.Data)
		if !ok {
			return follow.Item{}, nil // a keep-alive for the stall watch
		}
		return follow.Item{Moments: []mapping.Moment{m}}, nil
	}
}

func (s *subscription) Close() error { return s.body.Close() }

// answerStream is a subscription the server answered with JSON: its one
// message, then the end.
type answerStream struct {
	f          *Follower
	method, id string
	body       []byte
	status     int
	read       bool
}

func (s *answerStream) Next() (follow.Item, error) {
	if s.read {
		return follow.Item{}, fmt.Errorf("%s: HTTP %d answered without a stream", s.method, s.status)
	}
	s.read = true
	if m, ok := s.f.moment(mapping.KindResponse, s.method, s.id, s.body); ok {
		return follow.Item{Moments: []mapping.Moment{m}}, nil
	}
	return follow.Item{}, fmt.Errorf("%s: HTTP %d answered without a stream", s.method, s.status)
}

func (s *answerStream) Close() error { return nil }
