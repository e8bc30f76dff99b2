package deliver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/shim"
)

// got is one event as the collector received it.
type got struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Seq     int64  `json:"seq"`
	Sev     string `json:"severity"`
}

// collector is a loopback AEP collector that validates every request
// against AEP-0003 §3.2 and records the events it accepted, in order.
type collector struct {
	t     testing.TB
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	events   []got
	requests int
	bad      []string // protocol violations seen
	// fault, when set, may answer a request instead of accepting it; it
	// sees the request number (from 1) and the decoded batch.
	fault func(n int, batch []got, w http.ResponseWriter, r *http.Request) bool
}

func newCollector(t testing.TB) *collector {
	c := &collector{t: t}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) violation(format string, a ...any) {
	c.mu.Lock()
	c.bad = append(c.bad, fmt.Sprintf(format, a...))
	c.mu.Unlock()
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/events" {
		c.violation("%s %s", r.Method, r.URL.Path)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if v := r.Header.Get("AEP-Version"); v != "0.1" {
		c.violation("AEP-Version %q", v)
	}
	if c.token != "" && r.Header.Get("Authorization") != "Bearer "+c.token {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var batch []got
	switch ct := r.Header.Get("Content-Type"); ct {
	case "application/json":
		var g got
		if json.Unmarshal(body, &g) != nil || bytes.Contains(body, []byte{'\n'}) {
			c.violation("single event body is not one JSON object")
		}
		batch = append(batch, g)
	case "application/x-ndjson":
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var g got
			if json.Unmarshal(sc.Bytes(), &g) != nil {
				c.violation("ndjson line is not JSON")
			}
			batch = append(batch, g)
		}
		if len(batch) < 2 {
			c.violation("ndjson batch of %d", len(batch))
		}
	default:
		c.violation("content type %q", ct)
	}
	c.mu.Lock()
	c.requests++
	n := c.requests
	fault := c.fault
	c.mu.Unlock()
	if fault != nil && fault(n, batch, w, r) {
		return
	}
	c.mu.Lock()
	c.events = append(c.events, batch...)
	c.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (c *collector) setFault(f func(n int, batch []got, w http.ResponseWriter, r *http.Request) bool) {
	c.mu.Lock()
	c.fault = f
	c.mu.Unlock()
}

func (c *collector) received() []got {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]got(nil), c.events...)
}

func (c *collector) check() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bad {
		c.t.Errorf("protocol violation: %s", b)
	}
}

// dest returns the collector as a destination.
func (c *collector) dest(t testing.TB) Destination {
	d, err := ParseDestination(c.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// writeLog appends n events of (agent, session) with seqs from seq0; sev
// picks each one's severity ("" = info).
func writeLog(t testing.TB, root, agent, session string, seq0, n int, sev func(i int) string) []string {
	t.Helper()
	j := &shim.JSONL{Root: root}
	ids := shim.NewIDs()
	var out []string
	var lines [][]byte
	base := time.Date(2026, 7, 3, 10, 0, 0, 0, time.UTC)
	for i := range n {
		seq, epoch := int64(seq0+i), int64(0)
		tm := base.Add(time.Duration(seq0+i) * time.Millisecond)
		ev := shim.Event{AEP: "0.1", ID: ids.New(tm), Type: "tool.completed", Time: tm.Format("2006-01-02T15:04:05.000Z"),
			Source: "aep://h/agent/" + agent + "/session/" + session, Agent: agent, Session: session,
			Seq: &seq, Epoch: &epoch, Capture: "metadata",
			Data: map[string]any{"tool": map[string]any{"name": "Bash", "call_id": fmt.Sprintf("t%d", seq)}, "status": "success"}}
		if sev != nil {
			ev.Severity = sev(seq0 + i)
		}
		l, err := ev.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
		out = append(out, ev.ID)
	}
	if err := j.Write(agent, session, lines); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantDelivered checks that every id arrived at least once and that each
// session's first deliveries came in seq order.
func wantDelivered(t testing.TB, evs []got, ids []string) {
	t.Helper()
	seen := map[string]bool{}
	last := map[string]int64{}
	for _, e := range evs {
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		if l, ok := last[e.Session]; ok && e.Seq <= l {
			t.Errorf("session %s: seq %d first delivered after %d", e.Session, e.Seq, l)
		}
		last[e.Session] = e.Seq
	}
	missing := 0
	for _, id := range ids {
		if !seen[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d events never delivered", missing, len(ids))
	}
}

// newShipper returns a shipper over a fresh home with quick retries.
func newShipper(t testing.TB, dests ...Destination) *Shipper {
	home := t.TempDir()
	return &Shipper{
		Home: home, LogRoot: filepath.Join(home, "logs"), Dests: dests,
		Errors:  &shim.ErrorLog{Path: filepath.Join(home, "internal", "errors.jsonl")},
		Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		RetryFor: 2 * time.Second, LockWait: 2 * time.Second, RequestTimeout: 5 * time.Second,
	}
}

func failures(t testing.TB, s *Shipper) []shim.Failure {
	fs, _ := shim.ReadFailures(s.Errors.Path)
	return fs
}

func readRejected(t testing.TB, s *Shipper, d Destination) []Rejection {
	b, err := os.ReadFile(RejectedPath(s.Home, d))
	if err != nil {
		return nil
	}
	var out []Rejection
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r Rejection
		if json.Unmarshal([]byte(l), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}
