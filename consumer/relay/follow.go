package relay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/consumer/relay/store"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// local is the delivery destination standing for the relay itself: the
// shipper's cursors for it say how far the relay has read each log.
var local = deliver.Destination{Kind: deliver.AEP, Raw: "local"}

// maxLine bounds one event line read from a log or the store.
const maxLine = 64 << 20

// shipper is the delivery machinery pointed at the relay: cursors and
// put-aside lines under Home/relay, the logs under Home/logs.
func (s *Server) shipper() *deliver.Shipper {
	sh := &deliver.Shipper{Home: s.dir, LogRoot: filepath.Join(s.opts.Home, "logs"), Dests: []deliver.Destination{local},
		Errors: s.errs, MaxLine: maxLine}
	sh.SetSender(local, logSender{s})
	return sh
}

// follow delivers the local logs to the hub as they grow, from each log's
// cursor, until ctx ends.
func (s *Server) follow(ctx context.Context) error {
	return s.shipper().Follow(ctx, 0)
}

// logSender ingests log lines; a line that is not an admissible event is
// refused, and the shipper puts it aside (Home/relay/rejected) and goes on.
type logSender struct{ s *Server }

func (l logSender) Send(_ context.Context, lines [][]byte) error {
	evs := make([]*event.Event, 0, len(lines))
	for i, line := range lines {
		ev, err := event.Parse(line)
		if err != nil {
			l.s.audit.record(Audit{Kind: auditEventRejected, Binding: "log", Code: "invalid-event", Reason: err.Error()})
			return &deliver.SendError{Class: deliver.Reject, Index: i, Detail: err.Error()}
		}
		evs = append(evs, ev)
	}
	_, idx, err := l.s.hub.ingest(evs, fromLog)
	if errors.Is(err, errConflict) {
		l.s.audit.record(eventAudit(Audit{Kind: auditEventRejected, Binding: "log", Code: "invalid-event", Reason: err.Error()}, evs[idx]))
		return &deliver.SendError{Class: deliver.Reject, Index: idx, Detail: err.Error()}
	}
	return err
}

func shimFailure(err error) shim.Failure {
	return shim.Failure{Stage: "relay", Error: err.Error()}
}

// loadStats is what the start-up refill read.
type loadStats struct{ files, events int }

// refill starts the relay where the last one stopped: every local log the
// relay has no cursor in yet gets one at its end (history before the
// relay's first run is not re-read, only its tail below), then the most
// recently written session files of the logs and of the store (at most
// MaxSessions) have their last Buffer events loaded into the replay
// buffers, oldest file first, so recency survives the restart. A file
// that holds more than that marks its stream truncated, so a resume from
// before what was loaded reports the gap.
func (s *Server) refill() error {
	var files []string
	if !s.opts.NoFollow {
		sh := s.shipper()
		logs, err := sh.Logs()
		if err != nil {
			return err
		}
		for _, rel := range logs {
			if _, err := sh.SeekEnd(context.Background(), local, rel); err != nil {
				return err
			}
			files = append(files, filepath.Join(sh.LogRoot, filepath.FromSlash(rel)))
		}
	}
	storeRoot := s.store.Root
	filepath.WalkDir(storeRoot, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			files = append(files, p)
		}
		return nil
	})
	type dated struct {
		path string
		mod  time.Time
	}
	var ds []dated
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			ds = append(ds, dated{p, fi.ModTime()})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].mod.Before(ds[j].mod) })
	if len(ds) > s.opts.MaxSessions {
		ds = ds[len(ds)-s.opts.MaxSessions:]
	}
	for _, d := range ds {
		n, err := s.loadTail(d.path)
		if err != nil {
			s.errs.Record(shimFailure(err))
			continue
		}
		s.loaded.files++
		s.loaded.events += n
	}
	return nil
}

// loadTail buffers the last Buffer events of one file.
func (s *Server) loadTail(path string) (int, error) {
	lines, more, err := store.Tail(path, s.opts.Buffer+1, maxLine, min(s.opts.MaxBytes, 64<<20))
	if err != nil {
		return 0, err
	}
	var floor *event.Event
	if len(lines) > s.opts.Buffer {
		floor, _ = event.Parse(lines[0])
		lines = lines[1:]
		more = true
	}
	n := 0
	var first *event.Event
	for _, l := range lines {
		ev, err := event.Parse(l)
		if err != nil {
			continue
		}
		if first == nil && ev.Sequenced {
			first = ev
		}
		s.hub.load(ev)
		n++
	}
	if more && first != nil {
		f := event.Pos{Epoch: first.Pos.Epoch, Seq: first.Pos.Seq - 1}
		if floor != nil && floor.Sequenced && floor.Source == first.Source && floor.Session == first.Session {
			f = floor.Pos
		}
		s.hub.mu.Lock()
		s.hub.bufs.Truncate(first.Source, first.Session, f)
		s.hub.mu.Unlock()
	}
	return n, nil
}
