package otlp

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// updateGolden rewrites testdata/output.golden from the current code: only
// when the output is meant to change.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/output.golden")

// scenario is a sequence of protobuf export requests sent to one receiver.
type scenario struct {
	name   string
	bodies [][]byte
}

// outputScenarios are the recorded Codex sessions (fixtures/codex-otel,
// OTLP/JSON ones re-encoded as protobuf so they take the fast path), the
// benchmark's requests, and random requests over every field and value
// type.
func outputScenarios(t testing.TB) []scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "fixtures", "codex-otel", "recorded", "*", "otlp.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded OTLP exports (%v)", err)
	}
	sort.Strings(files)
	var out []scenario
	for _, f := range files {
		sc := scenario{name: filepath.Base(filepath.Dir(f))}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(fh)
		s.Buffer(nil, 16<<20)
		for s.Scan() {
			var line struct {
				Proto string          `json:"proto"`
				JSON  json.RawMessage `json:"json"`
			}
			if err := json.Unmarshal(s.Bytes(), &line); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var body []byte
			if line.Proto != "" {
				if body, err = base64.StdEncoding.DecodeString(line.Proto); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
			} else {
				ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line.JSON)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				body = protoBody(t, ld)
			}
			sc.bodies = append(sc.bodies, body)
		}
		fh.Close()
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		out = append(out, sc)
	}
	out = append(out, scenario{name: "bench", bodies: benchBodies(t, 3)})
	rng := rand.New(rand.NewPCG(5, 6))
	random := scenario{name: "random"}
	for range 200 {
		random.bodies = append(random.bodies, protoBody(t, randLogs(rng)))
	}
	return append(out, random)
}

// lineSink records every line written, with its session, in order.
type lineSink struct {
	mu sync.Mutex
	b  []byte
}

func (s *lineSink) Write(agent, session string, lines [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range lines {
		s.b = append(append(append(append(s.b, agent...), 0), session...), 0)
		s.b = append(s.b, l...)
	}
	return nil
}

// runScenario sends a scenario's requests through a fresh receiver at one
// ceiling and mode, by the fast path (falling back as the handler does) or
// by pdata alone, and returns every line written.
func runScenario(t *testing.T, sc scenario, level string, mode mapping.Mode, fast bool) []byte {
	t.Helper()
	p, err := redact.ParsePolicy(level, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := &lineSink{}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	em := &shim.Emitter{Host: "h", Policy: p, Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs(), StableIDs: true,
		Now: func() time.Time { return at }}
	r, err := New(Config{Mode: mode}, em, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, body := range sc.bodies {
		var rejected int64
		decoded, werr := []flatResource(nil), errSlowPath
		var ws *wireScratch
		if fast {
			// Through the pool as the handler decodes: a scratch reused
			// from request to request must change nothing.
			ws = getScratch()
			decoded, werr = decodeWireIn(body, &keyer{}, ws)
		}
		if werr == nil {
			rejected, err = r.consumeFlat(decoded)
			ws.release()
		} else {
			if ws != nil {
				ws.release()
			}
			ld, perr := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
			if perr != nil {
				t.Fatalf("%s request %d: %v", sc.name, i, perr)
			}
			rejected, err = r.ConsumeLogs(ld)
		}
		if err != nil {
			t.Fatalf("%s request %d: %v", sc.name, i, err)
		}
		sink.b = append(sink.b, fmt.Sprintf("-- request %d rejected %d\n", i, rejected)...)
	}
	return sink.b
}

// TestOutputUnchanged holds the receiver's output, byte for byte, at every
// capture ceiling in both modes, over the recorded Codex sessions, the
// benchmark's requests and random ones: the fast path writes what the pdata
// path writes, and both what testdata/output.golden recorded (digests of
// the output as it was before the speedups; regenerate with
// -update-golden only for a change meant to alter the output).
func TestOutputUnchanged(t *testing.T) {
	golden := map[string]string{}
	gpath := filepath.Join("testdata", "output.golden")
	if b, err := os.ReadFile(gpath); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				golden[k] = v
			}
		}
	} else if !*updateGolden {
		t.Fatal(err)
	}
	var lines []string
	for _, sc := range outputScenarios(t) {
		for _, level := range []string{"none", "metadata", "redacted", "full"} {
			for _, mode := range []mapping.Mode{mapping.Companion, mapping.Primary} {
				name := fmt.Sprintf("%s/%s/%s", sc.name, level, mode)
				fast := runScenario(t, sc, level, mode, true)
				slow := runScenario(t, sc, level, mode, false)
				if string(fast) != string(slow) {
					t.Errorf("%s: the fast path's output differs from pdata's:\n%s", name, firstDiff(fast, slow))
				}
				sum := sha256.Sum256(fast)
				got := hex.EncodeToString(sum[:])
				lines = append(lines, name+" "+got)
				if want := golden[name]; !*updateGolden && want != got {
					t.Errorf("%s: output digest %s, golden %s", name, got, want)
				}
			}
		}
	}
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(gpath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// firstDiff shows where two outputs part.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n fast  %q\n pdata %q", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}
