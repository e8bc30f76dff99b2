package deliver

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond until it holds or a generous guard expires (a hang
// guard, not a performance bound).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func allDelivered(c *collector, ids []string) func() bool {
	return func() bool {
		seen := map[string]bool{}
		for _, e := range c.received() {
			seen[e.ID] = true
		}
		for _, id := range ids {
			if !seen[id] {
				return false
			}
		}
		return true
	}
}

// TestFollowHelper is the `ship --follow` process the kill test re-execs;
// it does nothing in a normal run.
func TestFollowHelper(t *testing.T) {
	home := os.Getenv("AEP_DELIVER_HELPER_HOME")
	if home == "" {
		t.Skip("helper process only")
	}
	d, err := ParseDestination(os.Getenv("AEP_DELIVER_HELPER_DEST"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Shipper{Home: home, LogRoot: filepath.Join(home, "logs"), Dests: []Destination{d}, BatchEvents: 10, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	s.Follow(context.Background(), time.Hour)
}

// TestFollowKill9 kills `ship --follow` with SIGKILL while the collector
// holds a batch it has recorded but not acknowledged, then resumes: every
// id arrives at least once, in seq order per session.
func TestFollowKill9(t *testing.T) {
	if runtime.GOOS == "windows" || testing.Short() {
		t.Skip("re-exec kill test: unix, not -short")
	}
	c := newCollector(t)
	inBatch := make(chan struct{})
	var once sync.Once
	c.setFault(func(n int, batch []got, w http.ResponseWriter, r *http.Request) bool {
		if n != 3 {
			return false
		}
		c.mu.Lock()
		c.events = append(c.events, batch...) // taken in, never acknowledged
		c.mu.Unlock()
		once.Do(func() { close(inBatch) })
		<-r.Context().Done()
		return true
	})
	d := c.dest(t)
	s := newShipper(t, d)
	var ids []string
	for i, sess := range []string{"k1", "k2", "k3"} {
		ids = append(ids, writeLog(t, s.LogRoot, "codex", sess, 0, 25+i, nil)...)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFollowHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AEP_DELIVER_HELPER_HOME="+s.Home, "AEP_DELIVER_HELPER_DEST="+d.Raw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inBatch:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the follower never reached the third batch")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	c.setFault(nil)
	ids = append(ids, writeLog(t, s.LogRoot, "codex", "k1", 25, 5, nil)...)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Follow(ctx, time.Hour) }()
	waitFor(t, "resumed delivery", allDelivered(c, ids))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.check()
	wantDelivered(t, c.received(), ids)
	if len(c.received()) <= len(ids) {
		t.Logf("no redelivery observed (%d received)", len(c.received()))
	}
}

// TestFollowWithHooks: `ship --follow` runs while hooks of the same
// sessions append and deliver their own lines concurrently; fsnotify wakes
// the follower (the rescan is an hour) and order holds per session.
func TestFollowWithHooks(t *testing.T) {
	c := newCollector(t)
	d := c.dest(t)
	s := newShipper(t, d)
	s.LockWait = 0
	s.RetryFor = 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Follow(ctx, time.Hour) }()

	hook := *newShipper(t, d) // another process, same home
	hook.Home, hook.LogRoot, hook.Errors = s.Home, s.LogRoot, s.Errors
	hook.LockWait = 50 * time.Millisecond
	var mu sync.Mutex
	var ids []string
	seqNext := map[string]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			sess := "h" + strconv.Itoa(w%2)
			for i := range 10 {
				// One session's writers are serialised, as the emitter's
				// session lock serialises hook processes.
				mu.Lock()
				seq0 := seqNext[sess]
				seqNext[sess] += 3
				got := writeLog(t, s.LogRoot, "claude-code", sess, seq0, 3, nil)
				ids = append(ids, got...)
				mu.Unlock()
				if i%2 == 0 {
					hctx, hcancel := context.WithTimeout(context.Background(), DefaultHookDeadline)
					hook.Hook(hctx, "claude-code", []string{LogRel("claude-code", sess)})
					hcancel()
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "follow to catch up", allDelivered(c, ids))
	cancel()
	<-done
	c.check()
	wantDelivered(t, c.received(), ids)
}

// TestShipLogOffset: a pass reports the offset it delivered through, which
// follow records as delivered, so lines appended after a pass are never
// mistaken for delivered ones (they lie beyond the offset, whatever the
// file's size is by the time follow looks).
func TestShipLogOffset(t *testing.T) {
	c := newCollector(t)
	d := c.dest(t)
	s := newShipper(t, d)
	rel := LogRel("codex", "off")
	path := filepath.Join(s.LogRoot, filepath.FromSlash(rel))
	ids := writeLog(t, s.LogRoot, "codex", "off", 0, 3, nil)
	for round := range 2 {
		pr, err := s.ShipLog(context.Background(), d, rel)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		if pr.Offset != fi.Size() {
			t.Fatalf("round %d: offset %d, want the log's size %d", round, pr.Offset, fi.Size())
		}
		// A writer appends after the pass: the reported offset stays behind
		// the new lines.
		ids = append(ids, writeLog(t, s.LogRoot, "codex", "off", 3+2*round, 2, nil)...)
		if fi2, _ := os.Stat(path); pr.Offset >= fi2.Size() {
			t.Fatalf("round %d: offset %d covers lines appended after the pass", round, pr.Offset)
		}
	}
	if _, err := s.ShipLog(context.Background(), d, rel); err != nil {
		t.Fatal(err)
	}
	wantDelivered(t, c.received(), ids)
}
