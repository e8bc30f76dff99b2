//go:build !windows

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// execve replaces this process with path: same process, same streams, the
// agent or the shell waiting on it sees the full binary's exit status and
// signals go to it directly.
func execve(path string, argv, env []string) error {
	return syscall.Exec(path, argv, env)
}

// ownedPrivately reports whether st belongs to this user and no one else
// may write it.
func ownedPrivately(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid() && st.Mode().Perm()&0o022 == 0
}
