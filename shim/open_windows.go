//go:build windows

package shim

import (
	"fmt"
	"io/fs"
	"os"
)

// openNoFollow opens path, refusing a symbolic link (or other reparse
// point) at its last component: checked before opening, as Windows has no
// O_NOFOLLOW.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: refused", path)
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := regular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ownedPrivate checks that a folder is a real folder, not a link. The
// temporary folder is per user on Windows.
func ownedPrivate(fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", fi.Name())
	}
	return nil
}
