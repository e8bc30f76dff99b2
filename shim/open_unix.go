//go:build unix

package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path without following a symbolic link at its last
// component (O_NOFOLLOW): a log, state or error file replaced by a link is
// refused, not written through to the link's target.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		return nil, fmt.Errorf("%s is a symbolic link: refused", path)
	}
	if err != nil {
		return nil, err
	}
	if err := regular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ownedPrivate checks that a folder is a real folder (not a link), owned by
// this user and closed to everyone else: the only kind of folder in a
// shared temporary directory that another user cannot have prepared.
func ownedPrivate(fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", fi.Name())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not %d", fi.Name(), st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (%v)", fi.Name(), fi.Mode().Perm())
	}
	return nil
}
