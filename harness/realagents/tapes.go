package realagents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/follow"
	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/harness/sinktest"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Tapes is the record-and-replay loop the tape harnesses share (the A2A
// tee and follower, the OpenClaw gateway): each records a scenario live,
// checks the live record, replays what it recorded, and keeps the tape
// only when both are true.
type Tapes[T any] struct {
	// Agent names the harness in its report lines ("a2a").
	Agent string
	// Log receives one line per scenario and the report.
	Log io.Writer
	// Name is a tape's scenario name.
	Name func(T) string
	// Replay replays a tape into a fresh AEP home under tmp.
	Replay func(t T, tmp string, schemas *truth.Schemas) TapeReplayed
	// Fixtures is the fixtures folder; tapes live in
	// <Fixtures>/<Agent>/recorded/<scenario>/.
	Fixtures string
	// Load reads the committed tapes under a fixtures folder; Save writes
	// one into its scenario folder.
	Load func(root string) ([]T, error)
	Save func(t T, dir string) error
}

// TapeReplayed is the outcome of one tape's replay: the record and every
// problem found (the channel's failures, bytes relayed differently, truth
// violations).
type TapeReplayed struct {
	Logs     []truth.Log
	Problems []string
}

// replay runs Replay in a temporary folder.
func (h Tapes[T]) replay(t T, schemas *truth.Schemas) ([]string, []truth.Log) {
	tmp, err := os.MkdirTemp("", h.Agent+"-replay-")
	if err != nil {
		return []string{err.Error()}, nil
	}
	defer os.RemoveAll(tmp)
	r := h.Replay(t, tmp, schemas)
	return r.Problems, r.Logs
}

// Keep checks one live recording and its replay, and saves the tape when
// both are true; it reports whether it did.
func (h Tapes[T]) Keep(t T, live []truth.Log, facts truth.Facts, schemas *truth.Schemas, save func() error) bool {
	name := h.Name(t)
	problems := truth.Check(live, facts, schemas)
	rep, _ := h.replay(t, schemas)
	problems = append(problems, rep...)
	if len(problems) > 0 {
		fmt.Fprintf(h.Log, "  %s/%s: NOT TRUE:\n    %s\n    record: %s\n", h.Agent, name, strings.Join(problems, "\n    "), truth.Summary(live))
		return false
	}
	if err := save(); err != nil {
		fmt.Fprintf(h.Log, "  %s/%s: save: %v\n", h.Agent, name, err)
		return false
	}
	fmt.Fprintf(h.Log, "  %s/%s: true live and replayed (%s)\n", h.Agent, name, truth.Summary(live))
	return true
}

// Report prints "real: <agent> passed/total" and returns an error when
// not all passed.
func (h Tapes[T]) Report(passed, total int) error {
	fmt.Fprintf(h.Log, "real: %s %d/%d\n", h.Agent, passed, total)
	if passed != total {
		return fmt.Errorf("%s: %d of %d scenarios not recorded true", h.Agent, total-passed, total)
	}
	return nil
}

// ReplayAll replays every committed tape and reports passed/total.
func (h Tapes[T]) ReplayAll() bool {
	tapes, err := h.Load(h.Fixtures)
	if err != nil {
		fmt.Fprintf(h.Log, "%s: %v\n", h.Agent, err)
		return false
	}
	schemas, _ := truth.Found(h.Log)
	passed := 0
	for _, t := range tapes {
		if problems, _ := h.replay(t, schemas); len(problems) > 0 {
			fmt.Fprintf(h.Log, "  %s/%s: %s\n", h.Agent, h.Name(t), strings.Join(problems, "\n    "))
			continue
		}
		passed++
	}
	fmt.Fprintf(h.Log, "real: %s replayed %d/%d\n", h.Agent, passed, len(tapes))
	return passed == len(tapes)
}

// Test replays every committed tape (the fixtures folder is
// AEP_FIXTURES_DIR, else the repository's) as a subtest (`make test`): no
// tapes, or a tape whose record is not true, fails.
func (h Tapes[T]) Test(t *testing.T) {
	t.Helper()
	root, ok := pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	if !ok {
		t.Fatal("fixtures folder not found")
	}
	tapes, err := h.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(tapes) == 0 {
		t.Fatalf("no recorded %s tapes under %s", h.Agent, root)
	}
	schemas := truth.For(t)
	for _, tp := range tapes {
		t.Run(h.Name(tp), func(t *testing.T) {
			r := h.Replay(tp, t.TempDir(), schemas)
			if len(r.Problems) > 0 {
				t.Errorf("%s\nrecord: %s", strings.Join(r.Problems, "\n"), truth.Summary(r.Logs))
			}
		})
	}
}

// TapeServe is one tape's replay: the server playing the tape's recorded
// side, and the real channel run against it.
type TapeServe struct {
	// Server plays the tape.
	Server http.Handler
	// Vendor is the channel's mapping table.
	Vendor mapping.Vendor
	// Clock is the replay's clock (the tape's RecordedAt), so the ids'
	// embedded times read as they did live.
	Clock time.Time
	// Facts are what really happened, for the truth checker.
	Facts truth.Facts
	// Channel names the channel in its failures' problem lines
	// ("bridge").
	Channel string
	// StreamEnds says the tape's end shows as the channel's read and
	// connect failures (the stream closes, the reconnect finds nothing):
	// those are not problems.
	StreamEnds bool
	// Run runs the real channel against the tape until it is played; an
	// error is the replay's only problem (nothing is read).
	Run func(r TapeRun) error
}

// TapeRun is what the channel under replay is given.
type TapeRun struct {
	// Base is the URL of the server playing the tape; Tmp the replay's
	// folder.
	Base *url.URL
	Tmp  string
	// Handle writes into the replay's fresh AEP home (the file emitter).
	Handle shim.Handler
	// Errors collects the channel's failures.
	Errors shim.Recorder
	// Nonce mints ids at the tape's clock.
	Nonce func() string
	// Bad adds a problem.
	Bad func(format string, a ...any)
}

// Runner is a follow runner for the channel's source, writing through
// Handle and failing into Errors, reconnecting at once (a replay has no
// one to wait for).
func (r TapeRun) Runner(name string, src follow.Source) *follow.Runner {
	return &follow.Runner{Name: name, Source: src, Handle: r.Handle, Errors: r.Errors,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

// ReplayTape serves a tape to the real channel writing into a fresh AEP
// home under tmp, then checks the whole record (schemas may be nil): the
// channel's failures (besides the tape's end) and every truth violation
// are its problems.
func ReplayTape(s TapeServe, tmp string, schemas *truth.Schemas) TapeReplayed {
	var res TapeReplayed
	bad := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	srv := httptest.NewServer(s.Server)
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	cfg := shim.Config{Home: filepath.Join(tmp, "aep"), Host: "replay"}
	em := cfg.NewFileEmitter(redact.DefaultPolicy())
	ids := shim.NewIDs()
	errs := &sinktest.Failures{}
	run := TapeRun{Base: base, Tmp: tmp, Handle: em.Handler(s.Vendor), Errors: errs, Bad: bad,
		Nonce: func() string { return ids.New(s.Clock) }}
	if err := s.Run(run); err != nil {
		bad("%v", err)
		return res
	}
	for _, f := range errs.All() {
		if s.StreamEnds && (f.Stage == "connect" || f.Stage == "read") {
			continue
		}
		bad("%s failure %s: %s", s.Channel, f.Stage, f.Error)
	}
	logs, err := ReadLogs(filepath.Join(cfg.LogRoot(), s.Vendor.AgentName()))
	if err != nil {
		bad("read logs: %v", err)
		return res
	}
	res.Logs = logs
	res.Problems = append(res.Problems, truth.Check(logs, s.Facts, schemas)...)
	return res
}

// FollowUntil runs the follow runner until done closes or limit passes,
// then stops it; it reports whether done closed in time.
func FollowUntil(r *follow.Runner, done <-chan struct{}, limit time.Duration) bool {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { r.Run(ctx); close(ran) }()
	ok := true
	select {
	case <-done:
	case <-time.After(limit):
		ok = false
	}
	cancel()
	<-ran
	return ok
}

// FreePort finds a free local port (for a server that must be told its
// port before it listens).
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// LoadTapes reads every tape file named file under
// root/<agent>/recorded/*/ (agent may be a pattern: "*"), sorted by
// path; dir is told each tape's folder.
func LoadTapes[T any](root, agent, file string, dir func(*T, string)) ([]*T, error) {
	paths, err := filepath.Glob(filepath.Join(root, agent, "recorded", "*", file))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []*T
	for _, p := range paths {
		t, err := ReadTape[T](p)
		if err != nil {
			return nil, err
		}
		if dir != nil {
			dir(t, filepath.Dir(p))
		}
		out = append(out, t)
	}
	return out, nil
}

// ReadTape reads the tape file at path.
func ReadTape[T any](path string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t := new(T)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("tape %s: %w", path, err)
	}
	return t, nil
}

// SaveTape writes a tape as indented JSON into dir/file.
func SaveTape(dir, file string, t any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644)
}

// TapeScenario is what RecordAll needs of a tape harness's scenario.
type TapeScenario interface {
	ScenarioName() string
	ScenarioFacts() truth.Facts
}

// TapeHarness is a whole tape harness: the shared loop, the scenarios,
// and how the harness installs what it runs and records one scenario.
type TapeHarness[S TapeScenario, T any] struct {
	Tapes[T]
	Scenarios []S
	// Install makes sure what Record runs is in the cache.
	Install func() error
	// Record runs one scenario live: its tape and the live record.
	Record func(S) (T, []truth.Log, error)
}

// RecordAll installs, records every scenario (only the one named only,
// when set), keeps the true ones (Save into the scenario's folder), and
// reports passed/total.
func (h TapeHarness[S, T]) RecordAll(only string) error {
	if err := h.Install(); err != nil {
		return err
	}
	schemas, _ := truth.Found(h.Log)
	passed, total := 0, 0
	for _, s := range h.Scenarios {
		if only != "" && s.ScenarioName() != only {
			continue
		}
		total++
		t, live, err := h.Record(s)
		if err != nil {
			fmt.Fprintf(h.Log, "  %s/%s: %v\n", h.Agent, s.ScenarioName(), err)
			continue
		}
		dir := filepath.Join(h.Fixtures, h.Agent, "recorded", s.ScenarioName())
		if h.Keep(t, live, s.ScenarioFacts(), schemas, func() error { return h.Save(t, dir) }) {
			passed++
		}
	}
	return h.Report(passed, total)
}
