package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// aepSink is a loopback AEP collector recording the ids it accepted; hang
// makes it hold every request until the client gives up.
type aepSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	ids  []string
	hang bool
	bad  []string
}

func newAEPSink(t testing.TB) *aepSink {
	a := &aepSink{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		hang := a.hang
		a.mu.Unlock()
		body, _ := io.ReadAll(r.Body) // a read body lets the server see the client leave
		if hang {
			<-r.Context().Done()
			return
		}
		if r.URL.Path != "/events" || r.Header.Get("AEP-Version") != "0.1" {
			a.mu.Lock()
			a.bad = append(a.bad, r.URL.Path+" "+r.Header.Get("AEP-Version"))
			a.mu.Unlock()
		}
		for _, l := range bytes.Split(bytes.TrimSpace(body), []byte{'\n'}) {
			var e struct{ ID string }
			if json.Unmarshal(l, &e) == nil {
				a.mu.Lock()
				a.ids = append(a.ids, e.ID)
				a.mu.Unlock()
			}
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *aepSink) setHang(h bool) {
	a.mu.Lock()
	a.hang = h
	a.mu.Unlock()
}

func (a *aepSink) received() map[string]bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[string]bool{}
	for _, id := range a.ids {
		m[id] = true
	}
	return m
}

func logIDs(t testing.TB, home string) []string {
	t.Helper()
	var ids []string
	filepath.WalkDir(filepath.Join(home, "logs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
			var e struct{ ID string }
			if json.Unmarshal(l, &e) == nil && e.ID != "" {
				ids = append(ids, e.ID)
			}
		}
		return nil
	})
	return ids
}

// hookInProcess runs one hook firing through run(), as the binary does.
func hookInProcess(tb testing.TB, env map[string]string, payload []byte, args ...string) (string, int) {
	var out, errb bytes.Buffer
	code := run(append([]string{"aep-hook"}, args...), Streams{In: bytes.NewReader(payload), Out: &out, Err: &errb}, func(k string) string { return env[k] })
	return out.String(), code
}

// TestHookDeliversOwnLines: with AEP_OUT, a hook's own events reach the
// collector with the ids of the log.
func TestHookDeliversOwnLines(t *testing.T) {
	a := newAEPSink(t)
	home := t.TempDir()
	env := map[string]string{"AEP_HOME": home, "AEP_HOST": "h", "AEP_OUT": a.srv.URL}
	for i := range 3 {
		if _, code := hookInProcess(t, env, codexTool("d1", i), "codex"); code != 0 {
			t.Fatalf("exit %d", code)
		}
	}
	got := a.received()
	ids := logIDs(t, home)
	if len(ids) == 0 {
		t.Fatal("nothing logged")
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("event %s logged but not delivered", id)
		}
	}
	if len(a.bad) > 0 {
		t.Errorf("bad requests: %v", a.bad)
	}
}

// TestHookHangingCollectorThenShip: a hanging collector costs each hook at
// most its delivery deadline and the reply stays neutral; once it
// recovers, `aep-hook ship` delivers every event; --status says so.
func TestHookHangingCollectorThenShip(t *testing.T) {
	a := newAEPSink(t)
	a.setHang(true)
	home := t.TempDir()
	env := map[string]string{"AEP_HOME": home, "AEP_HOST": "h", "AEP_OUT": a.srv.URL, "AEP_DELIVER_DEADLINE": "100ms"}
	var plain string
	for i := range 3 {
		start := time.Now()
		out, code := hookInProcess(t, env, codexTool("hang", i), "codex")
		t.Logf("hook %d took %s with the collector hanging", i, time.Since(start))
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		if i == 0 {
			plain, _ = hookInProcess(t, map[string]string{"AEP_HOME": t.TempDir()}, codexTool("x", 0), "codex")
		}
		if out != plain {
			t.Errorf("reply %q differs from the JSONL-only hook's %q", out, plain)
		}
	}
	if len(a.received()) != 0 {
		t.Fatal("a hanging collector accepted events")
	}
	a.setHang(false)
	t.Setenv("AEP_HOME", home)
	var out, errb bytes.Buffer
	if code := run([]string{"aep-hook", "ship", "--out", a.srv.URL}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" }); code != 0 {
		t.Fatalf("ship exit %d: %s", code, errb.String())
	}
	got := a.received()
	for _, id := range logIDs(t, home) {
		if !got[id] {
			t.Errorf("event %s not delivered by ship", id)
		}
	}
	out.Reset()
	run([]string{"aep-hook", "ship", "--status"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" })
	if !strings.Contains(out.String(), "up to date") || !strings.Contains(out.String(), "resolved since") {
		t.Errorf("ship --status:\n%s", out.String())
	}
	out.Reset()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("AEP_OUT", a.srv.URL)
	run([]string{"aep-hook", "doctor", "--no-probe"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" })
	if !strings.Contains(out.String(), "dropped by backpressure: 0") {
		t.Errorf("doctor lacks the delivery section:\n%s", out.String())
	}
}

// TestShipRefusesPlainToken: a token over plain http off the machine is
// refused before anything is sent.
func TestShipRefusesPlainToken(t *testing.T) {
	t.Setenv("AEP_HOME", t.TempDir())
	var out, errb bytes.Buffer
	code := run([]string{"aep-hook", "ship", "--out", "http://collector.example:8787", "--token", "Zq9tK"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(string) string { return "" })
	if code != 2 || !strings.Contains(errb.String(), "--insecure") || strings.Contains(errb.String(), "Zq9tK") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

func benchHook(b *testing.B, out string) {
	env := map[string]string{"AEP_HOME": b.TempDir(), "AEP_HOST": "h"}
	if out != "" {
		env["AEP_OUT"] = out
	}
	payload := codexTool("bench", 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, code := hookInProcess(b, env, payload, "codex"); code != 0 {
			b.Fatal(code)
		}
	}
}

// BenchmarkHookReachable: a hook that also delivers to a loopback collector.
func BenchmarkHookReachable(b *testing.B) { benchHook(b, newAEPSink(b).srv.URL) }

// BenchmarkHookReachableBaseline: the same hook, JSONL only.
func BenchmarkHookReachableBaseline(b *testing.B) { benchHook(b, "") }

// BenchmarkHookUnreachable: nothing listens at the collector's address.
func BenchmarkHookUnreachable(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	benchHook(b, "http://"+addr)
}

// BenchmarkHookUnreachableBaseline: the same hook, JSONL only.
func BenchmarkHookUnreachableBaseline(b *testing.B) { benchHook(b, "") }

// BenchmarkHookHanging: the collector accepts connections and never
// answers; each hook pays its delivery deadline.
func BenchmarkHookHanging(b *testing.B) {
	a := newAEPSink(b)
	a.setHang(true)
	benchHook(b, a.srv.URL)
}

// BenchmarkHookHangingBaseline: the same hook, JSONL only.
func BenchmarkHookHangingBaseline(b *testing.B) { benchHook(b, "") }
