package follow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxCursor bounds a cursor file: a cursor is an id, not content.
const maxCursor = 4 << 10

// FileCursor keeps a cursor in one file, replaced atomically.
type FileCursor struct {
	Path string
}

// Load returns the saved cursor, "" when there is none.
func (c FileCursor) Load() (string, error) {
	b, err := os.ReadFile(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if len(b) > maxCursor {
		return "", fmt.Errorf("cursor file %s: %d bytes is not a cursor", c.Path, len(b))
	}
	return strings.TrimSpace(string(b)), nil
}

// Save replaces the saved cursor.
func (c FileCursor) Save(cursor string) error {
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Path), ".cursor-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(cursor + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), c.Path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
