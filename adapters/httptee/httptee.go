// Package httptee holds what the HTTP tees (adapters/agui, adapters/a2a)
// share around net/http/httputil.ReverseProxy, so that both stay byte
// transparent the same way: the upstream gets the client's own headers
// (no Accept-Encoding of Go's own), and a request body read for
// observation is forwarded from the bytes read, never read twice; an
// upstream failure is answered and recorded alike, and an answer's body is
// shown to the tee's observer as it is relayed.
package httptee

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"

	"github.com/aep-hook/aep-hook/shim"
)

// Transport is a private clone of http.DefaultTransport that asks for no
// compression of its own: the upstream gets the client's Accept-Encoding,
// or none.
func Transport() http.RoundTripper {
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	c := dt.Clone()
	c.DisableCompression = true
	return c
}

// JSONBody reads the JSON body of a POST about to be forwarded (out, in a
// ReverseProxy's Rewrite) when it is at most limit bytes, and makes the
// bytes read what is forwarded: the transport never reads the live body
// again (the server may close it once its answer started, and a transport
// reading a closed body tears the upstream connection down). A longer
// body is forwarded as the bytes read followed by the rest, and ok is
// false; so it is for a request that is not a JSON POST (nothing read).
func JSONBody(out *http.Request, limit int64) (body []byte, ok bool) {
	if out.Body == nil || out.Body == http.NoBody || out.Method != http.MethodPost {
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(out.Header.Get("Content-Type")); mt != "application/json" {
		return nil, false
	}
	head, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil || int64(len(head)) > limit {
		rest := out.Body
		out.Body = readCloser{io.MultiReader(bytes.NewReader(head), rest), rest}
		return head, false
	}
	out.Body = io.NopCloser(bytes.NewReader(head))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(head)), nil }
	return head, true
}

// readCloser reads r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (rc readCloser) Close() error { return rc.c.Close() }

// ReverseProxy is a tee's reverse proxy to upstream over tr (nil:
// Transport()). A request goes on as the client sent it (hop-by-hop
// headers aside, as for any proxy): no X-Forwarded-* is added; rewrite,
// when set, looks at it first (reading its body with JSONBody, putting
// what it learnt into pr.Out's context). Every answer is flushed to the
// client as it arrives and shown to observe (ModifyResponse) first. An
// upstream failure is answered 502, as a direct connection to a dead
// server would fail, and recorded unless the client went away. What the
// proxy itself would log (a relay cut while copying a body) is recorded
// too, never printed: a tee's stderr belongs to whoever runs it.
func ReverseProxy(upstream *url.URL, tr http.RoundTripper, rewrite func(pr *httputil.ProxyRequest),
	observe func(*http.Response) error, record func(shim.Failure)) *httputil.ReverseProxy {
	if tr == nil {
		tr = Transport()
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			if rewrite != nil {
				rewrite(pr)
			}
		},
		FlushInterval:  -1,
		Transport:      tr,
		ModifyResponse: observe,
		ErrorLog:       log.New(failureWriter(record), "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) || r.Context().Err() != nil {
				return
			}
			record(shim.Failure{Stage: "upstream", Error: fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err)})
			w.WriteHeader(http.StatusBadGateway)
		},
	}
}

// failureWriter records each line written to it (a log.Logger's output)
// as a relay failure.
type failureWriter func(shim.Failure)

func (record failureWriter) Write(p []byte) (int, error) {
	record(shim.Failure{Stage: "relay", Error: string(bytes.TrimRight(p, "\n"))})
	return len(p), nil
}

// ErrClosed is how a Body ends that was closed before its end was read:
// the client went away, or the proxy stopped relaying.
var ErrClosed = errors.New("closed before its end")

// Body relays an upstream answer's body unchanged, showing the bytes read
// to Feed on the way (Feed must not block), and tells End once how the
// body ended: nil at its end, ErrClosed when it was closed first, else
// the read error.
type Body struct {
	RC   io.ReadCloser
	Feed func([]byte)
	End  func(error)
	once sync.Once
}

// Read reads from the upstream body.
func (b *Body) Read(buf []byte) (int, error) {
	n, err := b.RC.Read(buf)
	if n > 0 {
		b.Feed(buf[:n])
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			b.finish(nil)
		} else {
			b.finish(err)
		}
	}
	return n, err
}

// Close closes the upstream body.
func (b *Body) Close() error {
	err := b.RC.Close()
	b.finish(ErrClosed)
	return err
}

func (b *Body) finish(err error) { b.once.Do(func() { b.End(err) }) }
