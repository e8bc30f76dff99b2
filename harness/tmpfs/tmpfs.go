// Package tmpfs mounts small tmpfs file systems for tests that need a disk
// to fill up (ENOSPC) for real.
package tmpfs

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// Mount mounts a tmpfs of size bytes at a new temporary folder, unmounted
// when the test ends, and returns the folder. Off Linux, or not as root, the
// test is skipped.
func Mount(t testing.TB, size int) string {
	t.Helper()
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("mounting a small tmpfs takes Linux and root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}
