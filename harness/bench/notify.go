package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// notifyPaced is how many requests the notify latency writes, one every
// notifyPace (a steady trickle: the figure is the path's delay, not a
// queue's).
const (
	notifyPaced = 200
	notifyPace  = 15 * time.Millisecond
	notifyHooks = 40
)

// pushServer is an ntfy-compatible push server on 127.0.0.1: it answers
// every publish and notes when each session's first arrived.
type pushServer struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	at   map[string]time.Time
	seen chan string
}

var pushSession = regexp.MustCompile(`session (\S+) on `)

func startPush() (*pushServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &pushServer{url: "http://" + ln.Addr().String(), at: map[string]time.Time{}, seen: make(chan string, 1024)}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		now := time.Now()
		var m struct {
			Message string `json:"message"`
		}
		json.Unmarshal(b, &m)
		w.Write([]byte(`{"id":"bench"}`))
		s := pushSession.FindStringSubmatch(m.Message)
		if s == nil {
			return
		}
		p.mu.Lock()
		_, dup := p.at[s[1]]
		if !dup {
			p.at[s[1]] = now
		}
		p.mu.Unlock()
		if !dup {
			p.seen <- s[1]
		}
	})}
	go p.srv.Serve(ln)
	return p, nil
}

// when is when session's first push arrived, if it has.
func (p *pushServer) when(session string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.at[session]
	return t, ok
}

// awaitN waits until n sessions have arrived or limit passes.
func (p *pushServer) awaitN(n int, limit time.Duration) {
	deadline := time.After(limit)
	for {
		p.mu.Lock()
		got := len(p.at)
		p.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-p.seen:
		case <-deadline:
			return
		}
	}
}

// startNotifier runs `aep-hook notify` with conf and waits until it reads
// the relay.
func startNotifier(bin, home, conf string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, "notify", "--config", conf)
	cmd.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=bench")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start notify: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "reading http://") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
		return cmd, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("notify did not start")
	}
}

// attentionEvent is a Claude Code permission card as the hook writes it,
// its id carrying i (the SSE watcher's key) and its session the push
// server's.
func attentionEvent(i int, at time.Time) string {
	s := fmt.Sprintf("nb%d", i)
	return fmt.Sprintf(`{"aep":"0.1","id":"b%d","type":"attention.requested","subject":"Bash","time":%q,"source":"aep://bench/agent/claude-code/session/%s","agent":"claude-code","session":%q,"seq":0,"epoch":0,"severity":"notice","capture":"redacted","data":{"kind":"permission","options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}],"prompt":"Permission requested: Bash — ls"}}`,
		i, at.UTC().Format("2006-01-02T15:04:05.000Z"), s, s)
}

// notifyFigures prints the notifier's figures beside their
// baseline from the same run: the time from a hook writing
// attention.requested to an ntfy-compatible push server on loopback
// receiving it, through a real relay and `aep-hook notify`, against the
// same relay's SSE delivery of the same events to a plain subscriber
// (the hop the notifier reads from); then the same from a whole hook
// process's start.
func notifyFigures(bin, tmp string) ([]goal, error) {
	fmt.Println()
	fmt.Printf("== notify (an ntfy route to a push server on 127.0.0.1; baseline: the relay's SSE delivery of the same events to a plain subscriber; this machine is shared with other sessions, load average %s)\n",
		loadAverage())
	home := filepath.Join(tmp, "home-notify")
	logDir := filepath.Join(home, "logs", "claude-code")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	rp, err := startRelay(bin, home)
	if err != nil {
		return nil, err
	}
	defer rp.stop()
	push, err := startPush()
	if err != nil {
		return nil, err
	}
	defer push.srv.Close()
	cfg, _ := json.Marshal(map[string]any{"relay": rp.base,
		"routes": []any{map[string]any{"name": "push", "type": "ntfy", "url": push.url + "/bench-topic"}}})
	conf := filepath.Join(home, "notify.json")
	if err := os.WriteFile(conf, cfg, 0o600); err != nil {
		return nil, err
	}
	nc, err := startNotifier(bin, home, conf)
	if err != nil {
		return nil, err
	}
	defer func() { nc.Process.Signal(syscall.SIGTERM); nc.Wait() }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sse := newWatcher(notifyPaced)
	var ready sync.WaitGroup
	ready.Add(1)
	if err := subscribe(ctx, rp.base, sse, &ready); err != nil {
		return nil, err
	}
	ready.Wait()

	f, err := os.OpenFile(filepath.Join(logDir, "bench.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	written := make([]time.Time, notifyPaced)
	for i := range notifyPaced {
		now := time.Now()
		line := attentionEvent(i, now)
		written[i] = now
		f.WriteString(line + "\n")
		time.Sleep(notifyPace)
	}
	push.awaitN(notifyPaced, 60*time.Second)
	waitOne(sse, 10*time.Second)
	var pushed []time.Duration
	for i, w := range written {
		if t, ok := push.when(fmt.Sprintf("nb%d", i)); ok {
			pushed = append(pushed, t.Sub(w))
		}
	}
	base := lat(sse, written)
	sortDur(pushed)
	sortDur(base)

	fmt.Printf("%-46s %10s %10s %10s %10s %8s\n", "figure", "p50", "p99", "SSE p50", "SSE p99", "p50 x")
	fmt.Printf("%-46s %10s %10s %10s %10s %7.2fx\n", fmt.Sprintf("hook write -> push receipt (%d/%d arrived)", len(pushed), notifyPaced),
		roundUs(pct(pushed, .5)), roundUs(pct(pushed, .99)), roundUs(pct(base, .5)), roundUs(pct(base, .99)),
		float64(pct(pushed, .5))/float64(max(pct(base, .5), 1)))
	var goals []goal
	if len(pushed) == notifyPaced {
		goals = append(goals, goal{name: "notify: hook write to push server receipt p50, loopback", value: float64(pct(pushed, .5)) / 1e6, limit: 50, below: true, unit: "ms"})
	} else {
		goals = append(goals, goal{name: "notify: hook write to push server receipt p50, loopback (requests lost)", missing: true})
	}

	// A whole hook process: from its start to the push, one at a time,
	// beside the process's own run (start to exit).
	var whole, runs []time.Duration
	for i := range notifyHooks {
		s := fmt.Sprintf("hp%d", i)
		payload := fmt.Sprintf(`{"session_id":%q,"cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"},"permission_suggestions":[]}`, s)
		cmd := exec.Command(bin, "claude-code")
		cmd.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=bench")
		cmd.Stdin = strings.NewReader(payload)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return goals, fmt.Errorf("hook: %w", err)
		}
		runs = append(runs, time.Since(start))
		deadline := time.Now().Add(10 * time.Second)
		for {
			if t, ok := push.when(s); ok {
				whole = append(whole, t.Sub(start))
				break
			}
			if time.Now().After(deadline) {
				break
			}
			select {
			case <-push.seen:
			case <-time.After(time.Until(deadline)):
			}
		}
	}
	sortDur(whole)
	sortDur(runs)
	fmt.Printf("%-46s %10s %10s %10s %10s %7.2fx\n", fmt.Sprintf("hook start -> push (%d/%d; beside: its run)", len(whole), notifyHooks),
		roundUs(pct(whole, .5)), roundUs(pct(whole, .99)), roundUs(pct(runs, .5)), roundUs(pct(runs, .99)),
		float64(pct(whole, .5))/float64(max(pct(runs, .5), 1)))
	b, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	fmt.Printf("errors logged during the run (failed pushes or records): %d\n", strings.Count(string(b), "\n"))
	return goals, nil
}

// runNotify is `bench -notify`: the notify figures alone.
func runNotify(bin string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "aep-bench-notify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	goals, err := notifyFigures(bin, tmp)
	printGoals(goals)
	return err
}
