// Package httptee holds what the HTTP tees (adapters/agui, adapters/a2a)
// share around net/http/httputil.ReverseProxy, so that both stay byte
// transparent the same way: the upstream gets the client's own headers
// (no Accept-Encoding of Go's own), and a request body read for
// observation is forwarded from the bytes read, never read twice.
package httptee

import (
	"bytes"
	"io"
	"mime"
	"net/http"
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
