package main

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/shim"
)

// ListenFlags are the guard settings every listener takes (the OTLP
// sidecar, the HTTP tees): which other names and browser origins may
// address it, and where its bearer token is kept.
type ListenFlags struct {
	guard.AllowFlags `embed:""`
	TokenFile        string `name:"token-file" help:"File holding the bearer token clients must present (0600, not a link); default $AEP_HOME/token, created on first use." env:"AEP_LISTEN_TOKEN_FILE" placeholder:"FILE"`
}

// Auth postures of a listener's --auth flag.
const (
	authToken = "token" // clients present the bearer token
	authNone  = "none"  // no token checked (loopback only)
	authAuto  = "auto"  // none on loopback, token off it
)

// listener is a guarded listener's settings, resolved.
type listener struct {
	guard *guard.Guard
	token bool // a token is required
	file  string
}

// guardFor builds the guard of a listener named name on addr: Host and
// Origin always checked; the bearer token required when auth says so and
// always off loopback (where --auth none is refused). Refused requests are
// recorded in the error log, at most once a minute per reason, so a flood
// of them costs no disk.
func (f ListenFlags) guardFor(name, addr, auth, home string, errs shim.Recorder) (listener, error) {
	loop := guard.Loopback(addr)
	if auth == authAuto {
		auth = authToken
		if loop {
			auth = authNone
		}
	}
	if auth == authNone && !loop {
		return listener{}, fmt.Errorf("%s: --auth none on %s: a listener off loopback needs the bearer token (AEP-0003 §8.1); listen on 127.0.0.1 or drop --auth none", name, addr)
	}
	g := &guard.Guard{Hosts: f.Hosts(), Origins: f.Origins(), Refused: refusedRecorder(name, errs)}
	l := listener{guard: g}
	if auth == authNone {
		return l, nil
	}
	tok, file, err := f.token(home)
	if err != nil {
		return listener{}, fmt.Errorf("%s: bearer token file: %w", name, err)
	}
	g.Auth = guard.Bearer(tok)
	l.token, l.file = true, file
	return l, nil
}

// token reads the listener token: --token-file, or the per-user token
// under home (created when missing).
func (f ListenFlags) token(home string) (tok, file string, err error) {
	if f.TokenFile != "" {
		tok, err = guard.ReadSecretFile(f.TokenFile)
		return tok, f.TokenFile, err
	}
	tok, err = guard.UserToken(home)
	return tok, filepath.Join(home, guard.TokenFile), err
}

// describe is the startup line's word on authentication.
func (l listener) describe() string {
	if l.token {
		return "bearer token required (" + l.file + ")"
	}
	return "no token (--auth none: any local user can call it)"
}

// refusedRecorder records refused requests, once a minute per reason.
func refusedRecorder(name string, errs shim.Recorder) func(*http.Request, int, string) {
	if errs == nil {
		return nil
	}
	var mu sync.Mutex
	last := map[string]time.Time{}
	return func(r *http.Request, status int, reason string) {
		now := time.Now()
		mu.Lock()
		if t, ok := last[reason]; ok && now.Sub(t) < time.Minute {
			mu.Unlock()
			return
		}
		last[reason] = now
		mu.Unlock()
		from, _, _ := net.SplitHostPort(r.RemoteAddr)
		errs.Record(shim.Failure{Adapter: name, Stage: "refused",
			Error: fmt.Sprintf("%s %s from %s refused (%d): %s (repeats within a minute not recorded)", r.Method, r.URL.Path, from, status, reason)})
	}
}
