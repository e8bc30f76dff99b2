package acp

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// updateGolden rewrites testdata/golden.txt from the code as it is: run it
// only on a revision whose output is the reference.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.txt")

// goldenFile holds, per recorded session and way of observing it, the
// SHA-256 of every event the observer emitted. A change meant as a pure
// speedup of observation must leave every digest as it is.
const goldenFile = "testdata/golden.txt"

// wireLine is one relayed line of a recorded transcript.
type wireLine struct {
	dir  Direction
	line []byte
}

// loadTranscripts reads the relayed lines of every recorded ACP session
// under fixtures/, by recording name, plus a synthetic burst of the
// benchmarks' lines with calls opened, updated and closed.
func loadTranscripts(t *testing.T) map[string][]wireLine {
	t.Helper()
	dirs, err := filepath.Glob("../../fixtures/acp/recorded/*/transcript.jsonl")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded ACP transcripts: %v", err)
	}
	out := map[string][]wireLine{}
	for _, path := range dirs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var lines []wireLine
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var rec struct {
				Dir  string `json:"dir"`
				Line string `json:"line"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			switch rec.Dir {
			case "c2a":
				lines = append(lines, wireLine{ClientToAgent, []byte(rec.Line)})
			case "a2c":
				lines = append(lines, wireLine{AgentToClient, []byte(rec.Line)})
			}
		}
		out[filepath.Base(filepath.Dir(path))] = lines
	}
	var burst []wireLine
	add := func(d Direction, format string, args ...any) {
		burst = append(burst, wireLine{d, fmt.Appendf(nil, format, args...)})
	}
	add(ClientToAgent, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	add(AgentToClient, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"bench","version":"1"}}}`)
	add(ClientToAgent, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}`)
	add(AgentToClient, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_bench"}}`)
	add(ClientToAgent, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_bench","prompt":[{"type":"text","text":"build it"}]}}`)
	for i := range 200 {
		switch i % 5 {
		case 0:
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call","toolCallId":"tc%d","status":"pending","title":"make","kind":"execute","rawInput":{"command":"make %d"}}}}`, i, i)
		case 3:
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc%d","status":"completed","rawOutput":{"exit":0}}}}`, i-3)
		case 4:
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc%d","status":"failed"}}}`, i)
		default:
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"tc%d","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"line %d of the build output, nothing to see here"}}]}}}`, i-i%5, i)
		}
		if i%50 == 7 {
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d"}}}}`, i)
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"usage_update","used":%d,"size":200000,"cost":{"amount":0.5,"currency":"USD"}}}}`, i)
			add(AgentToClient, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bench","update":{"sessionUpdate":"plan","entries":[{"content":"a","status":"pending"},{"content":"b","status":"in_progress"}]}}}`)
		}
	}
	add(AgentToClient, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`)
	out["synthetic-burst"] = burst
	return out
}

// goldenRun observes lines as the tee would and returns the digest of what
// the emitter wrote. batched queues each direction's consecutive lines as
// one chunk and lets the observer batch them; otherwise each line is its
// own chunk and batch. Every chunk is overwritten once the observer is done
// with it, as a pooled buffer is reused, so output that still referred to
// the wire bytes after their batch shows here.
func goldenRun(t *testing.T, lines []wireLine, policy redact.Policy, deltas, batched bool) string {
	t.Helper()
	var out bytes.Buffer
	sink := sinkFunc(func(agent, session string, ls [][]byte) error {
		for _, l := range ls {
			fmt.Fprintf(&out, "%s\t%s\t%s", agent, session, l)
		}
		return nil
	})
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	em := &shim.Emitter{Host: "golden", Policy: policy, Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs(), StableIDs: true,
		Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }}
	n := 0
	q := newQueue(DefaultQueueLines, DefaultQueueBytes)
	o := &observer{q: q, join: newJoiner(), handle: em.Handler(mapping.ACP()), stats: &Stats{}, tee: "T",
		deltas: deltas, nonce: func() string { n++; return fmt.Sprintf("nonce%06d", n) },
		maxLine: DefaultMaxLine, clock: func() time.Duration { return 0 }}
	o.conn.lane = mapping.UnknownSession + "-T"
	stop := make(chan struct{})
	close(stop)
	var queued [][]byte
	flush := func() {
		for len(q.ch) > 0 {
			o.take(<-q.ch, stop)
		}
		for _, c := range queued {
			for i := range c {
				c[i] = 'x'
			}
		}
		queued = queued[:0]
	}
	offer := func(it item) {
		if !q.offer(it) {
			t.Fatal("queue refused a chunk")
		}
		queued = append(queued, it.chunk)
	}
	for i := 0; i < len(lines); {
		j := i + 1
		if batched {
			for j < len(lines) && lines[j].dir == lines[i].dir {
				j++
			}
		}
		var chunk []byte
		for _, l := range lines[i:j] {
			chunk = append(append(chunk, l.line...), '\n')
		}
		offer(item{dir: lines[i].dir, chunk: chunk, lines: j - i})
		if !batched || len(q.ch) > 8 {
			flush()
		}
		i = j
	}
	offer(item{dir: ClientToAgent, eof: true})
	offer(item{dir: AgentToClient, eof: true})
	flush()
	o.finish(endExited)
	return fmt.Sprintf("%x", sha256.Sum256(out.Bytes()))
}

// sinkFunc is a Sink of one function.
type sinkFunc func(agent, session string, lines [][]byte) error

func (f sinkFunc) Write(agent, session string, lines [][]byte) error { return f(agent, session, lines) }

// TestObservedEventsGolden holds what the observer emits for every
// recorded ACP session (and a synthetic burst), at every capture ceiling,
// with and without deltas, a line at a time and batched, to the digests in
// goldenFile: observation's speedups must not change one byte.
func TestObservedEventsGolden(t *testing.T) {
	policies := map[string]redact.Policy{}
	for _, l := range []string{"none", "metadata", "redacted", "full"} {
		p, err := redact.ParsePolicy(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		policies[l] = p
	}
	recs := loadTranscripts(t)
	var got []string
	for name, lines := range recs {
		for pname, p := range policies {
			for _, deltas := range []bool{false, true} {
				for _, batched := range []bool{false, true} {
					key := fmt.Sprintf("%s %s deltas=%v batched=%v", name, pname, deltas, batched)
					got = append(got, key+" "+goldenRun(t, lines, p, deltas, batched))
				}
			}
		}
	}
	slices.Sort(got)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (go test -run Golden -update-golden on the reference revision)", err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(want) != len(got) {
		t.Fatalf("%d digests, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("got  %s\nwant %s", got[i], want[i])
		}
	}
}
