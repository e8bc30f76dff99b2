package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/coder/websocket"
)

// TestSlowConsumer: a consumer that stops reading is cut once its queue
// holds more bytes than --queue, with a closing frame carrying the positions
// it was delivered, and neither ingest nor another consumer waits for it
// (AEP-0003 §8.4). The bound (2 MiB) passes one batch of the test's
// (800 KB), so the consumer that reads is never cut.
func TestSlowConsumer(t *testing.T) {
	p := startRelay(t, "", "--queue", "2097152", "--write-wait", "5m")
	fast := p.stream(nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	slow, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/socket", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + p.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	slow.SetReadLimit(1 << 20)
	slow.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","versions":["0.1"],"role":"consumer"}`))
	slow.Write(ctx, websocket.MessageText, []byte(`{"type":"subscribe","id":"slow"}`))
	for _, want := range []string{"hello", "subscribed"} {
		_, b, err := slow.Read(ctx)
		if err != nil || !strings.Contains(string(b), `"type":"`+want+`"`) {
			t.Fatalf("%s: %s %v", want, b, err)
		}
	}
	// The slow consumer reads nothing more while 24 MB go by.
	pad := strings.Repeat("x", 80<<10)
	const n = 300
	for i := 0; i < n; i += 10 {
		var lines []string
		for j := i; j < i+10; j++ {
			lines = append(lines, mkEvent("progress.status", "a", "big", j, `,"data":{"pad":"`+pad+`"}`))
		}
		if st, m := p.post(strings.Join(lines, "\n"), "application/x-ndjson", ""); st != 202 {
			t.Fatalf("ingest waited on or failed for a slow consumer: %d %v", st, m)
		}
		// The fast consumer keeps up (and so paces the test, not the relay).
		for j := i; j < i+10; j++ {
			if m := fast.next(false); !strings.Contains(m.Data, fmt.Sprintf(`"seq":%d,`, j)) {
				t.Fatalf("the fast consumer's event %d: %.80s", j, m.Data)
			}
		}
	}
	// Reading again, it finds what was on the wire, then the closing frame
	// (within a wait of its own: the 300 events above took theirs).
	ctx, cancel = context.WithTimeout(context.Background(), wait)
	defer cancel()
	last := -1
	for {
		_, b, err := slow.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
				t.Fatalf("closed with %v, want 1013 after a closing frame", err)
			}
			t.Fatal("closed without a closing frame")
		}
		var f map[string]any
		json.Unmarshal(b, &f)
		if f["type"] == "closing" {
			reason, _ := f["reason"].(string)
			del, _ := json.Marshal(f["delivered"])
			want := fmt.Sprintf(`[{"epoch":0,"seq":%d,"session":"big","sub":"slow"}]`, last)
			if !strings.Contains(reason, "slow consumer") || string(del) != want {
				t.Errorf("closing frame %s, want delivered %s", b, want)
			}
			break
		}
		if s, ok := f["seq"].(float64); ok {
			last = int(s)
		}
	}
	if last >= n-1 {
		t.Errorf("the slow consumer was never cut (it got everything)")
	}
	_, _, err = slow.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("close: %v", err)
	}
}

// TestDrain: SIGTERM ends every stream in order (": shutting-down" to SSE,
// a closing frame and 1001 to WebSocket) and the relay exits 0, which it
// does only when the drain finished within its 5 s.
func TestDrain(t *testing.T) {
	p := startRelay(t, "")
	s := p.stream(nil)
	w := p.mustDial("", "consumer", "c", "")
	w.send(`{"type":"subscribe","id":"d"}`)
	w.expect("subscribed")
	e := mkEvent("tool.completed", "a", "s", 4, "")
	p.post(e, "application/json", "")
	s.next(false)
	w.next()
	if err := p.stop(); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.output())
	}
	ms := s.rest()
	if len(ms) == 0 || ms[len(ms)-1].Comment != "shutting-down" {
		t.Errorf("SSE end: %+v", ms)
	}
	frames, err := w.closed()
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("WebSocket close: %v", err)
	}
	if len(frames) == 0 || frames[len(frames)-1].typ() != "closing" {
		t.Fatalf("no closing frame: %v", frames)
	}
	del, _ := json.Marshal(frames[len(frames)-1].m["delivered"])
	if string(del) != `[{"epoch":0,"seq":4,"session":"s","sub":"d"}]` {
		t.Errorf("closing frame: %s", frames[len(frames)-1].raw)
	}
}

// TestMaxConns: past --max-conns a stream is refused, and the ones open
// are undisturbed.
func TestMaxConns(t *testing.T) {
	p := startRelay(t, "", "--max-conns", "2")
	a := p.stream(nil)
	w := p.mustDial("", "consumer", "c", "")
	if s := p.stream(nil); s.Status != 503 || !strings.Contains(string(s.Body), "limit-exceeded") {
		t.Errorf("third stream: %d %s", s.Status, s.Body)
	}
	x, _, err := p.dial("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.closed(); websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("third socket: %v", err)
	}
	e := mkEvent("tool.completed", "a", "s", 0, "")
	w.send(`{"type":"subscribe","id":"x"}`)
	w.expect("subscribed")
	p.post(e, "application/json", "")
	if m := a.next(false); m.Data != e {
		t.Errorf("%+v", m)
	}
	if f := w.next(); string(f.raw) != e {
		t.Errorf("%s", f.raw)
	}
}

// TestSessionCap: past --max-sessions the session written least recently
// goes whole, and a resume into it gets replay-exhausted; an active
// long-lived one stays.
func TestSessionCap(t *testing.T) {
	p := startRelay(t, "", "--max-sessions", "2")
	p.post(mkEvent("tool.completed", "a", "old", 0, ""), "application/json", "")
	p.post(mkEvent("tool.completed", "a", "idle", 0, ""), "application/json", "")
	p.post(mkEvent("tool.completed", "a", "old", 1, ""), "application/json", "")
	p.post(mkEvent("tool.completed", "a", "new", 0, ""), "application/json", "")
	var sessions []string
	for _, m := range p.stream(q("from", "all", "live", "0")).rest() {
		var ev map[string]any
		json.Unmarshal([]byte(m.Data), &ev)
		sessions = append(sessions, fmt.Sprint(ev["session"], ev["seq"]))
	}
	if strings.Join(sessions, ",") != "old0,old1,new0" {
		t.Errorf("held: %v", sessions)
	}
	// A resume into the session that went is told of the gap, not met
	// with silence.
	ms := p.stream(q("from", `[{"session":"idle","epoch":0,"seq":-1}]`, "live", "0")).rest()
	if len(ms) != 1 || ms[0].Comment != "replay-exhausted idle 0:1" {
		t.Errorf("resume into an evicted session: %+v", ms)
	}
}

// TestRestart: across kill -9 of the relay and a restart, every event a
// hook wrote (also while the relay was down) and every event the relay
// acknowledged is served, each position once; a resume by position gets
// exactly what came after it; a client's retry of acknowledged events is
// recognised as a duplicate.
func TestRestart(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "logs", "claude-code")
	os.MkdirAll(dir, 0o700)
	logf, err := os.OpenFile(filepath.Join(dir, "loc.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	var mu sync.Mutex
	written := 0
	appendLog := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < n; i++ {
			fmt.Fprintln(logf, mkEvent("tool.completed", "claude-code", "loc", written, ""))
			written++
		}
	}
	p := startRelay(t, home)
	s := p.stream(nil)
	appendLog(20)
	var acked []string
	for i := 0; i < 20; i++ {
		e := mkEvent("tool.completed", "remote", "net", i, "")
		if st, _ := p.post(e, "application/json", ""); st == 202 {
			acked = append(acked, e)
		}
	}
	s.events(40)
	// The relay dies hard while a hook keeps writing and a client posts.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// At most 500 more lines (the replay buffer holds 1000).
		for i := 0; i < 500; i++ {
			select {
			case <-stop:
				return
			default:
				appendLog(1)
				runtime.Gosched()
			}
		}
	}()
	for i := 20; i < 60; i++ {
		if i == 40 {
			p.cmd.Process.Signal(syscall.SIGKILL)
		}
		e := mkEvent("tool.completed", "remote", "net", i, "")
		if st, _ := p.postQuiet(e); st == 202 {
			acked = append(acked, e)
		}
	}
	p.kill()
	close(stop)
	wg.Wait()
	appendLog(10) // written while it is down
	p2 := startRelay(t, home)
	all := p2.stream(q("from", "all", "live", "0")).rest()
	seen := map[string]int{}
	for _, m := range all {
		seen[m.Data]++
	}
	for _, e := range acked {
		if seen[e] != 1 {
			t.Errorf("acknowledged event served %d times: %s", seen[e], e)
		}
	}
	mu.Lock()
	total := written
	mu.Unlock()
	for i := 0; i < total; i++ {
		e := mkEvent("tool.completed", "claude-code", "loc", i, "")
		if seen[e] != 1 {
			t.Errorf("log line %d served %d times", i, seen[e])
		}
	}
	for d, n := range seen {
		if n != 1 {
			t.Errorf("served %d times: %s", n, d)
		}
	}
	// Resume by position: exactly what followed.
	tail := p2.stream(q("from", `[{"session":"loc","epoch":0,"seq":`+fmt.Sprint(total-3)+`}]`, "live", "0")).rest()
	if countEvents(tail) != 2 {
		t.Errorf("resume: %+v", tail)
	}
	for _, e := range acked {
		if st, m := p2.post(e, "application/json", ""); st != 202 || m["duplicates"] != 1.0 {
			t.Errorf("a retried event after the restart: %d %v", st, m)
		}
	}
	// New lines flow after the restart.
	live := p2.stream(nil)
	appendLog(1)
	if m := live.next(false); m.Data != mkEvent("tool.completed", "claude-code", "loc", total, "") {
		t.Errorf("after restart: %+v", m)
	}
}
