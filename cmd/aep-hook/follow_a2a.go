package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/aep-hook/aep-hook/adapters/a2a"
	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// A2AFlags are the follow verb's flags for an A2A server.
type A2AFlags struct {
	Task     string `help:"a2a: the task to follow (its id)." placeholder:"ID"`
	Legacy   bool   `help:"a2a: the server speaks A2A v0.3 (tasks/resubscribe), not v1.0."`
	TokenEnv string `help:"a2a, openclaw: environment variable holding the server's token (a2a: a bearer token; openclaw: the gateway token, default OPENCLAW_GATEWAY_TOKEN)." placeholder:"NAME"`
}

// runA2A follows one task of an A2A server until it reaches a terminal
// state, or until SIGINT or SIGTERM.
func (c *FollowCmd) runA2A(s *Streams, getenv func(string) string) error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitError{code: 2, msg: fmt.Sprintf("follow a2a: --url %q is not an http(s) URL (the server's JSON-RPC endpoint)", c.URL)}
	}
	if c.Task == "" {
		return exitError{code: 2, msg: "follow a2a: --task is required"}
	}
	h := http.Header{}
	if c.TokenEnv != "" {
		tok := getenv(c.TokenEnv)
		if tok == "" {
			return exitError{code: 2, msg: fmt.Sprintf("follow a2a: $%s is empty", c.TokenEnv)}
		}
		h.Set("Authorization", "Bearer "+tok)
		// The token is a secret: the redaction pipeline knows its value.
		c.SecretEnv = append(c.SecretEnv, c.TokenEnv)
	}
	cfg := c.config(getenv)
	errs := shim.NewErrorLog(cfg.HomeDir())
	p, err := cfg.Policy()
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	if _, err := cfg.TenantAttr(); err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	em := cfg.NewFileEmitter(p)
	f := &a2a.Follower{Endpoint: u, Task: c.Task, Legacy: c.Legacy, Header: h, Errors: errs}
	runner := &follow.Runner{
		Name:   "a2a",
		Source: f,
		Handle: nonced(em.Handler(mapping.A2A()), c.Deltas),
		Errors: errs,
		Stall:  c.Stall,
		Status: func(line string) {
			fmt.Fprintf(s.Err, "aep-hook follow a2a: %s task %s: %s\n", redact.Destination(u.String()), c.Task, line)
		},
	}
	fmt.Fprintf(s.Err, "aep-hook follow a2a: following task %s at %s (logs in %s)\n", c.Task, redact.Destination(u.String()), cfg.LogRoot())
	ctx, stop := untilInterrupted()
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-f.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	runner.Run(ctx)
	st := runner.Stats()
	why := "stopped"
	select {
	case <-f.Done():
		why = "the task ended"
	default:
	}
	fmt.Fprintf(s.Err, "aep-hook follow a2a: %s; %d events read, %d caught up, %d failures (aep-hook doctor shows them)\n",
		why, st.Items, st.CaughtUp, st.Failures)
	return nil
}

// nonced gives every moment a nonce (and the deltas opt-in) before h
// handles it.
func nonced(h shim.Handler, deltas bool) shim.Handler {
	ids := shim.NewIDs()
	return func(ms []mapping.Moment) ([]shim.Result, error) {
		for i := range ms {
			if ms[i].Nonce == "" {
				ms[i].Nonce = ids.Now()
			}
			ms[i].Deltas = deltas
		}
		return h(ms)
	}
}
