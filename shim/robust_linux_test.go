//go:build linux

package shim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aep-hook/aep-hook/harness/tmpfs"
)

// freeBytes is what a file system has left.
func freeBytes(t *testing.T, dir string) int {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Bavail) * int(st.Bsize)
}

// TestLogFullDisk: a write that runs out of space partway is cut back to
// the last complete line and its events are counted lost; once space
// returns the next event starts on a fresh line (it used to be glued onto
// the fragment, unparseable and unrecorded).
func TestLogFullDisk(t *testing.T) {
	dir := tmpfs.Mount(t, 256<<10)
	log := &JSONL{Root: dir}
	line := func(n int) []byte {
		return append(fmt.Appendf(nil, `{"seq":%d,"epoch":0,"pad":"%s"}`, n, strings.Repeat("p", 2000)), '\n')
	}
	if err := log.Write("a", "s", [][]byte{line(0)}); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	os.WriteFile(filler, bytes.Repeat([]byte("f"), freeBytes(t, dir)-16<<10), 0o600)
	var batch [][]byte
	for i := 1; i <= 12; i++ { // 24 KB: more than is left
		batch = append(batch, line(i))
	}
	before := log.Size("a", "s")
	err := log.Write("a", "s", batch)
	var le *LostError
	if !errors.As(err, &le) || le.Lost != 12 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want 12 lines lost to ENOSPC", err)
	}
	if got := log.Size("a", "s"); got != before {
		t.Errorf("log is %d bytes after the failed write, want it cut back to %d", got, before)
	}
	os.Remove(filler)
	if err := log.Write("a", "s", [][]byte{line(13)}); err != nil {
		t.Fatal(err)
	}
	if ps := logPositions(t, log.Path("a", "s")); len(ps) != 2 || ps[1].Seq != 13 {
		t.Errorf("positions %v", ps)
	}
}
