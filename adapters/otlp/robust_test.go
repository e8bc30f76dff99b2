package otlp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// TestSessionsPerRequestCapped: one request naming 100 conversations writes
// to the first MaxSessions of them and refuses the rest's records (one
// request of 20,000 conversation ids used to create 40,001 files).
func TestSessionsPerRequestCapped(t *testing.T) {
	e := newEnv(t, Config{MaxSessions: 10})
	var recs []rec
	for i := range 100 {
		recs = append(recs, codexRec(fmt.Sprintf("c%03d", i), "codex.tool_result", "tool_name", "shell", "success", "true"))
		recs = append(recs, codexRec(fmt.Sprintf("c%03d", i), "codex.tool_result", "tool_name", "shell", "success", "false"))
	}
	rejected, err := e.r.ConsumeLogs(logsOf(codexRes, recs...))
	if err != nil || rejected != 180 {
		t.Fatalf("rejected %d (err %v), want 180", rejected, err)
	}
	logs, _ := filepath.Glob(filepath.Join(e.logDir("codex"), "*.jsonl"))
	if len(logs) != 10 {
		t.Errorf("%d session logs, want 10", len(logs))
	}
	if evs := e.events(t, "codex", "c009"); len(evs) != 2 {
		t.Errorf("the 10th session has %d events, want 2", len(evs))
	}
}

// TestStableIDsAcrossRestart: a batch received again by a new receiver (the
// sidecar restarted, its dedupe window gone) is written with the same event
// ids, so consumers deduplicating on (source, id) drop the copy.
func TestStableIDsAcrossRestart(t *testing.T) {
	home := t.TempDir()
	ld := logsOf(codexRes, numbered("c", 0, 5)...)
	for range 2 {
		em := shim.Config{Home: home, Host: "h"}.NewFileEmitter(redact.DefaultPolicy())
		em.StableIDs = true
		r, err := New(Config{}, em, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ConsumeLogs(ld); err != nil {
			t.Fatal(err)
		}
	}
	log := &shim.JSONL{Root: filepath.Join(home, "logs")}
	b, _ := os.ReadFile(log.Path("codex", "c"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines, want the 5 events twice", len(lines))
	}
	ids := func(ls []string) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l[strings.Index(l, `"id":`):][:34])
		}
		return out
	}
	first, second := ids(lines[:5]), ids(lines[5:])
	seen := map[string]bool{}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("event %d: id %s, then %s", i, first[i], second[i])
		}
		if seen[first[i]] {
			t.Errorf("id %s given to two records", first[i])
		}
		seen[first[i]] = true
	}
}

// slowUpload opens a connection that sends a log export's headers and the
// first bytes of its body, then stalls: an upload in progress.
func slowUpload(t *testing.T, url string) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 1000\r\n\r\n0123456789", PathLogs, addr, typeProto)
	return c
}

// waitFor polls cond until it holds: a state of the receiver reached by
// requests on other connections, which nothing else signals.
func waitFor(cond func() bool) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		<-tick.C
	}
}

// TestSlowUploadsHoldNoSlot: uploads in progress, however many and however
// slow, hold no request slot (32 slow connections used to hold them all,
// and normal exports got 503 for the 60 s read timeout); and a body that
// does not arrive within BodyTimeout is cut with a retryable 503.
func TestSlowUploadsHoldNoSlot(t *testing.T) {
	e := newEnv(t, Config{MaxConcurrent: 2, BodyTimeout: time.Hour})
	for range 5 {
		slowUpload(t, e.srv.URL)
	}
	waitFor(func() bool { return e.r.Stats().Uploading == 5 })
	if status, _, _ := e.post(t, PathLogs, typeProto, "", protoBody(t, logsOf(codexRes, numbered("c", 0, 1)...))); status != http.StatusOK {
		t.Errorf("an export beside 5 slow uploads: %d, want 200", status)
	}

	cut := newEnv(t, Config{BodyTimeout: 50 * time.Millisecond})
	c := slowUpload(t, cut.srv.URL)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a stalled body: %d, want a retryable 503", resp.StatusCode)
	}
}

// TestBufferedBound: the bodies arriving at once hold at most MaxBuffered
// bytes; a body that would pass it gets a retryable 503.
func TestBufferedBound(t *testing.T) {
	body := protoBody(t, logsOf(codexRes, numbered("c", 0, 20)...))
	e := newEnv(t, Config{MaxRequestBytes: 1 << 20, MaxBuffered: int64(len(body)) + 5})
	slowUpload(t, e.srv.URL)
	waitFor(func() bool { return e.r.buffered.Load() == 10 }) // its first bytes are in
	if status, _, _ := e.post(t, PathLogs, typeProto, "", body); status != http.StatusServiceUnavailable {
		t.Errorf("over the buffered bound: %d, want 503", status)
	}
	if got := e.r.buffered.Load(); got != 10 {
		t.Errorf("%d bytes held after the refusal, want the slow upload's 10", got)
	}
}
