package openclawtape

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/openclaw"
	"github.com/aep-hook/aep-hook/internal/realagents"
	"github.com/aep-hook/aep-hook/internal/sinktest"
	"github.com/aep-hook/aep-hook/internal/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Replay serves the tape to the real bridge writing into a fresh AEP home
// under tmp, then checks the whole record (schemas may be nil).
func Replay(t *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
	var res realagents.TapeReplayed
	bad := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	g := NewGateway(t.Frames)
	srv := httptest.NewServer(g)
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	cfg := shim.Config{Home: filepath.Join(tmp, "aep"), Host: "replay"}
	em := cfg.NewFileEmitter(redact.DefaultPolicy())
	v := mapping.OpenClaw()
	ids := shim.NewIDs()
	clock := t.RecordedAt
	b := &openclaw.Bridge{Base: base, Token: "replay", Nonce: func() string { return ids.New(clock) }}
	errs := &sinktest.Failures{}
	runner := &follow.Runner{Name: "openclaw", Source: b, Handle: em.Handler(v), Errors: errs,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { runner.Run(ctx); close(ran) }()
	select {
	case <-g.Done:
	case <-time.After(time.Minute):
		bad("the replay did not finish")
	}
	cancel()
	<-ran
	for _, f := range errs.All() {
		if f.Stage == "connect" || f.Stage == "read" {
			continue // the tape's end: the stream closes, the reconnect is refused
		}
		bad("bridge failure %s: %s", f.Stage, f.Error)
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
