package deliver

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Cursor is how far one destination has been delivered in one log file.
type Cursor struct {
	// Offset is the byte offset just past the last line delivered (or put
	// aside, or skipped under backpressure). Always at a line boundary.
	Offset int64 `json:"offset"`
	// Head fingerprints the file's first line, so a log that was replaced
	// (rotated, or truncated and rewritten) is noticed and restarted from
	// zero rather than resumed at a stale offset.
	Head string `json:"head,omitempty"`
	// Events counts the lines delivered past by this cursor.
	Events int64 `json:"events"`
	// Updated is when the cursor last moved (RFC 3339).
	Updated string `json:"updated,omitempty"`
}

// headBytes bounds the fingerprinted prefix of a log.
const headBytes = 4096

// fingerprint returns the digest of f's first line (up to headBytes), or
// "" when the file has no complete first line yet.
func fingerprint(f io.ReaderAt) (string, error) {
	buf := make([]byte, headBytes)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return "", err
	}
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	} else if n < headBytes {
		return "", nil
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:12]), nil
}

// cursorPaths names the cursor file and the lock of (destination, log),
// where rel is the log's path relative to the log root.
func cursorPaths(home string, d Destination, rel string) (cursor, lock string) {
	base := filepath.Join(home, "cursors", d.Key(), filepath.FromSlash(rel))
	base = trimExt(base)
	return base + ".json", base + ".lock"
}

func trimExt(p string) string {
	if ext := filepath.Ext(p); ext == ".jsonl" {
		return p[:len(p)-len(ext)]
	}
	return p
}

// loadCursor reads a cursor; a missing or unreadable one starts at zero
// (redelivery, never loss).
func loadCursor(path string) Cursor {
	var c Cursor
	b, err := os.ReadFile(path)
	if err != nil {
		return Cursor{}
	}
	if json.Unmarshal(b, &c) != nil || c.Offset < 0 {
		return Cursor{}
	}
	return c
}

// saveCursor replaces the cursor file atomically.
func saveCursor(path string, c Cursor, now time.Time) error {
	c.Updated = now.UTC().Format(time.RFC3339Nano)
	return writeJSONAtomic(path, c)
}

// writeJSONAtomic replaces path with v's JSON via a temporary file and a
// rename, so a crash leaves the old or the new content, never a torn one.
func writeJSONAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cursor dir: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// resume returns where delivery of the open log f (of size size) starts:
// the cursor's offset when the file is the one the cursor was taken on,
// else zero (replaced or truncated: the new content is shipped whole).
func resume(c Cursor, f io.ReaderAt, size int64) (off int64, head string, err error) {
	head, err = fingerprint(f)
	if err != nil {
		return 0, "", err
	}
	if c.Offset == 0 || c.Offset > size || c.Head != head {
		return 0, head, nil
	}
	return c.Offset, head, nil
}

// lineReader yields whole lines of a log between two offsets; a final
// fragment without its newline is left for later.
type lineReader struct {
	r   *bufio.Reader
	off int64 // offset of the next line
	max int   // longest line accepted whole
}

func newLineReader(f io.ReaderAt, from, to int64, maxLine int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(io.NewSectionReader(f, from, to-from), 64<<10), off: from, max: maxLine}
}

// errTooLong says a line exceeds the reader's bound; it is skipped whole.
var errTooLong = errors.New("line too long")

// next returns the next complete line (with its newline) and its offset.
// io.EOF means no complete line remains. A line longer than max is
// returned as errTooLong with its extent consumed.
func (lr *lineReader) next() (line []byte, at int64, err error) {
	at = lr.off
	var buf []byte
	long := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !long {
			if len(buf)+len(chunk) > lr.max {
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			lr.off += int64(len(chunk))
			if long {
				return nil, at, errTooLong
			}
			return buf, at, nil
		case errors.Is(err, bufio.ErrBufferFull):
			lr.off += int64(len(chunk))
			continue
		case errors.Is(err, io.EOF):
			lr.off = at // an unterminated tail is not a line yet
			return nil, at, io.EOF
		default:
			return nil, at, err
		}
	}
}
