package bus

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/internal/realagents"
	"github.com/aep-hook/aep-hook/internal/sinktest"
	"github.com/aep-hook/aep-hook/internal/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Replayed is the outcome of one tape's replay.
type Replayed struct {
	Tape *Tape
	Logs []truth.Log
	// Problems are the bridge's recorded failures (besides the tape's
	// end) and every truth violation.
	Problems []string
	Stats    follow.Snapshot
}

// Replay serves the tape to the real bridge writing into a fresh AEP home
// under tmp, then checks the whole record (schemas may be nil).
func Replay(t *Tape, tmp string, schemas *truth.Schemas) Replayed {
	res := Replayed{Tape: t}
	bad := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	prof, ok := opencode.Profiles[t.Vendor]
	if !ok {
		bad("tape names no known vendor %q", t.Vendor)
		return res
	}
	v, _ := mapping.Lookup(prof.Table)
	player := NewPlayer(t)
	srv := httptest.NewServer(player)
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	cfg := shim.Config{Home: filepath.Join(tmp, "aep"), Host: "replay"}
	em := cfg.NewFileEmitter(redact.DefaultPolicy())
	ids := shim.NewIDs()
	clock := t.RecordedAt
	bridge := &opencode.Bridge{
		Base: base, AllDirectories: t.AllDirectories, Mode: mapping.Primary,
		Nonce: func() string { return ids.New(clock) },
		Now:   func() time.Time { return clock },
	}
	errs := &sinktest.Failures{}
	runner := &follow.Runner{
		Name: prof.Table, Source: bridge, Handle: em.Handler(v), Errors: errs,
		Cursor:     follow.FileCursor{Path: filepath.Join(tmp, "cursor")},
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { runner.Run(ctx); close(ran) }()
	select {
	case <-player.Done:
	case <-time.After(2 * time.Minute):
		bad("replay did not finish: requests %v", player.Requests)
	}
	cancel()
	<-ran
	res.Stats = runner.Stats()
	for _, f := range errs.All() {
		if f.Stage == "connect" || f.Stage == "read" {
			continue // the tape's end: streams close, the last connect is refused
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
