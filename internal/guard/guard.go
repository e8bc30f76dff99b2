// Package guard is the one gate in front of every HTTP and WebSocket
// listener aep-hook opens (the relay, the OTLP sidecar, the HTTP tees): a
// request passes only when its Host names this listener, its browser Origin
// (if any) is the listener's own or explicitly allowed, and, where a token
// is configured, it carries that token.
//
// The Host check is what defeats DNS rebinding: a page the user visits can
// make its own host name resolve to 127.0.0.1, after which the browser
// treats the listener as same-origin, but it still sends the attacker's
// name in Host. The Origin check defeats cross-site requests that need no
// preflight (a form POST, a simple fetch, a WebSocket handshake). Tokens
// are compared in constant time and are never handed on: an
// access_token query parameter is removed from the request before the
// wrapped handler (and anything it logs) sees the URL.
package guard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Guard is the policy of one listener. The zero value checks Host and
// Origin and requires no token.
type Guard struct {
	// Hosts are extra names a request may address in Host, as "name" (any
	// port) or "name:port": the names of a reverse proxy in front of the
	// listener, or of the machine when it listens off loopback. The
	// listener's own IP literal (and "localhost" on a loopback listener) is
	// always accepted.
	Hosts []string
	// Origins are browser origins ("scheme://host[:port]") allowed besides
	// the listener's own; "*" is not special.
	Origins []string
	// Auth decides a request's token: it gets the presented token ("" when
	// none was presented) and returns the context the handler runs with,
	// or false to refuse with 401. Nil means no token is checked.
	Auth func(ctx context.Context, token string) (context.Context, bool)
	// Public reports requests that pass without a valid token (Host and
	// Origin are still checked); Auth still sees their token, if any, so
	// the handler can tell an authorized caller apart.
	Public func(r *http.Request) bool
	// QueryToken accepts the token as an access_token query parameter,
	// for browser clients (EventSource) that cannot set a header.
	QueryToken bool
	// Cookie, when set, names a cookie that may carry the token.
	Cookie string
	// ProxyAuthorization also takes the token from a Proxy-Authorization
	// Bearer header, looked at first: a tee in front of a server that has
	// credentials of its own leaves the client's Authorization header to
	// that server.
	ProxyAuthorization bool
	// Strip removes the credential a request passed with (the header or
	// cookie that carried the token) before the handler sees it, so a
	// proxy behind the guard never hands the listener's token on.
	Strip bool
	// Refused, when set, is told of every refused request and why (for an
	// audit log); reason never contains the token.
	Refused func(r *http.Request, status int, reason string)
}

// Wrap returns h behind the guard.
func (g *Guard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, from := g.token(r)
		if reason := g.checkHost(r); reason != "" {
			g.refuse(w, r, http.StatusForbidden, reason)
			return
		}
		if reason := g.checkOrigin(r); reason != "" {
			g.refuse(w, r, http.StatusForbidden, reason)
			return
		}
		if g.Auth != nil {
			ctx, ok := g.Auth(r.Context(), token)
			switch {
			case ok:
				r = r.WithContext(ctx)
				if g.Strip {
					g.strip(r, from)
				}
			case g.Public != nil && g.Public(r):
			default:
				w.Header().Set("WWW-Authenticate", `Bearer realm="aep-hook"`)
				reason := "missing bearer token"
				if token != "" {
					reason = "invalid bearer token"
				}
				g.refuse(w, r, http.StatusUnauthorized, reason)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, status int, reason string) {
	if g.Refused != nil {
		g.Refused(r, status, reason)
	}
	http.Error(w, reason, status)
}

// Where a request's token came from.
const (
	fromNone = iota
	fromProxy
	fromHeader
	fromCookie
	fromQuery
)

// token takes the presented token off the request: the Proxy-Authorization
// header first (if allowed), then the Authorization header, then (if
// allowed) the cookie and the access_token query parameter, which is
// removed from the URL either way so no later log line can carry it.
func (g *Guard) token(r *http.Request) (string, int) {
	tok, from := "", fromNone
	if g.ProxyAuthorization {
		if t := bearer(r.Header.Get("Proxy-Authorization")); t != "" {
			tok, from = t, fromProxy
		}
	}
	if tok == "" {
		if t := bearer(r.Header.Get("Authorization")); t != "" {
			tok, from = t, fromHeader
		}
	}
	if tok == "" && g.Cookie != "" {
		if c, err := r.Cookie(g.Cookie); err == nil && c.Value != "" {
			tok, from = c.Value, fromCookie
		}
	}
	if strings.Contains(r.URL.RawQuery, "access_token") {
		q := r.URL.Query()
		if v := q.Get("access_token"); v != "" && tok == "" && g.QueryToken {
			tok, from = v, fromQuery
		}
		q.Del("access_token")
		r.URL.RawQuery = q.Encode()
		r.RequestURI = r.URL.RequestURI()
	}
	return tok, from
}

// bearer returns the token of an "Authorization: Bearer T" value.
func bearer(v string) string {
	if scheme, rest, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "bearer") {
		return strings.TrimSpace(rest)
	}
	return ""
}

// strip removes the credential the request passed with.
func (g *Guard) strip(r *http.Request, from int) {
	switch from {
	case fromProxy:
		r.Header.Del("Proxy-Authorization")
	case fromHeader:
		r.Header.Del("Authorization")
	case fromCookie:
		cs := r.Cookies()
		r.Header.Del("Cookie")
		for _, c := range cs {
			if c.Name != g.Cookie {
				r.AddCookie(c)
			}
		}
	}
}

// checkHost accepts the listener's own address (IP literal and port, as the
// connection arrived), localhost on a loopback listener, and the configured
// names.
func (g *Guard) checkHost(r *http.Request) string {
	host, port := splitHost(r.Host)
	if host == "" {
		return "host not allowed: empty Host"
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	lip, lport := addrOf(local)
	for _, h := range g.Hosts {
		name, p := splitHost(h)
		if strings.EqualFold(name, host) && (p == "" || p == port) {
			return ""
		}
	}
	if port == "" {
		port = "80"
	}
	if lport != 0 && port != strconv.Itoa(lport) {
		return "host not allowed: " + safe(r.Host)
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if !lip.IsValid() || ip.Unmap() == lip.Unmap() {
			return ""
		}
		return "host not allowed: " + safe(r.Host)
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") && lip.IsValid() && lip.IsLoopback() {
		return ""
	}
	return "host not allowed: " + safe(r.Host)
}

// checkOrigin refuses a browser request from another origin: an Origin
// header must be the listener's own (the Host just checked) or allowed;
// without one, a state-changing request the browser marks cross-site is
// refused too.
func (g *Guard) checkOrigin(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		site := r.Header.Get("Sec-Fetch-Site")
		if site != "" && site != "same-origin" && site != "none" && !safeMethod(r.Method) {
			return "cross-site request refused"
		}
		return ""
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) && (u.Scheme == "http" || u.Scheme == "https") {
		return ""
	}
	for _, o := range g.Origins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	return "origin not allowed: " + safe(origin)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// splitHost splits "host[:port]" (IPv6 in brackets) without failing on a
// missing port.
func splitHost(hp string) (host, port string) {
	if h, p, err := net.SplitHostPort(hp); err == nil {
		return h, p
	}
	return strings.Trim(hp, "[]"), ""
}

func addrOf(a net.Addr) (netip.Addr, int) {
	if tcp, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(tcp.IP)
		return ip, tcp.Port
	}
	return netip.Addr{}, 0
}

// safe shortens a header value for an error line and keeps it printable.
func safe(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// Loopback reports whether addr (host:port, as given to a listen flag)
// binds to loopback only. A host name other than localhost, or an empty or
// unspecified host, is not loopback.
func Loopback(addr string) bool {
	host, _ := splitHost(addr)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Tokens is a set of secrets compared in constant time: Lookup hashes the
// presented token and compares it with every stored hash, so neither the
// time taken nor an early exit tells how much of a guess was right.
type Tokens[T any] struct {
	sums []([sha256.Size]byte)
	vals []T
}

// Add stores a secret and the value Lookup returns for it.
func (t *Tokens[T]) Add(secret string, v T) {
	t.sums = append(t.sums, sha256.Sum256([]byte(secret)))
	t.vals = append(t.vals, v)
}

// Len is the number of secrets stored.
func (t *Tokens[T]) Len() int { return len(t.sums) }

// Lookup returns the value stored for secret.
func (t *Tokens[T]) Lookup(secret string) (T, bool) {
	var zero T
	if secret == "" {
		return zero, false
	}
	sum := sha256.Sum256([]byte(secret))
	found := -1
	for i := range t.sums {
		if subtle.ConstantTimeCompare(sum[:], t.sums[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return zero, false
	}
	return t.vals[found], true
}

// Bearer is the Auth of a listener with one shared secret (the per-user
// token): requests must present it.
func Bearer(secret string) func(context.Context, string) (context.Context, bool) {
	var t Tokens[struct{}]
	t.Add(secret, struct{}{})
	return func(ctx context.Context, tok string) (context.Context, bool) {
		_, ok := t.Lookup(tok)
		return ctx, ok
	}
}
