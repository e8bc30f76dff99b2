package deliver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/aep-hook/aep-hook/shim"
)

// DefaultRescan is how often Follow rescans the log root as a safety net
// under its file-system notifications.
const DefaultRescan = 10 * time.Second

// worker follows one destination: a set of logs with news, shipped in turn.
type worker struct {
	d       Destination
	mu      sync.Mutex
	pending map[string]bool
	seen    map[string]int64 // log size when last fully delivered
	wake    chan struct{}
}

func (w *worker) mark(rel string) {
	w.mu.Lock()
	w.pending[rel] = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// markIfChanged marks rel unless it is known delivered at this size.
func (w *worker) markIfChanged(rel string, size int64) {
	w.mu.Lock()
	s, ok := w.seen[rel]
	w.mu.Unlock()
	if !ok || s != size {
		w.mark(rel)
	}
}

func (w *worker) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for rel := range w.pending {
		out = append(out, rel)
	}
	clear(w.pending)
	return out
}

// Follow keeps delivering as logs grow, until ctx ends or every
// destination has failed fatally: file-system notifications on the log
// folders wake it, and a rescan every rescan (0: DefaultRescan) catches
// anything they missed. It delivers the existing backlog first. Each
// destination has its own worker, so a slow one does not hold up another.
func (s *Shipper) Follow(ctx context.Context, rescan time.Duration) error {
	if rescan <= 0 {
		rescan = DefaultRescan
	}
	if err := os.MkdirAll(s.LogRoot, 0o700); err != nil {
		return fmt.Errorf("log root: %w", err)
	}
	workers := make([]*worker, len(s.Dests))
	for i, d := range s.Dests {
		workers[i] = &worker{d: d, pending: map[string]bool{}, seen: map[string]int64{}, wake: make(chan struct{}, 1)}
	}
	markAll := func(rel string, size int64) {
		for _, w := range workers {
			w.markIfChanged(rel, size)
		}
	}
	scan := func() {
		logs, _ := s.Logs()
		for _, rel := range logs {
			if fi, err := os.Stat(filepath.Join(s.LogRoot, filepath.FromSlash(rel))); err == nil {
				markAll(rel, fi.Size())
			}
		}
	}

	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		s.record(shim.Failure{Stage: "deliver", Error: fmt.Sprintf("follow: no file notifications (%v); rescanning every %s", err, rescan)})
	} else {
		defer watcher.Close()
		s.watchTree(watcher)
	}
	scan()

	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() { errs[i] = s.runWorker(ctx, w) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var events chan fsnotify.Event
	var werrs chan error
	if watcher != nil {
		events, werrs = watcher.Events, watcher.Errors
	}
	tick := time.NewTicker(rescan)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return errors.Join(errs...)
		case <-ctx.Done():
			<-done
			return nil
		case <-tick.C:
			if watcher != nil {
				s.watchTree(watcher) // pick up folders created while unwatched
			}
			scan()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			s.onEvent(watcher, ev, markAll)
		case err, ok := <-werrs:
			if !ok {
				werrs = nil
				continue
			}
			s.record(shim.Failure{Stage: "deliver", Error: fmt.Sprintf("follow: file notifications: %v; the rescan covers", err)})
		}
	}
}

// watchTree watches the log root and every agent folder in it.
func (s *Shipper) watchTree(w *fsnotify.Watcher) {
	w.Add(s.LogRoot)
	ents, _ := os.ReadDir(s.LogRoot)
	for _, e := range ents {
		if e.IsDir() {
			w.Add(filepath.Join(s.LogRoot, e.Name()))
		}
	}
}

func (s *Shipper) onEvent(w *fsnotify.Watcher, ev fsnotify.Event, mark func(string, int64)) {
	if ev.Op&(fsnotify.Create|fsnotify.Write) == 0 {
		return
	}
	fi, err := os.Stat(ev.Name)
	if err != nil {
		return
	}
	if fi.IsDir() {
		if filepath.Dir(ev.Name) == filepath.Clean(s.LogRoot) {
			w.Add(ev.Name)
			ents, _ := os.ReadDir(ev.Name)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".jsonl") {
					if info, err := e.Info(); err == nil {
						mark(filepath.Base(ev.Name)+"/"+e.Name(), info.Size())
					}
				}
			}
		}
		return
	}
	if !strings.HasSuffix(ev.Name, ".jsonl") {
		return
	}
	rel, err := filepath.Rel(s.LogRoot, ev.Name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	mark(filepath.ToSlash(rel), fi.Size())
}

// runWorker ships the logs marked for w until ctx ends or the destination
// fails fatally.
func (s *Shipper) runWorker(ctx context.Context, w *worker) error {
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		s.Flush(fctx, w.d, false)
		cancel()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		}
		for _, rel := range w.take() {
			pr, err := s.ShipLog(ctx, w.d, rel)
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				// Delivered up to the cursor, not up to the file's size
				// now: a writer may have appended since the pass ended,
				// and its notification must not be taken for old news.
				w.mu.Lock()
				w.seen[rel] = pr.Offset
				w.mu.Unlock()
				continue
			}
			var busy errBusy
			if !errors.As(err, &busy) && classOf(err) == Fatal {
				s.record(shim.Failure{Stage: "deliver", Error: fmt.Sprintf("follow: stopped delivering to %s: %v", w.d.Raw, err)})
				return fmt.Errorf("%s: %w", w.d.Raw, err)
			}
			// Busy (another shipper has it) or still failing: come back.
			w.mu.Lock()
			w.pending[rel] = true
			w.mu.Unlock()
			if retry == nil {
				retry = time.AfterFunc(s.backoff(0, err), func() {
					select {
					case w.wake <- struct{}{}:
					default:
					}
				})
			} else {
				retry.Reset(s.backoff(0, err))
			}
		}
		fctx, cancel := context.WithTimeout(ctx, time.Second)
		s.Flush(fctx, w.d, false)
		cancel()
	}
}
