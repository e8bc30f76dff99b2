package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
)

// fileEmitter is an emitter over a FileStore and JSONL log under home.
func fileEmitter(home string, wait time.Duration) (*Emitter, *FileStore, *JSONL) {
	log := &JSONL{Root: filepath.Join(home, "logs"), LockWait: wait}
	fs := &FileStore{Dir: filepath.Join(home, "state"), Log: log, LockWait: wait, Now: steppingClock()}
	return testEmitter(log, fs), fs, log
}

// steppingClock is a clock that moves a second on at every reading, from
// 1,800,000,000 s.
func steppingClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.Unix(1_800_000_000+n.Add(1)-1, 0) }
}

const moment = `{"session":"s","drafts":[{"Type":"progress.status"}]}`

// logPositions reads a log, failing on any line that is not an intact
// event, and returns the positions in file order.
func logPositions(t *testing.T, path string) []Position {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("log ends inside a line: %q", b[max(0, len(b)-40):])
	}
	var ps []Position
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var e struct{ Seq, Epoch *int64 }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq == nil || e.Epoch == nil {
			t.Fatalf("line %d is not an event: %.80q", i+1, l)
		}
		ps = append(ps, Position{*e.Epoch, *e.Seq})
	}
	return ps
}

// distinct fails when two events share a position or one is negative.
func distinct(t *testing.T, ps []Position) {
	t.Helper()
	seen := map[Position]bool{}
	for _, p := range ps {
		if seen[p] || p.Epoch < 0 || p.Seq < 0 {
			t.Errorf("position %v reused or negative in %v", p, ps)
		}
		seen[p] = true
	}
}

// increasing fails unless positions strictly increase in file order.
func increasing(t *testing.T, ps []Position) {
	t.Helper()
	distinct(t, ps)
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if b.Epoch < a.Epoch || b.Epoch == a.Epoch && b.Seq <= a.Seq {
			t.Errorf("position %v after %v", b, a)
		}
	}
}

// TestStateRolledBack: a state file restored to an earlier content (here
// the very first) used to hand out (0,0) again; the store sees the log
// moved on without it and starts a new epoch.
func TestStateRolledBack(t *testing.T) {
	home := t.TempDir()
	e, fs, log := fileEmitter(home, 0)
	for range 3 {
		emit(t, e, moment)
	}
	_, statePath := fs.paths("test-agent", "s")
	os.WriteFile(statePath, []byte(`{"epoch":0,"next":0,"refs":{},"table":{}}`), 0o600)
	emit(t, e, moment)
	ps := logPositions(t, log.Path("test-agent", "s"))
	increasing(t, ps)
	if ps[3].Epoch <= ps[2].Epoch || ps[3].Seq != 0 {
		t.Errorf("after the rollback: %v, want a new epoch after %v", ps[3], ps[2])
	}
}

// TestStateEpochAtMax: positions never wrap: a seq counter at its maximum
// moves to the next epoch, and an epoch at its maximum (in the state, or in
// the log a lost state recovers from) refuses the event rather than wrap
// to a negative or reused position.
func TestStateEpochAtMax(t *testing.T) {
	home := t.TempDir()
	e, fs, log := fileEmitter(home, 0)
	_, statePath := fs.paths("test-agent", "s")
	os.MkdirAll(filepath.Dir(statePath), 0o700)
	write := func(epoch, next int64) {
		os.WriteFile(statePath, fmt.Appendf(nil, `{"epoch":%d,"next":%d,"log":%d}`, epoch, next, log.Size("test-agent", "s")), 0o600)
	}
	write(7, math.MaxInt64-1)
	emit(t, e, moment) // (7, max-1)
	emit(t, e, moment) // the counter is spent: (8, 0)
	write(math.MaxInt64, math.MaxInt64-1)
	emit(t, e, moment) // (max, max-1)
	if _, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(moment)}); !errors.Is(err, ErrExhausted) {
		t.Errorf("epoch and seq at their maximum: %v, want ErrExhausted", err)
	}
	os.Remove(statePath) // recovery from a log whose last epoch is the maximum
	if _, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(moment)}); !errors.Is(err, ErrExhausted) {
		t.Errorf("recovering after an epoch at its maximum: %v, want ErrExhausted", err)
	}
	ps := logPositions(t, log.Path("test-agent", "s"))
	want := []Position{{7, math.MaxInt64 - 1}, {8, 0}, {math.MaxInt64, math.MaxInt64 - 1}}
	if len(ps) != len(want) {
		t.Fatalf("positions %v, want %v", ps, want)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("position %d: %v, want %v", i, ps[i], want[i])
		}
	}
}

// plantTarget writes a file a planted link will point at.
func plantTarget(t *testing.T, dir string) string {
	t.Helper()
	target := filepath.Join(dir, ".bashrc")
	if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return target
}

// untouched fails when a planted link's target was written through.
func untouched(t *testing.T, target string) {
	t.Helper()
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// TestStateUnusable: a folder, or a link, where the state file should be
// used to lose every event; now the event is written without the lock in a
// fresh epoch, the link's target untouched.
func TestStateUnusable(t *testing.T) {
	for _, kind := range []string{"folder", "link"} {
		t.Run(kind, func(t *testing.T) {
			home := t.TempDir()
			e, fs, log := fileEmitter(home, 0)
			emit(t, e, moment)
			_, statePath := fs.paths("test-agent", "s")
			os.Remove(statePath)
			target := plantTarget(t, home)
			if kind == "folder" {
				os.Mkdir(statePath, 0o700)
			} else if err := os.Symlink(target, statePath); err != nil {
				t.Skip("no symlinks:", err)
			}
			res := emit(t, e, moment)
			if res.Unlocked == nil {
				t.Error("the unusable state is not reported")
			}
			ps := logPositions(t, log.Path("test-agent", "s"))
			increasing(t, ps)
			if len(ps) != 2 || ps[1].Epoch <= ps[0].Epoch || ps[1].Epoch < 1_800_000_000_000_000 {
				t.Errorf("positions %v, want a later clock-seeded epoch for the second", ps)
			}
			untouched(t, target)
		})
	}
}

// TestLogLinkRefused: a log replaced by a link is refused (the event is
// counted lost), never written through to the link's target.
func TestLogLinkRefused(t *testing.T) {
	home := t.TempDir()
	e, _, log := fileEmitter(home, 0)
	emit(t, e, moment)
	target := plantTarget(t, home)
	p := log.Path("test-agent", "s")
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Skip("no symlinks:", err)
	}
	_, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(moment)})
	if Lost(err, 1) != 1 {
		t.Errorf("err %v, want one event lost", err)
	}
	untouched(t, target)
}

// TestLogTornTail: a log left ending inside a line (a writer killed
// mid-write) gets a newline before the next event, so the event is intact.
func TestLogTornTail(t *testing.T) {
	home := t.TempDir()
	e, _, log := fileEmitter(home, 0)
	emit(t, e, moment)
	p := log.Path("test-agent", "s")
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"aep":"0.1","id":"01J`)
	f.Close()
	emit(t, e, moment)
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || !json.Valid([]byte(lines[2])) || json.Valid([]byte(lines[1])) {
		t.Errorf("log %q", b)
	}
}

// watchStore marks when its session lock is held.
type watchStore struct {
	*FileStore
	held atomic.Bool
}

func (w *watchStore) Locked(agent, session string, fn func(*Tx) error) error {
	return w.FileStore.Locked(agent, session, func(tx *Tx) error {
		w.held.Store(true)
		defer w.held.Store(false)
		return fn(tx)
	})
}

// TestMapOutsideLock: a heavy moment is mapped (and its events gated and
// encoded) before the session's lock is taken, so it does not hold up the
// session's other hooks; the lock covers only adopting the work.
func TestMapOutsideLock(t *testing.T) {
	home := t.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs")}
	ws := &watchStore{FileStore: &FileStore{Dir: filepath.Join(home, "state"), Log: log}}
	e := testEmitter(log, ws)
	v := scripted()
	inLock := 0
	mapFn := v.Map
	v.Map = func(m mapping.Moment, st *mapping.State) ([]mapping.Draft, error) {
		if ws.held.Load() {
			inLock++
		}
		return mapFn(m, st)
	}
	heavyMoment := []byte(`{"session":"s","pad":"` + strings.Repeat("p", heavyMoments) + `","drafts":[{"Type":"progress.status"}]}`)
	for range 5 {
		if _, err := e.Handle(v, mapping.Moment{Raw: heavyMoment}); err != nil {
			t.Fatal(err)
		}
	}
	if inLock != 0 {
		t.Errorf("%d of 5 moments were mapped under the session lock", inLock)
	}
	increasing(t, logPositions(t, log.Path("test-agent", "s")))
}
