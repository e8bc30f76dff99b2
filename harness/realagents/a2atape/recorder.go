package a2atape

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"

	"github.com/tidwall/gjson"
)

// Recorder is a reverse proxy in front of a real A2A server that writes
// down every JSON-RPC exchange passing through it, in the order the
// requests arrived; an answer's bytes are kept as they were relayed.
type Recorder struct {
	rp *httputil.ReverseProxy

	mu sync.Mutex
	xs []*Exchange
}

// NewRecorder records the exchanges with the server at upstream.
func NewRecorder(upstream *url.URL) *Recorder {
	r := &Recorder{}
	r.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			out := pr.Out
			if out.Method != http.MethodPost || out.Body == nil {
				return
			}
			body, _ := io.ReadAll(out.Body)
			out.Body = io.NopCloser(bytes.NewReader(body))
			out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			x := &Exchange{Method: gjson.GetBytes(body, "method").String(), Path: out.URL.Path,
				Version: out.Header.Get("A2A-Version"), Request: append([]byte(nil), body...)}
			r.mu.Lock()
			r.xs = append(r.xs, x)
			r.mu.Unlock()
			pr.Out = out.WithContext(withExchange(out.Context(), x))
		},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			x := exchangeOf(resp.Request.Context())
			if x == nil {
				return nil
			}
			r.mu.Lock()
			x.Status, x.Type = resp.StatusCode, resp.Header.Get("Content-Type")
			r.mu.Unlock()
			resp.Body = &recordBody{rc: resp.Body, r: r, x: x}
			return nil
		},
	}
	return r
}

// ServeHTTP relays and records.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.rp.ServeHTTP(w, req) }

// Exchanges returns a copy of what was recorded so far.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Exchange, len(r.xs))
	for i, x := range r.xs {
		out[i] = *x
	}
	return out
}

// Seen counts the recorded requests of a JSON-RPC method.
func (r *Recorder) Seen(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.xs {
		if x.Method == method {
			n++
		}
	}
	return n
}

// recordBody appends the relayed answer's bytes to its exchange.
type recordBody struct {
	rc io.ReadCloser
	r  *Recorder
	x  *Exchange
}

func (b *recordBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.r.mu.Lock()
		b.x.Body += string(p[:n])
		b.r.mu.Unlock()
	}
	return n, err
}

func (b *recordBody) Close() error { return b.rc.Close() }
