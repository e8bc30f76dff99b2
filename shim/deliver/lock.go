package deliver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/shim"
)

// fileLock is a held cross-process lock.
type fileLock struct{ f *os.File }

// errBusy says another shipper holds a lock and the caller should skip.
type errBusy struct{ path string }

func (e errBusy) Error() string { return "busy: " + e.path }

// lockPath takes the exclusive lock at path, polling until ctx ends; a
// lock that stays held past ctx gives errBusy. Advisory locks cannot be
// waited on with a deadline portably, hence the poll.
func lockPath(ctx context.Context, path string) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	wait := time.Millisecond
	for {
		ok, err := shim.TryLockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return &fileLock{f: f}, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, errBusy{path}
		case <-t.C:
		}
		wait = min(wait*2, 20*time.Millisecond)
	}
}

// unlock releases the lock.
func (l *fileLock) unlock() {
	if l == nil || l.f == nil {
		return
	}
	shim.UnlockFile(l.f)
	l.f.Close()
	l.f = nil
}
