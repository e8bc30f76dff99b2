//go:build !unix && !windows

package shim

import (
	"fmt"
	"io/fs"
	"os"
)

// openNoFollow opens path, refusing a symbolic link found there first.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
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

// ownedPrivate checks that a folder is a real folder.
func ownedPrivate(fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", fi.Name())
	}
	return nil
}
