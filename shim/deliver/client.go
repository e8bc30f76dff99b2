package deliver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrRedirect is how a send ends that the destination redirected to
// another origin: the request is not followed there, since it would carry
// the bearer token (Go's client keeps Authorization for the same host
// name whatever the scheme and port) to a place it was not meant for.
var ErrRedirect = errors.New("refusing to follow a redirect to another origin (scheme, host or port) with the credentials; set --out to the collector's own URL")

// NewClient returns the HTTP client every delivery uses (`ship` and the
// hooks' inline delivery alike): requests bounded by timeout (0: the
// caller's context alone bounds them), redirects followed only within
// the destination's own origin.
func NewClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, CheckRedirect: sameOrigin}
}

// guarded returns c with the delivery redirect policy in force, whatever
// policy c had (a caller's own client included).
func guarded(c *http.Client) *http.Client {
	if c == nil {
		return NewClient(0)
	}
	g := *c
	g.CheckRedirect = sameOrigin
	return &g
}

// sameOrigin follows a redirect only to the origin of the first request:
// the same scheme (so never https to http), host and port.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL) != origin(via[0].URL) {
		return fmt.Errorf("redirected to %s: %w", origin(req.URL), ErrRedirect)
	}
	return nil
}

// origin is a URL's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
