package deliver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// SeekEnd starts d's cursor in the log rel at the log's end (just past its
// last complete line) when d has no cursor there yet, and returns the
// cursor's offset either way. A follower that serves only what is new
// from its first run on (the relay, which reads a log's recent tail
// itself) starts there instead of shipping the whole history; from then
// on it resumes from the cursor like any destination.
func (s *Shipper) SeekEnd(ctx context.Context, d Destination, rel string) (int64, error) {
	curPath, lockP := cursorPaths(s.Home, d, rel)
	if _, err := os.Stat(curPath); err == nil {
		return loadCursor(curPath).Offset, nil
	}
	l, err := s.lock(ctx, lockP)
	if err != nil {
		return 0, err
	}
	defer l.unlock()
	if _, err := os.Stat(curPath); err == nil {
		return loadCursor(curPath).Offset, nil
	}
	f, err := os.Open(filepath.Join(s.LogRoot, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat log: %w", err)
	}
	end, err := lastLineEnd(f, fi.Size())
	if err != nil {
		return 0, fmt.Errorf("read log: %w", err)
	}
	head, err := fingerprint(f)
	if err != nil {
		return 0, fmt.Errorf("read log: %w", err)
	}
	if err := saveCursor(curPath, Cursor{Offset: end, Head: head}, s.now()); err != nil {
		return 0, fmt.Errorf("save cursor: %w", err)
	}
	return end, nil
}

// lastLineEnd is the offset just past the last newline at or before size.
func lastLineEnd(f io.ReaderAt, size int64) (int64, error) {
	const chunk = 64 << 10
	for pos := size; pos > 0; {
		n := min(int64(chunk), pos)
		pos -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}
