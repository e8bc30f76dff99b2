package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// FollowCmd is `aep-hook follow opencode|kilo --url URL`: the stream
// bridge that follows a running server's event stream and records it
// (`aep-hook follow a2a --url URL --task ID`: one A2A task, follow_a2a.go).
type FollowCmd struct {
	CaptureFlags
	Vendor         string        `arg:"" enum:"opencode,kilo,a2a" help:"The server: opencode, kilo or a2a."`
	URL            string        `name:"url" required:"" env:"AEP_FOLLOW_URL" help:"The server's URL, e.g. http://127.0.0.1:4096." placeholder:"URL"`
	PasswordEnv    string        `help:"Environment variable holding the server password (default OPENCODE_SERVER_PASSWORD or KILO_SERVER_PASSWORD)." placeholder:"NAME"`
	User           string        `help:"HTTP Basic user (default: the server's own variable, else opencode or kilo)." placeholder:"NAME"`
	AllDirectories bool          `help:"Follow every directory the server serves (/global/event), not only its own (/event)."`
	Mode           string        `help:"primary (the whole record) or companion (only x.<agent>.* events, when the plugin forwarder is the primary)." enum:"primary,companion" default:"primary"`
	Deltas         bool          `help:"Record token deltas (x.<agent>.message.part.delta); pair with --capture redacted for their text."`
	Stall          time.Duration `help:"Reconnect when the stream is silent this long (the servers send a heartbeat every 10s)." default:"45s"`
	A2AFlags

	getenv func(string) string
}

// Run follows the server until SIGINT or SIGTERM.
func (c *FollowCmd) Run(s *Streams) error {
	getenv := c.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if c.Vendor == "a2a" {
		return c.runA2A(s, getenv)
	}
	prof := opencode.Profiles[c.Vendor]
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitError{code: 2, msg: fmt.Sprintf("follow: --url %q is not an http(s) URL", c.URL)}
	}
	user, password := u.User.Username(), ""
	if p, ok := u.User.Password(); ok {
		password = p
	}
	u.User = nil
	passEnv := c.PasswordEnv
	if passEnv == "" {
		passEnv = prof.PasswordEnv
	}
	if v := getenv(passEnv); v != "" {
		password = v
	} else if c.PasswordEnv != "" {
		return exitError{code: 2, msg: fmt.Sprintf("follow: $%s is empty", c.PasswordEnv)}
	}
	user = firstSet(c.User, user, getenv(prof.UserEnv), prof.User)
	v, _ := mapping.Lookup(prof.Table)
	// The password is a secret: the redaction pipeline knows its value.
	c.SecretEnv = append(c.SecretEnv, passEnv)
	cfg := c.config(getenv)
	errs := shim.NewErrorLog(cfg.HomeDir())
	p, err := cfg.Policy()
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	em := cfg.NewFileEmitter(p)
	ids := shim.NewIDs()
	bridge := &opencode.Bridge{
		Base: u, User: user, Password: password, AllDirectories: c.AllDirectories,
		Mode: mapping.Mode(c.Mode), Deltas: c.Deltas,
		Nonce: func() string { return ids.New(time.Now()) },
	}
	runner := &follow.Runner{
		Name:   prof.Table,
		Source: bridge,
		Handle: em.Handler(v),
		Errors: errs,
		Cursor: follow.FileCursor{Path: cursorPath(cfg.HomeDir(), prof.Name, u, c.AllDirectories)},
		Stall:  c.Stall,
		Status: func(line string) {
			fmt.Fprintf(s.Err, "aep-hook follow %s: %s %s\n", c.Vendor, u.Redacted(), line)
		},
	}
	fmt.Fprintf(s.Err, "aep-hook follow %s: following %s (%s mode, logs in %s)\n", c.Vendor, u.Redacted(), c.Mode, cfg.LogRoot())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runner.Run(ctx)
	st := runner.Stats()
	fmt.Fprintf(s.Err, "aep-hook follow %s: stopped; %d events read, %d duplicates dropped, %d caught up, %d failures (aep-hook doctor shows them)\n",
		c.Vendor, st.Items, st.Duplicates, st.CaughtUp, st.Failures)
	return nil
}

// cursorPath is where a bridge keeps its cursor: one file per vendor,
// server and stream, named by a digest of the URL.
func cursorPath(home, vendor string, u *url.URL, all bool) string {
	key := redact.Digest(map[string]any{"url": u.String(), "all": all})
	return filepath.Join(home, "cursors", "follow", vendor+"-"+key)
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
