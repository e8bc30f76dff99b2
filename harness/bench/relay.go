package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// relaySubscribers is how many SSE subscribers the relay figures run with.
const relaySubscribers = 100

var relayAddr = regexp.MustCompile(`serving http://(\S+) `)

// relayProc is one `aep-hook relay` under measurement.
type relayProc struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

func startRelay(bin, home string, args ...string) (*relayProc, error) {
	// Without a tokens file, --open: the figures measure the bindings, not
	// the token check, and stay comparable with the runs before the user's
	// token became the relay's default identity.
	if !slices.Contains(args, "--tokens") {
		args = append([]string{"--open"}, args...)
	}
	cmd := exec.Command(bin, append([]string{"relay", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "AEP_HOME="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start relay: %w", err)
	}
	p := &relayProc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := relayAddr.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(p.done)
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a
		return p, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("relay did not start")
	}
}

func (p *relayProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
}

// rss is the relay's resident memory in bytes (Linux).
func (p *relayProc) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchEvent is one event line of session s at seq, its id carrying n
// (the index the watchers key their timings by).
func benchEvent(agent, s string, seq int, pad string) string {
	return fmt.Sprintf(`{"aep":"0.1","id":"b%d","type":"tool.completed","time":"2026-07-03T10:15:04.221Z","source":"aep://bench/agent/%s/session/%s","agent":%q,"session":%q,"seq":%d,"epoch":0,"capture":"metadata","data":{"tool":{"name":"Bash","call_id":"c%d"},"status":"success","duration_ms":12%s}}`,
		seq, agent, s, agent, s, seq, seq, pad)
}

var benchID = regexp.MustCompile(`"id":"b(\d+)"`)

// watcher counts what one reader (an SSE subscriber, the plain tail)
// receives and when.
type watcher struct {
	mu   sync.Mutex
	at   map[int]time.Time
	n    int
	want int
	full chan struct{}
}

func newWatcher(want int) *watcher {
	return &watcher{at: map[int]time.Time{}, want: want, full: make(chan struct{})}
}

func (w *watcher) saw(line []byte) {
	m := benchID.FindSubmatch(line)
	if m == nil {
		return
	}
	i, _ := strconv.Atoi(string(m[1]))
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.at[i]; dup {
		return
	}
	w.at[i] = now
	w.n++
	if w.n == w.want {
		close(w.full)
	}
}

// subscribe opens one SSE subscriber and feeds w.
func subscribe(ctx context.Context, base string, w *watcher, ready *sync.WaitGroup) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	ready.Done()
	go func() {
		defer resp.Body.Close()
		br := bufio.NewReaderSize(resp.Body, 1<<20)
		for {
			line, err := br.ReadSlice('\n')
			if bytes.HasPrefix(line, []byte("data: ")) {
				w.saw(line)
			}
			if err != nil && err != bufio.ErrBufferFull {
				return
			}
		}
	}()
	return nil
}

// plainTail follows one file with fsnotify, reading what is appended: the
// floor of any live follower of the record.
func plainTail(ctx context.Context, path string, w *watcher) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := fw.Add(filepath.Dir(path)); err != nil {
		fw.Close()
		return err
	}
	go func() {
		defer fw.Close()
		var f *os.File
		var rest []byte
		buf := make([]byte, 1<<20)
		read := func() {
			if f == nil {
				var err error
				if f, err = os.Open(path); err != nil {
					return
				}
			}
			for {
				n, err := f.Read(buf)
				rest = append(rest, buf[:n]...)
				for {
					i := bytes.IndexByte(rest, '\n')
					if i < 0 {
						break
					}
					w.saw(rest[:i])
					rest = rest[i+1:]
				}
				if err == io.EOF || n == 0 {
					return
				}
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-fw.Events:
				if ev.Name == path {
					read()
				}
			}
		}
	}()
	return nil
}

// relayFigures prints the relay's figures beside their
// baselines from the same run: hook-write-to-SSE latency and throughput
// with 100 subscribers against a plain tail of the same file, the
// ingest throughput over POST, resident memory at full buffers, and the
// events lost across kill -9 and a restart.
func relayFigures(bin, tmp string) ([]goal, error) {
	fmt.Println()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("== relay (%d SSE subscribers; baseline: a plain fsnotify tail of the same file; this machine is shared with other sessions, load average %s)\n",
		relaySubscribers, strings.Join(strings.Fields(string(load))[:3], " "))
	home := filepath.Join(tmp, "home-relay")
	logDir := filepath.Join(home, "logs", "claude-code")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	p, err := startRelay(bin, home)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	var goals []goal

	fmt.Printf("%-46s %10s %10s %10s %10s %8s\n", "figure", "p50", "p99", "tail p50", "tail p99", "p50 x")
	for _, n := range []int{1, relaySubscribers} {
		r, tl, err := latency(p.base, logDir, n)
		if err != nil {
			return nil, err
		}
		fmt.Printf("%-46s %10s %10s %10s %10s %7.2fx\n", fmt.Sprintf("hook write -> SSE delivery (%d subscribers)", n),
			roundUs(pct(r, .5)), roundUs(pct(r, .99)), roundUs(pct(tl, .5)), roundUs(pct(tl, .99)),
			float64(pct(r, .5))/float64(max(pct(tl, .5), 1)))
		if n == relaySubscribers {
			goals = append(goals, goal{name: "relay: hook write to SSE delivery p50, 100 subscribers", value: float64(pct(r, .5)) / 1e6, limit: 5, below: true, unit: "ms"})
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ready sync.WaitGroup
	subs := make([]*watcher, relaySubscribers)

	// Throughput: a burst written to a log, through the relay to every
	// subscriber, against the tail reading it.
	const burst = 20000
	for i := range subs {
		subs[i] = newWatcher(burst)
		ready.Add(1)
		if err := subscribe(ctx, p.base, subs[i], &ready); err != nil {
			return nil, err
		}
	}
	ready.Wait()
	burstPath := filepath.Join(logDir, "burst.jsonl")
	tail := newWatcher(burst)
	if err := plainTail(ctx, burstPath, tail); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for i := 0; i < burst; i++ {
		buf.WriteString(benchEvent("claude-code", "burst", i, "") + "\n")
	}
	start := time.Now()
	if err := os.WriteFile(burstPath, buf.Bytes(), 0o600); err != nil {
		return nil, err
	}
	tailDone := waitOne(tail, 120*time.Second)
	relayDone := waitAll(subs, 120*time.Second)
	tr := float64(burst) / tailDone.Sub(start).Seconds()
	rr := float64(burst) / relayDone.Sub(start).Seconds()
	fmt.Printf("%-46s %10.0f %10s %10.0f %10s %7.2fx\n", "log burst -> every subscriber, events/s", rr, "", tr, "", rr/tr)

	// Ingest over POST (NDJSON batches of 500) to the same subscribers.
	for i := range subs {
		subs[i] = newWatcher(burst)
	}
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	for i := range subs {
		ready.Add(1)
		if err := subscribe(ctx, p.base, subs[i], &ready); err != nil {
			return nil, err
		}
	}
	ready.Wait()
	start = time.Now()
	for i := 0; i < burst; i += 500 {
		var b bytes.Buffer
		for j := i; j < i+500; j++ {
			b.WriteString(benchEvent("remote", "post", j, "") + "\n")
		}
		req, _ := http.NewRequest("POST", p.base+"/events", &b)
		req.Header.Set("Content-Type", "application/x-ndjson")
		req.Header.Set("AEP-Version", "0.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	postDone := waitAll(subs, 120*time.Second)
	pr := float64(burst) / postDone.Sub(start).Seconds()
	fmt.Printf("%-46s %10.0f %10s %10.0f %10s %7.2fx\n", "POST /events -> every subscriber, events/s", pr, "", tr, "", pr/tr)
	cancel()
	p.stop()

	if _, err := relayMemory(bin, tmp); err != nil {
		return nil, err
	}
	lost, err := relayKill9(bin, tmp)
	if err != nil {
		return nil, err
	}
	goals = append(goals, goal{name: "relay: events lost across kill -9 and restart", value: float64(lost), limit: 0, below: true})
	return goals, nil
}

// latency writes paced events to a log, each seen by n subscribers and
// by the plain tail, and returns both sets of write-to-read delays.
func latency(base, logDir string, n int) (relay, tail []time.Duration, err error) {
	const paced = 400
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	session := fmt.Sprintf("lat%d", n)
	subs := make([]*watcher, n)
	var ready sync.WaitGroup
	for i := range subs {
		subs[i] = newWatcher(paced)
		ready.Add(1)
		if err := subscribe(ctx, base, subs[i], &ready); err != nil {
			return nil, nil, err
		}
	}
	ready.Wait()
	path := filepath.Join(logDir, session+".jsonl")
	tw := newWatcher(paced)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if err := plainTail(ctx, path, tw); err != nil {
		return nil, nil, err
	}
	written := make([]time.Time, paced)
	for i := 0; i < paced; i++ {
		line := benchEvent("claude-code", session, i, "")
		written[i] = time.Now()
		f.WriteString(line + "\n")
		time.Sleep(3 * time.Millisecond)
	}
	waitAll(append(subs, tw), 60*time.Second)
	for _, w := range subs {
		relay = append(relay, lat(w, written)...)
	}
	tail = lat(tw, written)
	sortDur(relay)
	sortDur(tail)
	return relay, tail, nil
}

func lat(w *watcher, written []time.Time) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Duration
	for i, t := range w.at {
		if i < len(written) {
			out = append(out, t.Sub(written[i]))
		}
	}
	return out
}

func sortDur(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

func roundUs(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }

// waitAll waits until every watcher has all it wants and returns when.
func waitAll(ws []*watcher, limit time.Duration) time.Time {
	deadline := time.After(limit)
	for _, w := range ws {
		select {
		case <-w.full:
		case <-deadline:
			return time.Now()
		}
	}
	return time.Now()
}

func waitOne(w *watcher, limit time.Duration) time.Time {
	select {
	case <-w.full:
	case <-time.After(limit):
	}
	return time.Now()
}

// relayMemory prints the relay's resident memory with 500 sessions at
// full buffers (1,000 events each, the defaults), beside the relay idle
// and the bytes of the events it holds.
func relayMemory(bin, tmp string) (int64, error) {
	if runtime.GOOS != "linux" {
		fmt.Println("relay memory: not measured here (reads /proc)")
		return 0, nil
	}
	p, err := startRelay(bin, filepath.Join(tmp, "home-relay-mem"), "--no-follow")
	if err != nil {
		return 0, err
	}
	defer p.stop()
	idle := p.rss()
	const sessions, depth = 500, 1000
	var held int64
	for s := 0; s < sessions; s++ {
		var b bytes.Buffer
		for i := 0; i < depth; i++ {
			line := benchEvent("remote", "m"+strconv.Itoa(s), i, "")
			held += int64(len(line))
			b.WriteString(line + "\n")
		}
		req, _ := http.NewRequest("POST", p.base+"/events", &b)
		req.Header.Set("Content-Type", "application/x-ndjson")
		req.Header.Set("AEP-Version", "0.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// At rest: the ingest's garbage collected and given back.
	time.Sleep(3 * time.Second)
	full := p.rss()
	fmt.Printf("%-46s %10s %10s %10s\n", "resident memory (at rest)", "full", "idle", "event bytes")
	fmt.Printf("%-46s %9.0fM %9.0fM %9.0fM  (%.2fx the bytes held)\n", "500 sessions x 1,000 events (full buffers)",
		float64(full)/(1<<20), float64(idle)/(1<<20), float64(held)/(1<<20), float64(full)/float64(held))
	return full, nil
}

// relayKill9 writes to a log and posts while the relay is killed with
// SIGKILL and restarted, then counts what the restarted relay serves:
// every log line and every acknowledged event must be there once.
func relayKill9(bin, tmp string) (int, error) {
	home := filepath.Join(tmp, "home-relay-kill")
	dir := filepath.Join(home, "logs", "claude-code")
	os.MkdirAll(dir, 0o700)
	p, err := startRelay(bin, home)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "k.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	logged := 0
	for i := 0; i < 600; i++ {
		if i == 300 {
			p.cmd.Process.Kill()
			<-p.done
			p.cmd.Wait()
		}
		line := benchEvent("claude-code", "k", logged, "")
		f.WriteString(line + "\n")
		want[line] = true
		logged++
		post := benchEvent("remote", "kpost", i, "")
		req, _ := http.NewRequest("POST", p.base+"/events", strings.NewReader(post))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("AEP-Version", "0.1")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 202 {
				want[post] = true
			}
		}
	}
	f.Close()
	p2, err := startRelay(bin, home)
	if err != nil {
		return 0, err
	}
	defer p2.stop()
	resp, err := http.Get(p2.base + "/stream?from=all&live=0")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	got := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			got[d]++
		}
	}
	lost, dup := 0, 0
	for l := range want {
		if got[l] == 0 {
			lost++
		}
	}
	for _, n := range got {
		if n > 1 {
			dup++
		}
	}
	fmt.Printf("kill -9 mid-stream and restart: %d events written or acknowledged, %d served after the restart, %d lost, %d served twice\n",
		len(want), len(got), lost, dup)
	return lost + dup, nil
}

// runRelay is `bench -relay`: the relay figures alone.
func runRelay(bin string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "aep-bench-relay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	goals, err := relayFigures(bin, tmp)
	fmt.Println()
	for _, g := range goals {
		g.print()
	}
	return err
}
