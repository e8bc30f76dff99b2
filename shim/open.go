package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// openNoFollow opens path without following a symbolic link at its last
// component: a log, state or error file replaced by a link is refused, not
// written through to the link's target. Anything but a regular file is
// refused too.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, _, err := openNoFollowStat(path, flag, perm)
	return f, err
}

// openNoFollowStat is openNoFollow that also returns what the opened file
// is (its Stat), which the check for a regular file reads anyway.
func openNoFollowStat(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	err := linkFirst(path)
	var f *os.File
	if err == nil {
		f, err = os.OpenFile(path, flag|noFollow, perm)
	}
	if isLink(err) {
		return nil, nil, fmt.Errorf("%s is a symbolic link: refused", path)
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := regular(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// regular refuses anything but a regular file (a folder, a FIFO or a device
// where a log or state file should be).
func regular(f *os.File, path string) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	return fi, nil
}

// openDirFile opens the file at path without following a link there,
// creating its folder (0700) when it is missing.
func openDirFile(path string, flag int) (*os.File, error) {
	f, _, err := openDirFileStat(path, flag)
	return f, err
}

// openDirFileStat is openDirFile that also returns the opened file's Stat.
func openDirFileStat(path string, flag int) (*os.File, fs.FileInfo, error) {
	f, fi, err := openNoFollowStat(path, flag, 0o600)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, fi, err = openNoFollowStat(path, flag, 0o600)
		}
	}
	return f, fi, err
}

// FallbackDir is this user's folder in the temporary directory, for what
// cannot be written under the home (the error log of a hook whose home is
// unwritable). The temporary directory is shared: a folder there that is a
// link, belongs to someone else or is open to others may have been planted
// to redirect the writes, so it is refused.
func FallbackDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "aep-hook-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return dir, err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return dir, err
	}
	if err := ownedPrivate(fi); err != nil {
		return dir, fmt.Errorf("fallback folder refused: %w", err)
	}
	return dir, nil
}
