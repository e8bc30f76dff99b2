//go:build unix

package installer

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// noFollow refuses a link at the last component when creating a backup.
const noFollow = syscall.O_NOFOLLOW

// ownerOf returns the uid and gid of fi.
func ownerOf(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// sameOwner gives f the owner and group of like when they are not already
// its own (a file install creates belongs to whoever runs it). Only root
// can give a file away: anyone else editing a file owned by another user
// is refused, since the edit would take the file from its owner.
func sameOwner(f *os.File, like fs.FileInfo) error {
	uid, gid, ok := ownerOf(like)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if u, g, ok := ownerOf(fi); ok && u == uid && g == gid {
		return nil
	}
	if err := f.Chown(uid, gid); err != nil {
		if u, _, _ := ownerOf(fi); u == uid {
			return nil // our own file in another group we do not belong to: keep ours
		}
		return fmt.Errorf("cannot keep the owner (uid %d) of %s: %w; run install as that user", uid, like.Name(), err)
	}
	return nil
}

// chownLike gives path like's owner when install runs as root; anyone
// else's folders are their own already.
func chownLike(path string, like fs.FileInfo) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, ok := ownerOf(like)
	if !ok {
		return nil
	}
	return os.Lchown(path, uid, gid)
}
