package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/consumer/relay/buffer"
	"github.com/aep-hook/aep-hook/consumer/relay/store"
	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/shim"
)

// CookieName is the cookie a signed-in browser carries its token in.
const CookieName = "aep_relay"

// Server is one relay.
type Server struct {
	opts    Options
	dir     string // Home/relay
	hub     *hub
	store   *store.Store
	audit   *auditLog
	errs    *shim.ErrorLog
	lock    *os.File
	started time.Time

	streams sync.WaitGroup // streaming handlers, drained at shutdown
	loaded  loadStats
}

// New opens the relay's state under opts.Home (taking its lock: one relay
// per home) and refills the replay buffers from the store and the local
// logs' tails. Close releases it.
func New(opts Options) (*Server, error) {
	opts.defaults()
	if opts.Home == "" {
		return nil, errors.New("relay: no home")
	}
	s := &Server{opts: opts, dir: filepath.Join(opts.Home, "relay"), started: opts.Now()}
	lock, err := store.Lock(s.dir)
	if err != nil {
		return nil, err
	}
	s.lock = lock
	a, err := openAudit(filepath.Join(s.dir, "audit.jsonl"), opts.Now)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.audit = a
	s.errs = shim.NewErrorLog(opts.Home)
	s.store = &store.Store{Root: filepath.Join(s.dir, "store"), Sync: opts.Sync}
	s.hub = newHub(buffer.Buffers{Depth: opts.Buffer, MaxSessions: opts.MaxSessions, MaxBytes: opts.MaxBytes}, s.store, a)
	if err := s.refill(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the relay's files and lock.
func (s *Server) Close() error {
	errs := []error{s.store.Close(), s.audit.close()}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

// Dir is the relay's state folder.
func (s *Server) Dir() string { return s.dir }

// Loaded says what the start-up refill read.
func (s *Server) Loaded() (files, events int) { return s.loaded.files, s.loaded.events }

type ctxKey int

const (
	grantKey ctxKey = iota + 1
	tokenKey
)

// GrantFrom is the grant of the request's token: nil when the relay
// requires tokens and the request presented none valid (only public paths
// get there), the local grant without a tokens file.
func GrantFrom(ctx context.Context) *auth.Grant {
	if g, ok := ctx.Value(grantKey).(*auth.Grant); ok {
		return g
	}
	return nil
}

// SetSignInCookie stores the token the request presented (and proved) in
// an HttpOnly, SameSite=Strict cookie, so a browser signs in once (from a
// URL with access_token) and its page URLs carry no token after that. It
// reports false when the request proved no token.
func SetSignInCookie(w http.ResponseWriter, r *http.Request) bool {
	tok, _ := r.Context().Value(tokenKey).(string)
	if tok == "" || GrantFrom(r.Context()) == nil {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"})
	return true
}

// Handler is the relay behind its guard: every request's Host and Origin
// are checked, and with a tokens file its bearer token.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/events", s.events)
	mux.HandleFunc("/.well-known/aep", s.discovery)
	mux.HandleFunc("/stream", s.sse)
	mux.HandleFunc("/socket", s.socket)
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/", s.root)
	g := &guard.Guard{
		Hosts:      s.opts.Hosts,
		Origins:    s.opts.Origins,
		QueryToken: true,
		Cookie:     CookieName,
		Refused: func(r *http.Request, status int, reason string) {
			s.audit.record(Audit{Kind: auditRefused, Remote: r.RemoteAddr, Status: status, Reason: reason + " (" + r.Method + " " + r.URL.Path + ")"})
		},
	}
	if s.opts.Tokens != nil {
		toks := s.opts.Tokens
		g.Auth = func(ctx context.Context, tok string) (context.Context, bool) {
			gr, ok := toks.Lookup(tok)
			if !ok {
				return ctx, false
			}
			ctx = context.WithValue(ctx, grantKey, gr)
			return context.WithValue(ctx, tokenKey, tok), true
		}
		g.Public = func(r *http.Request) bool {
			return r.URL.Path == "/healthz" || s.consolePath(r.URL.Path)
		}
	}
	local := auth.LocalGrant()
	inner := g.Wrap(mux)
	if s.opts.Tokens != nil {
		return inner
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey, local)))
	})
}

// consolePath reports a path the console serves: everything but the
// relay's own endpoints, when a console is mounted.
func (s *Server) consolePath(p string) bool {
	if s.opts.Console == nil {
		return false
	}
	switch p {
	case "/events", "/.well-known/aep", "/stream", "/socket", "/healthz":
		return false
	}
	return true
}

func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	if s.opts.Console != nil {
		s.opts.Console.ServeHTTP(w, s.withSnapshotter(r))
		return
	}
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, "aep-hook relay (AEP 0.1): POST/GET /events, GET /stream (SSE), /socket (WebSocket), /.well-known/aep, /healthz\n")
}

// Serve runs the relay on ln until ctx ends: it follows the local logs
// (unless NoFollow) and serves the bindings; at the end it drains every
// stream (": shutting-down" to SSE, a closing frame and 1001 to
// WebSocket) and returns within Options.Drain. It returns nil on an
// orderly stop and an error when the drain overran.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.audit.record(Audit{Kind: auditStart, Reason: s.posture(), Remote: ln.Addr().String()})
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	followCtx, stopFollow := context.WithCancel(ctx)
	followed := make(chan error, 1)
	if s.opts.NoFollow {
		followed <- nil
	} else {
		go func() { followed <- s.follow(followCtx) }()
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	stopFollow()
	deadline := time.Now().Add(s.opts.Drain)
	dctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	// Stop accepting, tell every stream to end, and wait for them.
	ln.Close()
	for _, c := range s.hub.shutdown() {
		c.shutdown()
	}
	drained := make(chan struct{})
	go func() { s.streams.Wait(); close(drained) }()
	var overran error
	select {
	case <-drained:
	case <-dctx.Done():
		overran = fmt.Errorf("relay: streams still open after %s", s.opts.Drain)
	}
	if e := srv.Shutdown(dctx); e != nil && overran == nil {
		overran = fmt.Errorf("relay: %w", e)
		srv.Close()
	}
	select {
	case fe := <-followed:
		if fe != nil && !errors.Is(fe, context.Canceled) {
			err = errors.Join(err, fe)
		}
	case <-dctx.Done():
		if overran == nil {
			overran = errors.New("relay: the log follower did not stop in time")
		}
	}
	s.audit.record(Audit{Kind: auditStop})
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, overran)
}

// posture describes the security posture for the start line.
func (s *Server) posture() string {
	if s.opts.Tokens == nil {
		return "OPEN: no token asked, any local user may read and post; loopback only, control refused"
	}
	if s.opts.Tokens.UserOnly() {
		return "loopback only; one token, your own (" + filepath.Join(s.opts.Home, guard.TokenFile) + "): " + s.opts.Tokens.Grants()[0].Identity + " watches, posts and answers; every other request refused"
	}
	return fmt.Sprintf("%d tokens; control routed for tokens with control scopes", len(s.opts.Tokens.Grants()))
}

// Posture is the security posture in one line, for the relay's start-up
// message.
func (s *Server) Posture() string { return s.posture() }
