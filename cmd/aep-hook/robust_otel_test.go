//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// sidecar is a running `aep-hook otel`.
type sidecar struct {
	cmd   *exec.Cmd
	url   string // http://host:port
	home  string
	token string // the bearer token it requires
}

var otelAddr = regexp.MustCompile(`http://(\S+)/v1/logs`)

// startSidecar runs `aep-hook otel` on a free loopback port under home.
func startSidecar(t *testing.T, home string, args ...string) *sidecar {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"otel", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = hookEnv(home, t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stderr).ReadString('\n')
	m := otelAddr.FindStringSubmatch(line)
	if m == nil {
		cmd.Process.Kill()
		t.Fatalf("sidecar said %q", line)
	}
	go io.Copy(io.Discard, stderr)
	s := &sidecar{cmd: cmd, url: "http://" + m[1], home: home}
	t.Cleanup(s.stop)
	// The sidecar made the per-user token before it listened.
	if tok, err := os.ReadFile(filepath.Join(home, "token")); err == nil {
		s.token = strings.TrimSpace(string(tok))
	}
	return s
}

// stop ends the sidecar gracefully.
func (s *sidecar) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

// post sends an OTLP/protobuf log export and returns the status.
func (s *sidecar) post(t *testing.T, ld plog.Logs) int {
	t.Helper()
	body, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/logs", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// peakRSS is the sidecar's resident high-water mark (VmHWM).
func (s *sidecar) peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// codexExport is one resource of Codex records: n records spread over
// sessions conversations, with resAttr bytes of one resource attribute.
func codexExport(n, sessions, resAttr int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "codex_cli_rs")
	if resAttr > 0 {
		rl.Resource().Attributes().PutStr("deployment.notes", strings.Repeat("n", resAttr))
	}
	sl := rl.ScopeLogs().AppendEmpty()
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_790_000_000_000_000_000 + 1_000_000*uint64(i)))
		lr.Attributes().PutStr("event.name", "codex.tool_result")
		lr.Attributes().PutStr("conversation.id", "c"+strconv.Itoa(i%sessions))
		lr.Attributes().PutStr("tool_name", "shell")
		lr.Attributes().PutInt("duration_ms", int64(i))
	}
	return ld
}

// TestOtelAmplification: a 349 KB request (a 200 KB resource attribute,
// 4000 records) drove the sidecar to 1.69 GB when each record carried a copy
// of the resource; its memory now stays near the body limit.
func TestOtelAmplification(t *testing.T) {
	s := startSidecar(t, t.TempDir(), "--capture", "full")
	if status := s.post(t, codexExport(4000, 1, 200_000)); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if rss, limit := s.peakRSS(t), int64(96<<20); rss > limit {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", rss>>20, limit>>20)
	}
}

// TestOtelManySessions: one request naming 20,000 conversations used to
// create 40,001 files; it now writes to the 64 a request may touch.
func TestOtelManySessions(t *testing.T) {
	home := t.TempDir()
	s := startSidecar(t, home)
	if status := s.post(t, codexExport(20_000, 20_000, 0)); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	files := 0
	filepath.WalkDir(home, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files > 2*64+4 {
		t.Errorf("%d files written", files)
	}
}

// TestOtelSlowUploads: 40 connections uploading slowly (more than the 32
// request slots) used to leave normal exports with 503 for the 60 s read
// timeout; uploads in progress now hold no slot.
func TestOtelSlowUploads(t *testing.T) {
	s := startSidecar(t, t.TempDir())
	addr := strings.TrimPrefix(s.url, "http://")
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/logs HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-protobuf\r\nContent-Length: 100000\r\n\r\n0123456789", addr, s.token)
	}
	// Wait until the sidecar has them all in hand (a safety net bounds the
	// wait for a sidecar that cannot say).
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for giveUp := time.Now().Add(3 * time.Second); time.Now().Before(giveUp); <-tick.C {
		resp, err := http.Get(s.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		var h struct{ Uploading int }
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if h.Uploading >= 40 {
			break
		}
	}
	if status := s.post(t, codexExport(3, 1, 0)); status != http.StatusOK {
		t.Errorf("an export beside 40 slow uploads: %d, want 200", status)
	}
}

// TestOtelRetryAfterRestart: an exporter's retry of a batch the sidecar
// wrote before it restarted used to be written again with new event ids;
// the ids are now derived from the records, so the copy repeats them.
func TestOtelRetryAfterRestart(t *testing.T) {
	home := t.TempDir()
	ld := codexExport(6, 2, 0)
	for range 2 {
		s := startSidecar(t, home)
		if status := s.post(t, ld); status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		s.stop()
	}
	for _, conv := range []string{"c0", "c1"} {
		evs := readLog(t, filepath.Join(home, "logs", "codex", conv+".jsonl"))
		if len(evs) != 6 {
			t.Fatalf("%s: %d events, want 3 twice", conv, len(evs))
		}
		for i := range 3 {
			if a, b := evs[i]["id"], evs[i+3]["id"]; a != b {
				t.Errorf("%s event %d: id %v, then %v", conv, i, a, b)
			}
		}
	}
}
