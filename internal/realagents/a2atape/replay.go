package a2atape

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/adapters/a2a"
	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/internal/realagents"
	"github.com/aep-hook/aep-hook/internal/sinktest"
	"github.com/aep-hook/aep-hook/internal/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Replay serves the tape to the real channel writing into a fresh AEP
// home under tmp, then checks the whole record (schemas may be nil).
func Replay(t *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
	var res realagents.TapeReplayed
	bad := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	player := NewPlayer(t)
	srv := httptest.NewServer(player)
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	cfg := shim.Config{Home: filepath.Join(tmp, "aep"), Host: "replay"}
	em := cfg.NewFileEmitter(redact.DefaultPolicy())
	v := mapping.A2A()
	ids := shim.NewIDs()
	clock := t.RecordedAt
	nonce := func() string { return ids.New(clock) }
	errs := &sinktest.Failures{}
	switch t.Channel {
	case "tee":
		replayTee(t, base, em.Handler(v), errs, nonce, bad)
	case "follow":
		replayFollow(t, base, em.Handler(v), errs, nonce, bad)
	default:
		bad("tape names no known channel %q", t.Channel)
		return res
	}
	for _, f := range errs.All() {
		if t.Channel == "follow" && (f.Stage == "read" || f.Stage == "connect") {
			continue // the tape's end: the stream closes, a reconnect finds the task ended
		}
		bad("channel failure %s: %s", f.Stage, f.Error)
	}
	logs, err := realagents.ReadLogs(filepath.Join(cfg.LogRoot(), v.AgentName()))
	if err != nil {
		bad("read logs: %v", err)
		return res
	}
	res.Logs = logs
	res.Problems = append(res.Problems, truth.Check(logs, t.Facts, schemas)...)
	return res
}

// replayTee sends the client's recorded requests, in order, through the
// real tee to the player, and checks every answer arrives byte for byte.
func replayTee(t *Tape, upstream *url.URL, h shim.Handler, errs shim.Recorder, nonce func() string, bad func(string, ...any)) {
	p := &a2a.Proxy{Upstream: upstream, Handle: h, Errors: errs, Nonce: nonce, Instance: "replay"}
	tee := httptest.NewServer(p)
	defer tee.Close()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: time.Minute}
	for i, x := range t.Exchanges {
		req, _ := http.NewRequest(http.MethodPost, tee.URL+x.Path, bytes.NewReader(x.Request))
		req.Header.Set("Content-Type", "application/json")
		if x.Version != "" {
			req.Header.Set("A2A-Version", x.Version)
		}
		resp, err := c.Do(req)
		if err != nil {
			bad("exchange %d (%s): %v", i+1, x.Method, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			bad("exchange %d (%s): read: %v", i+1, x.Method, err)
		}
		if string(body) != x.Body || resp.StatusCode != x.Status {
			bad("exchange %d (%s): the tee relayed %d %q, the server sent %d %q", i+1, x.Method, resp.StatusCode, body, x.Status, x.Body)
		}
	}
	p.Wait()
}

// replayFollow runs the real follower against the player until the task
// ended (or a minute passed).
func replayFollow(t *Tape, base *url.URL, h shim.Handler, errs shim.Recorder, nonce func() string, bad func(string, ...any)) {
	path := "/a2a/jsonrpc"
	if len(t.Exchanges) > 0 {
		path = t.Exchanges[0].Path
	}
	f := &a2a.Follower{Endpoint: base.JoinPath(path), Task: t.Task}
	runner := &follow.Runner{
		Name: "a2a", Source: f, Errors: errs,
		Handle: func(ms []mapping.Moment) ([]shim.Result, error) {
			for i := range ms {
				ms[i].Nonce = nonce()
			}
			return h(ms)
		},
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { runner.Run(ctx); close(ran) }()
	select {
	case <-f.Done():
	case <-time.After(time.Minute):
		bad("the follower never saw the task end")
	}
	cancel()
	<-ran
}
