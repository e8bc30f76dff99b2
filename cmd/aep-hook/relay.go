package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/consumer/console"
	"github.com/aep-hook/aep-hook/consumer/relay"
	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/shim"
)

// RelayCmd is `aep-hook relay`: serve the record over the AEP SSE and
// WebSocket bindings and route control commands.
type RelayCmd struct {
	Listen           string        `help:"Listen address (HOST:PORT)." default:"127.0.0.1:8787" env:"AEP_RELAY_LISTEN"`
	Tokens           string        `help:"Tokens file: one JSON object a line (token, identity, scopes, tenant, capture); mode 600. Without it the relay listens on loopback only and accepts one token, yours ($AEP_HOME/token, created on first use), which your hooks and aep-hook's own commands present by themselves." env:"AEP_RELAY_TOKENS" placeholder:"FILE"`
	Open             bool          `help:"Without --tokens, require no token at all: any local user may read and post (loopback only; control refused). Not for shared machines." env:"AEP_RELAY_OPEN"`
	Home             string        `help:"The AEP home (default $AEP_HOME or ~/.aep)." env:"AEP_HOME"`
	Buffer           int           `help:"Replay buffer: events kept per session." default:"1000"`
	MaxSessions      int           `help:"Session buffers kept; past it the least recently written goes." default:"500"`
	MaxBytes         int64         `help:"Bytes of events kept across the buffers." default:"536870912"`
	MaxBody          int64         `help:"Largest POST /events body, in bytes." default:"16777216"`
	MaxBatch         int           `help:"Most events in one POST /events batch." default:"10000"`
	MaxFrame         int64         `help:"Largest WebSocket frame, in bytes." default:"4194304"`
	MaxFrom          int           `help:"Most resume positions in one request (0: --max-sessions)."`
	MaxSubs          int           `help:"Most subscriptions on one WebSocket connection." default:"64"`
	MaxConns         int           `help:"Most SSE and WebSocket connections at once." default:"1024"`
	Queue            int64         `help:"Bytes (events and frames) queued for one connection before it is cut as a slow consumer (0: 32 MiB, or twice --max-body when that is more)."`
	Ping             time.Duration `help:"Heartbeat interval (SSE ': ping', WebSocket ping)." default:"15s"`
	PongTimeout      time.Duration `help:"How long a WebSocket peer may stay silent (no frame, no pong) before it is cut." default:"90s"`
	WriteWait        time.Duration `help:"How long one write to a consumer may block before the connection is dropped." default:"10s"`
	guard.AllowFlags `embed:""`
	// Host and Origin are the flags' earlier names, kept working.
	Host     []string `hidden:"" help:"The former name of --allow-host."`
	Origin   []string `hidden:"" help:"The former name of --allow-origin."`
	Sync     bool     `help:"Wait for the disk (fsync) before acknowledging network events."`
	NoFollow bool     `name:"no-follow" help:"Serve only what arrives over the network; do not follow $AEP_HOME/logs."`
}

// Run serves until interrupted; SIGTERM drains every stream within 5 s.
func (c *RelayCmd) Run(s *Streams) error {
	opts := relay.Options{
		Home: shim.Config{Home: c.Home}.HomeDir(), NoFollow: c.NoFollow,
		Buffer: c.Buffer, MaxSessions: c.MaxSessions, MaxBytes: c.MaxBytes, MaxBody: c.MaxBody,
		MaxBatch: c.MaxBatch, MaxFrame: c.MaxFrame, MaxFrom: c.MaxFrom, MaxSubs: c.MaxSubs,
		MaxConns: c.MaxConns, Queue: c.Queue, Ping: c.Ping, PongTimeout: c.PongTimeout, WriteWait: c.WriteWait, Hosts: append(c.Hosts(), c.Host...), Origins: append(c.Origins(), c.Origin...), Sync: c.Sync,
		Console: console.Handler(console.Options{Version: version}),
	}
	toks, open, err := c.identity(opts.Home)
	if err != nil {
		return err
	}
	opts.Tokens = toks
	srv, err := relay.New(opts)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("relay: %v", err)}
	}
	if open {
		fmt.Fprintln(s.Err, "aep-hook relay: WARNING: --open: no token is asked; every local user can read this record and post into it")
	}
	files, events := srv.Loaded()
	fmt.Fprintf(s.Err, "aep-hook relay: serving http://%s (%s); %d events loaded from %d session files; state in %s\n",
		ln.Addr(), srv.Posture(), events, files, srv.Dir())
	fmt.Fprintln(s.Err, consoleLine(ln.Addr().String(), opts.Tokens, srv.Dir(), isTerminal(s.Err)))
	ctx, stop := untilInterrupted()
	defer stop()
	if err := srv.Serve(ctx, ln); err != nil {
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		return exitError{code: 1, msg: err.Error()}
	}
	return nil
}

// identity is who the relay lets in: the tokens file's grants; without
// one, the user's own token as the only identity (the default); or, with
// --open, nobody in particular (open reports it). Without a tokens file
// the relay stays on loopback: the user's token is for this machine.
func (c *RelayCmd) identity(home string) (toks *auth.Tokens, open bool, err error) {
	if c.Tokens != "" {
		if c.Open {
			return nil, false, exitError{code: 2, msg: "relay: --open and --tokens: choose one"}
		}
		toks, err := auth.Load(c.Tokens)
		if err != nil {
			return nil, false, exitError{code: 2, msg: err.Error()}
		}
		return toks, false, nil
	}
	if !guard.Loopback(c.Listen) {
		return nil, false, exitError{code: 2, msg: fmt.Sprintf("relay: %s is not a loopback address; off loopback give --tokens FILE, so that each client has a token of its own", c.Listen)}
	}
	if c.Open {
		return nil, true, nil
	}
	tok, err := guard.UserToken(home)
	if err != nil {
		return nil, false, exitError{code: 2, msg: fmt.Sprintf("relay: the user token file: %v", err)}
	}
	toks, err = auth.User(tok, userName())
	if err != nil {
		return nil, false, exitError{code: 2, msg: fmt.Sprintf("relay: the user token file %s: %v", filepath.Join(home, guard.TokenFile), err)}
	}
	return toks, false, nil
}

// userName is the login name of the user running this process, for the
// identity the user's own token speaks as.
func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// consoleLine tells where the fleet console is. With a tokens file it
// gives the sign-in URL of the file's first consumer token (opened once,
// the browser keeps the token in a cookie and the URL loses it): whole
// only to a terminal, so no token reaches a log that a service manager or
// a redirect keeps, and always in dir/console-url (mode 600).
func consoleLine(addr string, toks *auth.Tokens, dir string, tty bool) string {
	base := "http://" + addr + "/"
	if toks == nil {
		return "aep-hook relay: the fleet console: " + base
	}
	tok, g := toks.SignIn()
	if tok == "" {
		return "aep-hook relay: the fleet console: " + base + " (the tokens file has no consumer token to sign in with)"
	}
	signIn := base + "?access_token=" + url.QueryEscape(tok)
	if tty {
		return "aep-hook relay: the fleet console for " + g.Identity + ": " + signIn
	}
	file := filepath.Join(dir, "console-url")
	if err := writePrivate(file, signIn+"\n"); err != nil {
		return "aep-hook relay: the fleet console for " + g.Identity + ": " + base + " (open it with ?access_token= and the token; writing the sign-in URL failed: " + err.Error() + ")"
	}
	return "aep-hook relay: the fleet console for " + g.Identity + ": " + base + " (its sign-in URL is in " + file + ")"
}

// writePrivate replaces file with body, readable by its owner alone.
func writePrivate(file, body string) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
