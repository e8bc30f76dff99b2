//go:build unix

package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// noFollow refuses a link at a path's last component when opening it (and
// a FIFO planted there does not block the open).
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// linkFirst is nothing here: O_NOFOLLOW does the refusing.
func linkFirst(string) error { return nil }

// isLink reports the error an O_NOFOLLOW open gives for a link.
func isLink(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) }

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

// keepOpen says whether a long-running emitter may keep its sessions'
// files open between writes (keptFiles): here a kept descriptor hinders
// nobody, since removing or renaming an open file works.
const keepOpen = true
