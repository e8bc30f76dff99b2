package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/notify"
	"github.com/aep-hook/aep-hook/internal/secretfile"
	"github.com/aep-hook/aep-hook/shim"
)

// NotifyCmd is `aep-hook notify`: route the attention requests a relay
// serves to the desktop, ntfy and webhooks, recording each delivery.
type NotifyCmd struct {
	Config string `help:"The configuration (relay, token, routes): JSON, mode 600 (default $AEP_HOME/notify.json)." env:"AEP_NOTIFY_CONFIG" placeholder:"FILE"`
	Relay  string `help:"The relay's base URL, over the configuration's (default http://127.0.0.1:8787)." placeholder:"URL"`
	Home   string `help:"The AEP home (default $AEP_HOME or ~/.aep)." env:"AEP_HOME"`
	Host   string `help:"The host named in the attention.routed source (default this machine's name)." env:"AEP_HOST"`
	Test   bool   `help:"Send one sample notification to each route, say how each went, and exit (nothing is recorded)."`
}

// Run loads the configuration and routes until interrupted.
func (c *NotifyCmd) Run(s *Streams) error {
	home := shim.Config{Home: c.Home}.HomeDir()
	path := c.Config
	if path == "" {
		path = filepath.Join(home, "notify.json")
	}
	cf, err := notify.LoadFile(path)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if c.Relay != "" {
		cf.Relay = c.Relay
	}
	set, err := cf.Check()
	if err != nil {
		return exitError{code: 2, msg: fmt.Sprintf("notify config %s: %v", path, err)}
	}
	if set.Token == "" {
		// The relay on this machine takes the user's own token by default.
		if set.Token, err = secretfile.LocalUser(home, set.Relay.String()); err != nil {
			return exitError{code: 2, msg: fmt.Sprintf("notify config %s has no token, and the user token file cannot be used: %v", path, err)}
		}
	}
	client := notifyClient()
	if c.Test {
		return c.test(s, set, client)
	}
	host := shim.Config{Host: c.Host}.HostName()
	opts := notify.Options{Home: home, Host: host, Client: client, Log: s.Err}
	var buttons net.Listener
	if set.Actions != nil {
		if opts.Buttons, err = notify.NewButtons(set, notify.ButtonOptions{Home: home, Host: host, Log: s.Err}); err != nil {
			return exitError{code: 1, msg: err.Error()}
		}
		if buttons, err = net.Listen("tcp", set.Actions.Listen); err != nil {
			return exitError{code: 1, msg: fmt.Sprintf("notify: the answer buttons' listener: %v", err)}
		}
		defer buttons.Close()
	}
	n, err := notify.New(set, opts)
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	routes := make([]string, len(set.Routes))
	for i, r := range set.Routes {
		routes[i] = r.String()
	}
	fmt.Fprintf(s.Err, "aep-hook notify: routing %s requests from %s://%s to %s\n",
		strings.Join(set.Kinds, ", "), set.Relay.Scheme, set.Relay.Host, strings.Join(routes, "; "))
	ctx, stop := untilInterrupted()
	defer stop()
	if buttons != nil {
		// The public URL's scheme and host only: its path may be a
		// proxy's secret prefix, and the buttons' own paths are tokens.
		fmt.Fprintf(s.Err, "aep-hook notify: answer buttons on http://%s (reached as %s://%s), answering over %s\n",
			buttons.Addr(), set.Actions.URL.Scheme, set.Actions.URL.Host, redactSocket(set.Actions.Socket))
		served := make(chan error, 1)
		go func() { served <- opts.Buttons.Serve(ctx, buttons) }()
		err := n.Run(ctx)
		stop()
		if serr := <-served; err == nil && serr != nil {
			err = fmt.Errorf("notify: the answer buttons' listener: %w", serr)
		}
		return err
	}
	return n.Run(ctx)
}

// test sends the sample to every route.
func (c *NotifyCmd) test(s *Streams, set *notify.Settings, client *http.Client) error {
	failed := 0
	m := &notify.Message{Title: "aep-hook: a test notification", Body: "Routes work: this is how a request that needs you will arrive.",
		Agent: "aep-hook", Kind: "other", Requested: time.Now(), Capture: "metadata"}
	for _, r := range set.Routes {
		err := r.Send(context.Background(), client, m)
		if err != nil {
			failed++
			fmt.Fprintf(s.Out, "%s: failed: %v\n", r, err)
			continue
		}
		fmt.Fprintf(s.Out, "%s: delivered\n", r)
	}
	if failed > 0 {
		return exitError{code: 1}
	}
	return nil
}

// redactSocket is a WebSocket URL's scheme, host and path, for messages.
func redactSocket(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the relay"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// notifyClient is the HTTP client of the relay stream, the records and
// the routes: no overall timeout (the stream is long-lived; each
// delivery has its own), and no redirect followed, since a route's
// credentials would follow it.
func notifyClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return errors.New("refusing to follow a redirect with the route's credentials; configure the final URL")
	}}
}
