package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control"
	"github.com/aep-hook/aep-hook/shim/control/wss"
)

// FollowCmd is `aep-hook follow opencode|kilo|kimi-web|openhands|a2a --url URL`:
// the stream bridge that follows a running server's event stream and
// records it (`aep-hook follow a2a --url URL --task ID`: one A2A task). Each server family's wiring is in its own file
// (follow_kimiweb.go, follow_openhands.go, follow_a2a.go, follow_openclaw.go); the runtime (reconnects,
// dedupe, cursors, batching) is adapters/follow's for all of them.
type FollowCmd struct {
	CaptureFlags
	Vendor         string        `arg:"" enum:"opencode,kilo,kimi-web,openhands,a2a,openclaw" help:"The server: opencode, kilo, kimi-web, openhands, a2a or openclaw."`
	URL            string        `name:"url" required:"" env:"AEP_FOLLOW_URL" help:"The server's URL, e.g. http://127.0.0.1:4096 (kimi web: http://127.0.0.1:58627, OpenHands: http://127.0.0.1:8000)." placeholder:"URL"`
	PasswordEnv    string        `help:"OpenCode/Kilo: environment variable holding the server password (default OPENCODE_SERVER_PASSWORD or KILO_SERVER_PASSWORD)." placeholder:"NAME"`
	User           string        `help:"OpenCode/Kilo: HTTP Basic user (default: the server's own variable, else opencode or kilo)." placeholder:"NAME"`
	AllDirectories bool          `help:"OpenCode/Kilo: follow every directory the server serves (/global/event), not only its own (/event)."`
	TokenFile      string        `help:"kimi web: the server's token file (default $KIMI_CODE_HOME/server.token, else ~/.kimi-code/server.token)." placeholder:"PATH"`
	APIKeyEnv      string        `name:"api-key-env" help:"OpenHands: environment variable holding the session API key (default OH_SESSION_API_KEY; none when the server runs without keys)." placeholder:"NAME"`
	Conversation   []string      `help:"OpenHands: follow only these conversation ids (repeatable; default: every conversation the server lists, as they appear)." placeholder:"ID"`
	Mode           string        `help:"primary (the whole record) or companion (only x.<agent>.* events beside a primary source). Default: primary, except kimi-web (companion: the Kimi hooks are the primary)." enum:",primary,companion" default:""`
	Deltas         bool          `help:"Record token deltas (x.<agent>.*.delta); pair with --capture redacted for their text."`
	Stall          time.Duration `help:"Reconnect when the stream is silent this long (the servers send a heartbeat every 10s)." default:"45s"`
	Control        bool          `help:"OpenCode, Kilo and kimi web in primary mode: answer permission requests and questions and cancel runs over the relay (AEP-0004), as AEP_CONTROL=1 does. The relay is AEP_RELAY (or --relay), its token AEP_RELAY_TOKEN."`
	Relay          string        `help:"With --control: the relay's WebSocket URL (default AEP_RELAY, else ws://127.0.0.1:8787/socket)." placeholder:"URL"`
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
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitError{code: 2, msg: fmt.Sprintf("follow: --url %q is not an http(s) URL", c.URL)}
	}
	errs := shim.NewErrorLog(c.config(getenv).HomeDir())
	var w followWiring
	switch c.Vendor {
	case "kimi-web":
		w, err = c.kimiWeb(u, getenv, errs)
	case "openhands":
		w, err = c.openHands(u, getenv, errs)
	case "openclaw":
		w, err = c.openClaw(u, getenv, errs)
	default:
		w, err = c.openCode(u, getenv, errs)
	}
	if err != nil {
		return err
	}
	return c.follow(s, getenv, u, w, errs)
}

// followWiring is what one server family gives the shared runtime.
type followWiring struct {
	table  string        // the mapping table
	source follow.Source // the bridge
	cursor string        // the cursor file's name within the vendor's folder (a URL digest)
	// resume, when set, gets the saved cursor before the first connect
	// (bridges that subscribe from it).
	resume func(saved string)
	mode   mapping.Mode
	// secrets are values the redaction pipeline must know (a token read
	// from a file), named as environment variables getenv answers.
	secrets map[string]string
	// deliver, for a bridge that can answer over control, makes the
	// server's reply call of a held request; handlers carry out its other
	// commands (control.cancel).
	deliver  control.Deliverer
	handlers map[string]control.Handler
}

// follow runs the shared runtime over one bridge until SIGINT or SIGTERM.
func (c *FollowCmd) follow(s *Streams, getenv func(string) string, u *url.URL, w followWiring, errs *shim.ErrorLog) error {
	v, _ := mapping.Lookup(w.table)
	for name := range w.secrets {
		c.SecretEnv = append(c.SecretEnv, name)
	}
	cfg := c.config(func(k string) string {
		if v, ok := w.secrets[k]; ok {
			return v
		}
		return getenv(k)
	})
	p, err := cfg.Policy()
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if _, err := cfg.TenantAttr(); err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	em := cfg.NewFileEmitter(p)
	cur := follow.FileCursor{Path: filepath.Join(cfg.HomeDir(), "cursors", "follow", c.Vendor+"-"+w.cursor)}
	if w.resume != nil {
		if saved, err := cur.Load(); err == nil && saved != "" {
			w.resume(saved)
		}
	}
	status := func(line string) {
		fmt.Fprintf(s.Err, "aep-hook follow %s: %s %s\n", c.Vendor, redact.Destination(u.String()), line)
	}
	ctl, err := c.control(getenv, w, status)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	ctx, stop := untilInterrupted()
	defer stop()
	handle := em.Handler(v)
	var linkDone chan struct{}
	if ctl != nil {
		link := &control.Stream{
			Config: ctl, Vendor: v, Emitter: em,
			Identity: control.Identity{Agent: v.AgentName(), Instance: em.Host + "/" + strconv.Itoa(os.Getpid())},
			Accepts:  []string{control.Respond}, Handlers: w.handlers,
			Failed: func(stage string, err error) {
				errs.Record(shim.Failure{Adapter: w.table, Stage: "control", Error: "control " + stage + ": " + err.Error()})
			},
			Status: status,
		}
		for typ := range w.handlers {
			link.Accepts = append(link.Accepts, typ)
		}
		sort.Strings(link.Accepts[1:])
		handle = link.Handler(handle, w.deliver)
		linkDone = make(chan struct{})
		go func() {
			defer close(linkDone)
			link.Run(ctx)
		}()
		// The link's first dial settles before the stream is read: a
		// request the server hands over on connect is held when a relay
		// is there. An absent relay refuses at once; one that hangs costs
		// at most the connect bound.
		select {
		case <-link.Ready():
		case <-ctx.Done():
		}
	}
	runner := &follow.Runner{
		Name:   w.table,
		Source: w.source,
		Handle: handle,
		Errors: errs,
		Cursor: cur,
		Stall:  c.Stall,
		Status: status,
	}
	fmt.Fprintf(s.Err, "aep-hook follow %s: following %s (%s mode, logs in %s)\n", c.Vendor, redact.Destination(u.String()), w.mode, cfg.LogRoot())
	runner.Run(ctx)
	if linkDone != nil {
		<-linkDone
	}
	st := runner.Stats()
	fmt.Fprintf(s.Err, "aep-hook follow %s: stopped; %d events read, %d duplicates dropped, %d caught up, %d failures (aep-hook doctor shows them)\n",
		c.Vendor, st.Items, st.Duplicates, st.CaughtUp, st.Failures)
	return nil
}

// control is the bridge's control posture: nil (observe-only) unless
// --control or AEP_CONTROL asks for it, for a bridge that can answer, in
// primary mode. Asked for where it cannot be, it says so and observes.
func (c *FollowCmd) control(getenv func(string) string, w followWiring, warn func(string)) (*control.Config, error) {
	env := getenv
	if c.Control || c.Relay != "" {
		env = func(k string) string {
			switch {
			case k == "AEP_CONTROL":
				return "1"
			case k == "AEP_RELAY" && c.Relay != "":
				return c.Relay
			}
			return getenv(k)
		}
	}
	ctl, err := control.FromEnv(env)
	if err != nil || ctl == nil {
		if err != nil {
			err = fmt.Errorf("follow: %w", err)
		}
		return nil, err
	}
	why := ""
	switch {
	case w.deliver == nil:
		why = "control is not offered for this server (OpenCode, Kilo and kimi web answer over control)"
	case w.mode != mapping.Primary:
		why = "control answers in primary mode only (in companion mode the primary source owns the requests); pass --mode primary"
	default:
		ctl.Secure = wss.Client // the full binary speaks TLS to a wss:// relay
		return ctl, nil
	}
	if c.Control || c.Relay != "" {
		return nil, fmt.Errorf("follow %s: %s", c.Vendor, why)
	}
	// AEP_CONTROL alone is the hooks' posture too: it leaves this
	// follower observe-only, and says so.
	warn(why + "; following observe-only")
	return nil, nil
}

// mode is the channel posture asked for, else the family's default.
func (c *FollowCmd) mode(def mapping.Mode) mapping.Mode {
	if c.Mode != "" {
		return mapping.Mode(c.Mode)
	}
	return def
}

// openCode wires the OpenCode / Kilo SSE bridge.
func (c *FollowCmd) openCode(u *url.URL, getenv func(string) string, errs shim.Recorder) (followWiring, error) {
	prof := opencode.Profiles[c.Vendor]
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
		return followWiring{}, exitError{code: 2, msg: fmt.Sprintf("follow: $%s is empty", c.PasswordEnv)}
	}
	user = firstSet(c.User, user, getenv(prof.UserEnv), prof.User)
	// The password is a secret: the redaction pipeline knows its value.
	c.SecretEnv = append(c.SecretEnv, passEnv)
	mode := c.mode(mapping.Primary)
	bridge := &opencode.Bridge{
		Base: u, User: user, Password: password, AllDirectories: c.AllDirectories,
		Mode: mode, Deltas: c.Deltas,
		Nonce: shim.NewIDs().Now, Errors: errs, Name: prof.Table,
	}
	return followWiring{table: prof.Table, source: bridge, mode: mode, cursor: cursorKey(u, c.AllDirectories),
		deliver: bridge.Deliver, handlers: map[string]control.Handler{control.Cancel: bridge.Cancel}}, nil
}

// cursorKey names a bridge's cursor file: a digest of the server's URL
// (and of what else selects the stream).
func cursorKey(u *url.URL, extra any) string {
	return redact.Digest(map[string]any{"url": u.String(), "all": extra})
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
